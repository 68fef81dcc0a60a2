package surrogate

import (
	"slices"
	"strings"
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

// A value read across the end of one surrogate and the start of the next is a
// coincidence of two surrogates, not a copy; the same value inside one span,
// or reaching unannotated text, is a leak.
func TestScanLeavesValuesJoinedAcrossTwoSurrogates(t *testing.T) {
	vals := newValueSet()
	vals.addTyped("1/12", "DATE")
	pol := DefaultPolicy()
	const text = "Seen at HOSPITAL-1    12/08/2100 by 1/12 staff."
	doc := func(spans ...[2]int) pipeline.Document {
		d := pipeline.Document{ID: "d", Text: text}
		for _, s := range spans {
			d.Spans = append(d.Spans, pipeline.Span{Start: s[0], End: s[1], Type: "DATE", Text: text[s[0]:s[1]]})
		}
		return d
	}
	hospital, date := [2]int{8, 18}, [2]int{22, 32}
	if hospital != [2]int{strings.Index(text, "HOSPITAL"), strings.Index(text, "-1") + 2} || text[date[0]:date[1]] != "12/08/2100" {
		t.Fatal("the test's offsets are wrong")
	}
	second := [2]int{strings.Index(text, "by 1/12") + 3, strings.Index(text, " staff")}
	cases := []struct {
		name              string
		spans             [][2]int
		leaks, unannotate int
	}{
		{"two surrogates side by side", [][2]int{hospital, date, second}, 1, 0}, // only "1/12" in the third span
		{"the first token outside any span", [][2]int{{8, 16}, date, second}, 2, 0},
		{"the value in unannotated text", [][2]int{hospital, date}, 0, 1},
	}
	for _, c := range cases {
		f := scan("p", doc(c.spans...), vals, pol)
		if len(f.leaks) != c.leaks || len(f.unannotated) != c.unannotate {
			t.Errorf("%s: %d leaks %v and %d unannotated finds %v, want %d and %d",
				c.name, len(f.leaks), f.leaks, len(f.unannotated), f.unannotated, c.leaks, c.unannotate)
		}
	}
}
