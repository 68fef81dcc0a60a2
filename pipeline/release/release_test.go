package release

import (
	"slices"
	"strings"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

func sample() Snapshot {
	return Snapshot{Sets: map[string][]pipeline.Document{"gold": {
		{ID: "100-01", Patient: "100", RecordOrder: 1, Text: "Seen by Dr. Lee on 3/4.", Spans: []pipeline.Span{
			{Start: 12, End: 15, Text: "Lee", Category: "NAME", Type: "DOCTOR"},
			{Start: 19, End: 22, Text: "3/4", Category: "DATE", Type: "DATE"},
		}},
		{ID: "100-02", Patient: "100", RecordOrder: 2, Text: "Dr. Lee again.", Spans: []pipeline.Span{
			{Start: 4, End: 7, Text: "Lee", Category: "NAME", Type: "DOCTOR"},
		}},
	}}}
}

func clone(s Snapshot) Snapshot {
	out := Snapshot{Sets: map[string][]pipeline.Document{}}
	for k, docs := range s.Sets {
		for _, d := range docs {
			d.Spans = append([]pipeline.Span(nil), d.Spans...)
			out.Sets[k] = append(out.Sets[k], d)
		}
	}
	return out
}

// rootOf is a snapshot's root hash.
func rootOf(t *testing.T, s Snapshot) string {
	t.Helper()
	m, err := s.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	return m.Root
}

func TestRootHash(t *testing.T) {
	a := sample()
	b := clone(a)
	// order does not matter
	b.Sets["gold"][0].Spans[0], b.Sets["gold"][0].Spans[1] = b.Sets["gold"][0].Spans[1], b.Sets["gold"][0].Spans[0]
	b.Sets["gold"][0], b.Sets["gold"][1] = b.Sets["gold"][1], b.Sets["gold"][0]
	if rootOf(t, a) != rootOf(t, b) {
		t.Fatal("the same content gave two root hashes")
	}
	for name, change := range map[string]func(*Snapshot){
		"text":   func(s *Snapshot) { s.Sets["gold"][0].Text = strings.Replace(s.Sets["gold"][0].Text, "Seen", "seen", 1) },
		"label":  func(s *Snapshot) { s.Sets["gold"][0].Spans[0].Type = "PATIENT" },
		"offset": func(s *Snapshot) { s.Sets["gold"][1].Spans[0].End = 6 },
		"drop":   func(s *Snapshot) { s.Sets["gold"] = s.Sets["gold"][:1] },
		"set":    func(s *Snapshot) { s.Sets["other"] = s.Sets["gold"]; delete(s.Sets, "gold") },
	} {
		c := clone(a)
		change(&c)
		if rootOf(t, c) == rootOf(t, a) {
			t.Errorf("changing the %s kept the root hash", name)
		}
	}
}

func TestDiff(t *testing.T) {
	a := sample()
	b := clone(a)
	b.Sets["gold"][0].Spans[0].Type = "PATIENT"                                                                             // relabelled
	b.Sets["gold"][1].Spans = nil                                                                                           // removed
	b.Sets["gold"][0].Spans = append(b.Sets["gold"][0].Spans, pipeline.Span{Start: 0, End: 4, Text: "Seen", Type: "OTHER"}) // added
	b.Sets["gold"] = append(b.Sets["gold"], pipeline.Document{ID: "101-01", Text: "new"})
	d := Compare(a, b)
	if len(d.DocumentsAdded) != 1 || d.DocumentsAdded[0] != "101-01" || len(d.DocumentsRemoved) != 0 || len(d.DocumentsChanged) != 0 {
		t.Errorf("documents: %+v", d)
	}
	if len(d.SpansRelabelled) != 1 || d.SpansRelabelled[0].WasType != "DOCTOR" || d.SpansRelabelled[0].Type != "PATIENT" {
		t.Errorf("relabelled: %+v", d.SpansRelabelled)
	}
	if len(d.SpansRemoved) != 1 || d.SpansRemoved[0].Document != "100-02" {
		t.Errorf("removed: %+v", d.SpansRemoved)
	}
	if len(d.SpansAdded) != 1 || d.SpansAdded[0].Type != "OTHER" {
		t.Errorf("added: %+v", d.SpansAdded)
	}
	if !Compare(a, clone(a)).Empty() {
		t.Error("a snapshot differs from its copy")
	}
}

func TestPackVerify(t *testing.T) {
	for _, format := range []string{"i2b2", "brat", "jsonl"} {
		f, err := formats.Lookup(format)
		if err != nil {
			t.Fatal(err)
		}
		snap := sample()
		files, err := Pack(Meta{Name: "demo", Version: "1.0.0", Corpus: "c"}, snap, f, "# demo\n")
		if err != nil {
			t.Fatal(format, err)
		}
		v, err := Verify(files)
		if err != nil {
			t.Fatalf("%s: a fresh archive does not verify: %v", format, err)
		}
		if v.Root != rootOf(t, snap) || v.Documents != 2 {
			t.Errorf("%s: %+v", format, v)
		}
		tamper := func(name string, mutate func([]formats.File) []formats.File, want string) {
			t.Helper()
			c := append([]formats.File(nil), files...)
			_, err := Verify(mutate(c))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s, %s: want an error with %q, got %v", format, name, want, err)
			}
		}
		tamper("changed document", func(c []formats.File) []formats.File {
			for i := range c {
				if strings.HasPrefix(c[i].Name, "gold/") {
					c[i].Data = []byte(strings.Replace(string(c[i].Data), "Lee", "Lea", 1))
					break
				}
			}
			return c
		}, "was changed")
		tamper("added file", func(c []formats.File) []formats.File {
			return append(c, formats.File{Name: "gold/extra.txt", Data: []byte("x")})
		}, "was added")
		tamper("removed file", func(c []formats.File) []formats.File {
			for i := range c {
				if strings.HasPrefix(c[i].Name, "gold/") {
					return append(c[:i], c[i+1:]...)
				}
			}
			return c
		}, "missing")
		tamper("no manifest", func(c []formats.File) []formats.File { return c[:len(c)-1] }, "no MANIFEST")
		tamper("zipped in its folder", func(c []formats.File) []formats.File {
			for i := range c {
				c[i].Name = "notes-1.0.0/" + c[i].Name
			}
			return c
		}, "no MANIFEST at the archive's top, but notes-1.0.0/MANIFEST")
	}
}

