package release

import (
	"reflect"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
)

// reader reads a snapshot a few documents at a time, as a stored one is.
func reader(s Snapshot) Reader {
	return func(fn func(string, []pipeline.Document) error) error {
		for set, docs := range s.Sets {
			for start := 0; start < len(docs); start += 3 {
				if err := fn(set, docs[start:min(start+3, len(docs))]); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// CompareReaders, which keeps only the documents whose hashes differ, gives
// what Compare gives of the whole snapshots, for every kind of change.
func TestCompareReadersEqualsCompare(t *testing.T) {
	var docs []pipeline.Document
	if err := synth.Generate(synth.Options{Patients: 12, Seed: 3}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	base := Snapshot{Sets: map[string][]pipeline.Document{"gold": docs, "system": docs[:len(docs)/2]}}
	for name, change := range map[string]func(*Snapshot){
		"nothing": func(*Snapshot) {},
		"a text": func(s *Snapshot) {
			for set := range s.Sets {
				s.Sets[set][1].Text += " Addendum."
			}
		},
		"a label": func(s *Snapshot) { s.Sets["gold"][2].Spans[0].Type = "PATIENT_X" },
		"a span removed": func(s *Snapshot) {
			s.Sets["system"][0].Spans = s.Sets["system"][0].Spans[1:]
		},
		"a span moved": func(s *Snapshot) { s.Sets["gold"][4].Spans[0].End-- },
		"a document removed": func(s *Snapshot) {
			s.Sets["gold"] = s.Sets["gold"][1:]
			s.Sets["system"] = s.Sets["system"][1:]
		},
		"a document added": func(s *Snapshot) {
			s.Sets["gold"] = append(s.Sets["gold"], pipeline.Document{ID: "new-01", Patient: "new", Text: "Seen."})
		},
		"a set added": func(s *Snapshot) { s.Sets["adjudicated"] = s.Sets["gold"][:2] },
		"a document in one set only": func(s *Snapshot) {
			s.Sets["system"] = s.Sets["system"][:len(s.Sets["system"])-1]
		},
	} {
		b := clone(base)
		change(&b)
		want := Compare(base, b)
		got, err := CompareReaders(reader(base), reader(b))
		if err != nil {
			t.Fatal(name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: CompareReaders\n%+v\nCompare\n%+v", name, got, want)
		}
		if name != "nothing" && got.Empty() {
			t.Errorf("%s: no difference found", name)
		}
	}
}
