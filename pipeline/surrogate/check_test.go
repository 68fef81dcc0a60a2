package surrogate

import (
	"slices"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
)

// A corpus-scope value written with two surrogates in different parts of a
// run, or mapped to two, is reported once with both, as Check reports it
// over the whole run.
func TestCheckerReportsACorpusValueWithTwoSurrogates(t *testing.T) {
	var docs []pipeline.Document
	if err := synth.Generate(synth.Options{Patients: 6, Seed: 4}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 3).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	if rep := Check(docs, res, pol); len(rep.Inconsistent) != 0 {
		t.Fatalf("a clean run is inconsistent: %v", rep.Inconsistent)
	}
	// The last mention of a corpus-scope value that is mentioned before gets
	// another surrogate of the same length, so that offsets stay right.
	seen := map[[2]string]bool{}
	var at [2]int
	var orig, was string
	for di, d := range res.Docs {
		for si, sp := range docs[di].Spans {
			if r := pol.Rule(sp.Category, sp.Type); r.Scope != ScopeCorpus || r.Strategy == Keep || patientOnly[r.Strategy] {
				continue
			}
			k := [2]string{sp.Type, fold(sp.Text)}
			if seen[k] && len(d.Spans[si].Text) > 3 {
				at, orig, was = [2]int{di, si}, sp.Text, d.Spans[si].Text
			}
			seen[k] = true
		}
	}
	if orig == "" {
		t.Fatal("no corpus-scope value mentioned twice")
	}
	other := []byte(was)
	slices.Reverse(other)
	if fold(string(other)) == fold(was) {
		other[0], other[1] = 'Q', 'x'
	}
	d := &res.Docs[at[0]]
	sp := &d.Spans[at[1]]
	d.Text = d.Text[:sp.Start] + string(other) + d.Text[sp.End:]
	sp.Text = string(other)

	half := len(docs) / 2
	for half < len(docs) && docs[half].Patient == docs[half-1].Patient {
		half++
	}
	c := NewChecker(pol, res.Language)
	c.Add(docs[:half], &Result{Docs: res.Docs[:half], Shifts: res.Shifts, Language: res.Language})
	c.Add(docs[half:], &Result{Docs: res.Docs[half:], Language: res.Language})
	c.Add(nil, &Result{Mappings: []Mapping{{Scope: ScopeCorpus, Type: "DOCTOR", Original: "Ann Lee", Surrogate: "Bo Kim"}}})
	c.Add(nil, &Result{Mappings: []Mapping{{Scope: ScopeCorpus, Type: "DOCTOR", Original: "ANN LEE", Surrogate: "Cy Day"}}})
	got := c.Report().Inconsistent
	want := []Inconsistency{
		{ScopeCorpus, docs[at[0]].Spans[at[1]].Type, fold(orig), slices.Sorted(slices.Values([]string{fold(was), fold(string(other))}))},
		{ScopeCorpus, "DOCTOR", "ann lee", []string{"bo kim", "cy day"}},
	}
	if !slices.EqualFunc(got, want, func(a, b Inconsistency) bool {
		return a.Scope == b.Scope && a.Type == b.Type && a.Original == b.Original && slices.Equal(a.Surrogates, b.Surrogates)
	}) {
		t.Errorf("inconsistencies %v, want %v", got, want)
	}
}
