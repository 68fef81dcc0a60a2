package synth

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/english"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/phi"
)

func collect(t *testing.T, opt Options) []Patient {
	t.Helper()
	var out []Patient
	if err := Generate(opt, func(p Patient) error { out = append(out, p); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateIsValidAndDeterministic(t *testing.T) {
	opt := Options{Patients: 200, Seed: 7}
	a, b := collect(t, opt), collect(t, opt)
	if len(a) != 200 || a[0].ID != "100" || a[199].ID != "299" {
		t.Fatalf("%d patients, ids %s..%s", len(a), a[0].ID, a[len(a)-1].ID)
	}
	types := map[string]int{}
	labels := map[string]int{}
	for i, p := range a {
		if len(p.Docs) < 2 || len(p.Docs) > 5 {
			t.Errorf("patient %s: %d notes, want 2-5", p.ID, len(p.Docs))
		}
		for k, d := range p.Docs {
			if err := d.Validate(false); err != nil {
				t.Fatalf("%s: %v", d.ID, err)
			}
			if d.ID != fmt.Sprintf("%s-%02d", p.ID, k+1) || d.RecordOrder != k+1 || d.Patient != p.ID {
				t.Errorf("document %s: order %d patient %s", d.ID, d.RecordOrder, d.Patient)
			}
			if k > 0 && !d.Created.After(p.Docs[k-1].Created) {
				t.Errorf("%s: dates do not move forward", d.ID)
			}
			for _, s := range d.Spans {
				if _, _, err := phi.Normalize(phi.I2B2(), s.Category, s.Type); err != nil {
					t.Errorf("%s: %v", d.ID, err)
				}
				labels[s.Type]++
			}
			types[d.NoteType]++
			if d.Text != b[i].Docs[k].Text || fmt.Sprint(d.Spans) != fmt.Sprint(b[i].Docs[k].Spans) {
				t.Fatalf("%s differs between two runs with the same seed", d.ID)
			}
		}
	}
	if len(types) != 4 {
		t.Errorf("note types %v", types)
	}
	for _, typ := range []string{"PATIENT", "DOCTOR", "USERNAME", "PROFESSION", "HOSPITAL", "ORGANIZATION", "STREET", "CITY",
		"STATE", "ZIP", "AGE", "DATE", "PHONE", "FAX", "MEDICALRECORD", "HEALTHPLAN", "ACCOUNT"} {
		if labels[typ] == 0 {
			t.Errorf("no %s span in 200 patients", typ)
		}
	}
	other := collect(t, Options{Patients: 1, Seed: 8})
	if other[0].Docs[0].Text == a[0].Docs[0].Text {
		t.Error("seeds 7 and 8 gave the same first note")
	}
}

// TestPHIIsConsistentAcrossRecords checks the longitudinal property: the
// patient's last name, MRN digits and hospital recur in every record that
// names them, and nowhere does another patient's last name stand as PATIENT.
func TestPHIIsConsistentAcrossRecords(t *testing.T) {
	for _, p := range collect(t, Options{Patients: 50, Seed: 3, NotesMin: 4, NotesMax: 4}) {
		mrns := map[string]bool{}
		surnames := map[string]bool{}
		for _, d := range p.Docs {
			for _, s := range d.Spans {
				switch s.Type {
				case "MEDICALRECORD":
					mrns[strings.ReplaceAll(s.Text, "-", "")] = true
				case "PATIENT":
					if !strings.Contains(s.Text, ",") && !strings.Contains(s.Text, " ") {
						surnames[strings.ToUpper(s.Text)] = true
					}
				}
			}
		}
		if len(mrns) != 1 {
			t.Errorf("patient %s has MRNs %v", p.ID, mrns)
		}
		if len(surnames) > 1 {
			t.Errorf("patient %s is called %v", p.ID, surnames)
		}
	}
}

func TestGeneratedCorpusImports(t *testing.T) {
	var docs []pipeline.Document
	for _, p := range collect(t, Options{Patients: 20, Seed: 1}) {
		docs = append(docs, p.Docs...)
	}
	files, err := formats.WriteI2B2(docs)
	if err != nil {
		t.Fatal(err)
	}
	opt := formats.ReadOptions{Label: func(c, typ string) (string, string, error) { return phi.Normalize(phi.I2B2(), c, typ) }}
	back, err := formats.ReadI2B2(files, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(docs) || back[0].Text != docs[0].Text || len(back[0].Spans) != len(docs[0].Spans) {
		t.Errorf("i2b2 round trip lost documents or spans")
	}
}

func TestGenerateOptions(t *testing.T) {
	for _, opt := range []Options{{Patients: -1}, {Patients: 1, NotesMin: 3, NotesMax: 2}, {Patients: 1, NotesMin: 0, NotesMax: 2}, {Patients: 1, NotesMin: 1, NotesMax: 100}} {
		if err := Generate(opt, func(Patient) error { return nil }); err == nil {
			t.Errorf("%+v accepted", opt)
		}
	}
	stop := errors.New("stop")
	n := 0
	err := Generate(Options{Patients: 10}, func(Patient) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("callback error: %v after %d patients", err, n)
	}
	for _, p := range collect(t, Options{Patients: 30, NotesMin: 1, NotesMax: 1}) {
		if len(p.Docs) != 1 {
			t.Fatalf("NotesMin=NotesMax=1 gave %d notes", len(p.Docs))
		}
	}
}

// BenchmarkGenerate reports notes generated per second (single goroutine).
func BenchmarkGenerate(b *testing.B) {
	notes := 0
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		err := Generate(Options{Patients: 1000, Seed: uint64(i)}, func(p Patient) error {
			notes += len(p.Docs)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(notes)/b.Elapsed().Seconds(), "notes/s")
}

// BenchmarkGenerateI2B2 adds rendering as i2b2 XML, what `deidcorpus synth`
// does before writing files.
func BenchmarkGenerateI2B2(b *testing.B) {
	notes, bytes := 0, 0
	for i := 0; i < b.N; i++ {
		err := Generate(Options{Patients: 1000, Seed: uint64(i)}, func(p Patient) error {
			files, err := formats.WriteI2B2(p.Docs)
			for _, f := range files {
				bytes += len(f.Data)
			}
			notes += len(p.Docs)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(notes)/b.Elapsed().Seconds(), "notes/s")
	b.SetBytes(int64(bytes / b.N))
}

// The article before a value agrees with it: "works as an electrician", "a
// teacher", "is an 80-year-old".
func TestArticlesAgreeWithTheirValues(t *testing.T) {
	seen := map[string]int{}
	for _, p := range collect(t, Options{Patients: 300, Seed: 5}) {
		for _, d := range p.Docs {
			text := []rune(d.Text)
			for _, s := range d.Spans {
				before := strings.ToLower(string(text[max(0, s.Start-4):s.Start]))
				var got string
				for _, art := range []string{"an", "a"} {
					if strings.HasSuffix(before, " "+art+" ") {
						got = art
						break
					}
				}
				if got == "" {
					continue
				}
				if want := english.Article(s.Text); got != want {
					t.Fatalf("%s: %q before the %s %q, want %q", d.ID, got, s.Type, s.Text, want)
				}
				seen[s.Type+" "+got]++
			}
		}
	}
	for _, k := range []string{"PROFESSION a", "PROFESSION an", "AGE a", "AGE an"} {
		if seen[k] == 0 {
			t.Errorf("no %s: %v", k, seen)
		}
	}
}
