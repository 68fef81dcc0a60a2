package surrogate

import (
	"cmp"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
)

// batchesOf splits docs into batches of n patients, as a store reads them.
func batchesOf(docs []pipeline.Document, n int) [][]pipeline.Document {
	var out [][]pipeline.Document
	var patients []string
	seen := map[string]int{}
	for _, d := range docs {
		p := patientOf(d)
		if _, ok := seen[p]; !ok {
			seen[p] = len(patients) / n
			patients = append(patients, p)
			if seen[p] == len(out) {
				out = append(out, nil)
			}
		}
		out[seen[p]] = append(out[seen[p]], d)
	}
	return out
}

// streamed runs a Stream over batches of docs and context (a context
// document goes with its patient's batch): the plan's and the finish's
// results, and each batch's, rewritten last batch first. load, unless nil,
// reads the patients' stored mappings with each batch (LoadPatientState).
func streamed(t *testing.T, r *Resynthesizer, docs, context []pipeline.Document, store Store, force []string, load PatientState) (plan, fin *Result, batches []*Result, orig [][]pipeline.Document) {
	t.Helper()
	isContext := map[string]bool{}
	for _, d := range context {
		isContext[d.ID] = true
	}
	all := append(slices.Clone(docs), context...)
	slices.SortStableFunc(all, func(a, b pipeline.Document) int { return cmp.Compare(patientOf(a), patientOf(b)) })
	split := func(batch []pipeline.Document) (todo, ctx []pipeline.Document) {
		for _, d := range batch {
			if isContext[d.ID] {
				ctx = append(ctx, d)
			} else {
				todo = append(todo, d)
			}
		}
		return todo, ctx
	}
	s, err := r.Stream(store)
	if err != nil {
		t.Fatal(err)
	}
	if load != nil {
		s.LoadPatientState(load)
	}
	parts := batchesOf(all, 7)
	for _, b := range parts {
		if err := s.Observe(split(b)); err != nil {
			t.Fatal(err)
		}
	}
	if plan, err = s.Plan(force); err != nil {
		t.Fatal(err)
	}
	batches = make([]*Result, len(parts))
	orig = make([][]pipeline.Document, len(parts))
	for i := len(parts) - 1; i >= 0; i-- {
		todo, ctx := split(parts[i])
		if batches[i], err = s.Rewrite(todo, ctx); err != nil {
			t.Fatal(err)
		}
		orig[i] = parts[i]
	}
	fin = s.Finish()
	// The corpus-scope mappings come one at a time, sorted, as often as asked.
	fin.Mappings = slices.Collect(s.CorpusMappings())
	sorted := slices.Clone(fin.Mappings)
	sortMappings(sorted)
	if !slices.Equal(fin.Mappings, sorted) || !slices.Equal(slices.Collect(s.CorpusMappings()), sorted) {
		t.Fatal("CorpusMappings are not sortMappings's order, or differ the second time")
	}
	return plan, fin, batches, orig
}

// assertSameRun fails unless the batched run made the documents, mappings
// and shifts of the whole-corpus run, and unless a Checker fed its parts
// reports what Check reports over them at once.
func assertSameRun(t *testing.T, whole *Result, plan, fin *Result, batches []*Result, orig [][]pipeline.Document, pol *Policy) {
	t.Helper()
	merged := &Result{Language: plan.Language, Review: slices.Clone(plan.Review)}
	var allOrig []pipeline.Document
	for i, b := range batches {
		merged.Docs = append(merged.Docs, b.Docs...)
		merged.Mappings = append(merged.Mappings, b.Mappings...)
		merged.Shifts = append(merged.Shifts, b.Shifts...)
		merged.Review = append(merged.Review, b.Review...)
		allOrig = append(allOrig, orig[i]...)
	}
	merged.Mappings = append(merged.Mappings, fin.Mappings...)
	byID := map[string]pipeline.Document{}
	for _, d := range merged.Docs {
		byID[d.ID] = d
	}
	if len(byID) != len(whole.Docs) {
		t.Fatalf("batched run wrote %d documents, whole run %d", len(byID), len(whole.Docs))
	}
	for _, d := range whole.Docs {
		if !reflect.DeepEqual(byID[d.ID], d) {
			t.Fatalf("document %s differs:\nbatched %q\nwhole   %q", d.ID, byID[d.ID].Text, d.Text)
		}
	}
	ms := slices.Clone(merged.Mappings)
	sortMappings(ms)
	if !reflect.DeepEqual(ms, whole.Mappings) {
		t.Fatalf("mappings differ: %d batched, %d whole", len(ms), len(whole.Mappings))
	}
	if !reflect.DeepEqual(merged.Shifts, whole.Shifts) || !reflect.DeepEqual(plan.Redone, whole.Redone) ||
		!reflect.DeepEqual(plan.Dropped, whole.Dropped) || !reflect.DeepEqual(fin.Labels, whole.Labels) {
		t.Fatal("shifts, redone patients, dropped mappings or labels differ")
	}
	if len(merged.Review) != len(whole.Review) {
		t.Fatalf("%d review items batched, %d whole", len(merged.Review), len(whole.Review))
	}
	c := NewChecker(pol, plan.Language)
	c.Add(nil, plan)
	for i, b := range batches {
		c.Add(orig[i], b)
	}
	c.Add(nil, fin)
	want := Check(allOrig, merged, pol)
	if got := c.Report(); !reflect.DeepEqual(got, want) {
		t.Fatalf("the batched check differs from Check:\n%+v\n%+v", got, want)
	}
	// The same check made in parts of three batches, as processes of their
	// own would make it, each part's state written out as JSON and merged.
	parts := NewChecker(pol, plan.Language)
	parts.Add(nil, plan)
	for lo := 0; lo < len(batches); lo += 3 {
		pc := NewPartChecker(pol, plan.Language)
		pc.KeptForReview(plan.Review)
		for i := lo; i < min(lo+3, len(batches)); i++ {
			pc.Add(orig[i], batches[i])
		}
		data, err := json.Marshal(pc.State())
		if err != nil {
			t.Fatal(err)
		}
		var st CheckState
		if err := json.Unmarshal(data, &st); err != nil {
			t.Fatal(err)
		}
		parts.Merge(st)
	}
	parts.Add(nil, fin)
	if got := parts.Report(); !reflect.DeepEqual(got, want) {
		t.Fatalf("the check merged from parts differs from Check:\n%+v\n%+v", got, want)
	}
}

