package surrogate

import (
	"reflect"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
)

// TestSynthLongitudinal runs the policy over pipeline/synth's corpus, whose
// notes write each patient's PHI in many surface forms across records.
func TestSynthLongitudinal(t *testing.T) {
	var docs []pipeline.Document
	if err := synth.Generate(synth.Options{Patients: 500, Seed: 3}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 21).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	rep := assertClean(t, docs, res, pol)
	if rep.DatesChecked == 0 || len(rep.NamePatterns) == 0 {
		t.Fatalf("nothing checked: %d dates, %d name patterns", rep.DatesChecked, len(rep.NamePatterns))
	}
	again, err := New(pol, nil, 21).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Docs, again.Docs) {
		t.Fatal("two runs with one seed differ")
	}
	other, err := New(pol, nil, 22).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range docs {
		if res.Docs[i].Text == other.Docs[i].Text {
			same++
		}
	}
	if same > 0 {
		t.Fatalf("%d documents identical under another seed", same)
	}
}