func TestVersions(t *testing.T) {
	for v, ok := range map[string]bool{"1.0.0": true, "0.2.10-rc.1+b5": true, "1.0": false, "01.0.0": false, "v1.0.0": false} {
		if ValidVersion(v) != ok {
			t.Errorf("ValidVersion(%q) = %v", v, !ok)
		}
	}
	if CompareVersions("1.10.0", "1.9.3") <= 0 || CompareVersions("1.0.0-rc.1", "1.0.0") >= 0 || CompareVersions("2.0.0", "2.0.0+x") != 0 {
		t.Error("version precedence wrong")
	}
}

// A format that rebuilds the text from tokens (CoNLL) cannot carry a release:
// its archive would never verify. It is refused before any file is made.
func TestPackRefusesRebuiltText(t *testing.T) {
	f, _ := formats.Lookup("conll")
	var c formats.Collector
	each := func(fn func(string, []pipeline.Document) error) error { return fn("gold", sample().Sets["gold"]) }
	err := PackTo(Meta{Name: "demo", Version: "1.0.0"}, each, f, "", c.Create)
	if err == nil || !strings.Contains(err.Error(), "could never be verified") || len(c.Files()) > 0 {
		t.Fatalf("CoNLL release: %v, %d files", err, len(c.Files()))
	}
}

// TestDiffCarriesSpansOverAnEdit: in a note whose text changed, the spans an
// edit only moved are no difference; one it touched is removed and its
// replacement added, and the offsets reported are each text's own.
func TestDiffCarriesSpansOverAnEdit(t *testing.T) {
	older := pipeline.Document{ID: "100-01", Text: "Dr. Ann Lee saw Bo Chan on 3/4 in Bóston.", Spans: []pipeline.Span{
		{Start: 4, End: 11, Text: "Ann Lee", Type: "DOCTOR"},
		{Start: 16, End: 23, Text: "Bo Chan", Type: "PATIENT"},
		{Start: 27, End: 30, Text: "3/4", Type: "DATE"},
		{Start: 34, End: 40, Text: "Bóston", Type: "CITY"},
	}}
	newer := pipeline.Document{ID: "100-01", Text: "Dr. Ann Lee saw Bob Chan on 3/4 in Bóston.", Spans: []pipeline.Span{
		{Start: 4, End: 11, Text: "Ann Lee", Type: "DOCTOR"},
		{Start: 16, End: 24, Text: "Bob Chan", Type: "PATIENT"},
		{Start: 28, End: 31, Text: "3/4", Type: "DATE"},
		{Start: 35, End: 41, Text: "Bóston", Type: "HOSPITAL"},
	}}
	a := Snapshot{Sets: map[string][]pipeline.Document{"gold": {older}}}
	b := Snapshot{Sets: map[string][]pipeline.Document{"gold": {newer}}}
	d := Compare(a, b)
	if !slices.Equal(d.DocumentsChanged, []string{"100-01"}) {
		t.Errorf("changed documents %v", d.DocumentsChanged)
	}
	if len(d.SpansRemoved) != 1 || d.SpansRemoved[0].Text != "Bo Chan" || d.SpansRemoved[0].End != 23 {
		t.Errorf("removed %+v, want Bo Chan at 16-23", d.SpansRemoved)
	}
	if len(d.SpansAdded) != 1 || d.SpansAdded[0].Text != "Bob Chan" || d.SpansAdded[0].End != 24 {
		t.Errorf("added %+v, want Bob Chan at 16-24", d.SpansAdded)
	}
	if len(d.SpansRelabelled) != 1 || d.SpansRelabelled[0].Start != 35 || d.SpansRelabelled[0].WasType != "CITY" {
		t.Errorf("relabelled %+v, want Bóston at 35, a CITY before", d.SpansRelabelled)
	}
}