// Two parts that gave one corpus-scope value different surrogates are an
// inconsistency once merged, though neither part saw one; a Checker that
// keeps no keys has no State.
func TestCheckerMergeFindsInconsistency(t *testing.T) {
	pol := DefaultPolicy()
	k := [3]string{ScopeCorpus, "DOCTOR", "lee"}
	whole := NewChecker(pol, "en")
	for _, sur := range []string{"ray", "fox"} {
		pc := NewPartChecker(pol, "en")
		pc.seen.add(k, sur)
		if in := pc.Report().Inconsistent; len(in) != 0 {
			t.Fatalf("one part alone: %v", in)
		}
		whole.Merge(pc.State())
	}
	want := []Inconsistency{{ScopeCorpus, "DOCTOR", "lee", []string{"fox", "ray"}}}
	if got := whole.Report().Inconsistent; !reflect.DeepEqual(got, want) {
		t.Errorf("merged: %v, want %v", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("State of a Checker without keys did not panic")
		}
	}()
	NewChecker(pol, "en").State()
}

// TestStreamEqualsRun resynthesizes a corpus a few patients at a time,
// rewriting the batches in reverse order, and then new notes of its patients
// against the stored state: both give what a run over the whole corpus gives.
func TestStreamEqualsRun(t *testing.T) {
	var docs, early, late []pipeline.Document
	if err := synth.Generate(synth.Options{Patients: 60, Seed: 5}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		early = append(early, p.Docs[:len(p.Docs)-1]...)
		late = append(late, p.Docs[len(p.Docs)-1])
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	pol := DefaultPolicy()
	whole, err := New(pol, nil, 9).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	plan, fin, batches, orig := streamed(t, New(pol, nil, 9), docs, nil, Store{}, nil, nil)
	if len(batches) < 5 {
		t.Fatalf("only %d batches", len(batches))
	}
	assertSameRun(t, whole, plan, fin, batches, orig, pol)

	// An incremental run: several seeds, so that some patients' new notes
	// collide with their stored state and their earlier notes are redone.
	redone := 0
	for seed := uint64(1); seed <= 6; seed++ {
		first, err := New(pol, nil, seed).Run(early, Store{})
		if err != nil {
			t.Fatal(err)
		}
		stored := Store{Mappings: first.Mappings, Shifts: first.Shifts}
		r := New(pol, nil, seed+100)
		r.Context = early
		whole, err := r.Run(late, stored)
		if err != nil {
			t.Fatal(err)
		}
		redone += len(whole.Redone)
		plan, fin, batches, orig := streamed(t, New(pol, nil, seed+100), late, early, stored, nil, nil)
		assertSameRun(t, whole, plan, fin, batches, orig, pol)

		// The same with the patients' stored mappings read a batch at a
		// time: the Store holds the corpus-scope ones and the shifts.
		byScope := map[string][]Mapping{}
		planState := Store{Shifts: stored.Shifts}
		for _, m := range stored.Mappings {
			if m.Scope == ScopeCorpus {
				planState.Mappings = append(planState.Mappings, m)
			} else {
				byScope[m.Scope] = append(byScope[m.Scope], m)
			}
		}
		if len(byScope) == 0 {
			t.Fatal("no patient-scope mappings stored")
		}
		loads := 0
		load := func(patients []string) ([]Mapping, error) {
			loads++
			var out []Mapping
			for _, p := range patients {
				out = append(out, byScope[PatientScope(p)]...)
			}
			return out, nil
		}
		plan, fin, batches, orig = streamed(t, New(pol, nil, seed+100), late, early, planState, nil, load)
		assertSameRun(t, whole, plan, fin, batches, orig, pol)
		if loads != 2*len(batches) {
			t.Errorf("%d loads for %d batches: want one a batch in each pass", loads, len(batches))
		}
	}
	t.Logf("%d patients redone", redone)
}
