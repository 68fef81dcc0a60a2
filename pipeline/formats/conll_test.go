package formats

import (
	"strings"
	"testing"

	"deidcorpus/pipeline"
)

func TestCoNLLRoundTrip(t *testing.T) {
	docs := sampleDocs()
	files, err := WriteCoNLL(docs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadCoNLL(files, i2b2Labels)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(docs) {
		t.Fatalf("%d documents", len(got))
	}
	// The text is rebuilt (ReadCoNLL): labels and span text, white space
	// normalized, survive; so does everything on a second round trip.
	for i, d := range got {
		if d.ID != docs[i].ID || d.Patient != docs[i].Patient || d.RecordOrder != docs[i].RecordOrder || len(d.Spans) != len(docs[i].Spans) {
			t.Fatalf("document %d: %+v", i, d)
		}
		for j, s := range d.Spans {
			w := docs[i].Spans[j]
			if s.Label() != w.Label() || s.Text != strings.Join(strings.Fields(w.Text), " ") {
				t.Errorf("%s span %d: %s %q, want %s %q", d.ID, j, s.Label(), s.Text, w.Label(), w.Text)
			}
		}
	}
	// Span ends inside "MGH." and "0134." cut the tokens there: a space appears.
	if want := "Patient: John Smith\nSeen by Dr. Ana Pérez on 11/24/67 at MGH .\nPhone (617) 555-0134 ."; got[0].Text != want {
		t.Errorf("rebuilt text %q, want %q", got[0].Text, want)
	}
	again, err := WriteCoNLL(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(again[0].Data) != string(files[0].Data) {
		t.Errorf("second write differs:\n%s\n---\n%s", again[0].Data, files[0].Data)
	}
	back, err := ReadCoNLL(again, i2b2Labels)
	if err != nil {
		t.Fatal(err)
	}
	sameDocs(t, back, got, compareOpts{})
}

func TestCoNLLSplitsTokensAtSpans(t *testing.T) {
	d := mark(pipeline.Document{ID: "1", Text: "Smith's MRN:12345"}, "Smith", "PATIENT", "12345", "MEDICALRECORD")
	files, err := WriteCoNLL([]pipeline.Document{d})
	if err != nil {
		t.Fatal(err)
	}
	want := "-DOCSTART- 1\nSmith\tB-PATIENT\n's\tO\nMRN:\tO\n12345\tB-MEDICALRECORD\n\n"
	if string(files[0].Data) != want {
		t.Errorf("got\n%q\nwant\n%q", files[0].Data, want)
	}
}

func TestCoNLLConventions(t *testing.T) {
	// CoNLL-2003 layout: four columns, -DOCSTART- without an id, IOB1 and
	// BIOES labels.
	data := "-DOCSTART- -X- -X- O\n\n" +
		"Ann NNP B-NP I-PATIENT\nLee NNP I-NP E-PATIENT\nsaw VBD B-VP O\nBob NNP B-NP S-DOCTOR\nBob NNP B-NP S-DOCTOR\n\n" +
		"Ann NNP B-NP B-PATIENT\n\n" +
		"-DOCSTART- -X- -X- O\n\nMGH NNP B-NP U-HOSPITAL\n"
	docs, err := ReadCoNLL([]File{{Name: "eng.conll", Data: []byte(data)}}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].ID != "eng-1" || docs[1].ID != "eng-2" {
		t.Fatalf("docs %+v", docs)
	}
	if docs[0].Text != "Ann Lee saw Bob Bob\nAnn" {
		t.Errorf("text %q", docs[0].Text)
	}
	var got []string
	for _, s := range docs[0].Spans {
		got = append(got, s.Type+"="+s.Text)
	}
	if strings.Join(got, ",") != "PATIENT=Ann Lee,DOCTOR=Bob,DOCTOR=Bob,PATIENT=Ann" {
		t.Errorf("spans %v", got)
	}
	one, err := ReadCoNLL([]File{{Name: "100-04.bio", Data: []byte("Ann\tB-PATIENT\n")}}, ReadOptions{})
	if err != nil || one[0].ID != "100-04" || one[0].Patient != "100" || one[0].RecordOrder != 4 {
		t.Errorf("file without -DOCSTART-: %+v %v", one, err)
	}
}

func TestCoNLLErrors(t *testing.T) {
	cases := []struct {
		name, data string
		line       int
		field, msg string
	}{
		{"ragged columns", "Ann\tB-PATIENT\nsaw\tVBD\tO\n", 2, "columns", "ragged line: 3 columns, but line 1 has 2"},
		{"missing label", "-DOCSTART- d\nAnn\tB-PATIENT\nsaw\n", 3, "label", "ragged line: want a token and a label"},
		{"bad label", "Ann\tPATIENT\n", 1, "label", `"PATIENT" is not O or B-`},
		{"empty type", "Ann\tB-\n", 1, "label", "is not O or B-"},
	}
	for _, c := range cases {
		docs, err := ReadCoNLL([]File{{Name: "c.conll", Data: []byte(c.data)}}, ReadOptions{})
		wantError(t, c.name, docs, err, "c.conll", c.line, c.field, c.msg)
	}
	docs, err := ReadCoNLL([]File{{Name: "c.conll", Data: []byte("x O\n\nAnn B-NOPE\n")}}, i2b2Labels)
	wantError(t, "unknown label", docs, err, "c.conll", 3, "NOPE", "unknown type")
	if _, err := WriteCoNLL([]pipeline.Document{{ID: "a b", Text: "x"}}); err == nil {
		t.Error("an id with a space was written after -DOCSTART-")
	}
}

func FuzzCoNLL(f *testing.F) {
	f.Add("-DOCSTART- 1-01\nAnn\tB-PATIENT\nLee\tI-PATIENT\n\nsaw\tO\n")
	f.Add("-DOCSTART- -X- -X- O\n\nAnn NNP B-NP S-PATIENT\nPérez NNP B-NP E-PATIENT\n")
	f.Add("a B-X\nb I-Y\n\n\nc L-Y\n")
	conll, _ := Lookup("conll")
	f.Fuzz(func(t *testing.T, data string) {
		docs, err := ReadCoNLL([]File{{Name: "f.conll", Data: []byte(data)}}, ReadOptions{})
		if err != nil {
			return
		}
		checkReadable(t, conll, docs, ReadOptions{}, true)
	})
}
