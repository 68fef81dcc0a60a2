package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/store"
	"deidcorpus/version"
)

// resynthSplit is a resynthesis split into parts of whole patients that any
// worker takes (ResynthesizeParams.Parts). The plan is what every process
// decides alike from the source, the stored state and the seed: the parent
// reads the source and plans, marks the target and queues the parts; each
// part reads the source and plans again (a retried attempt does the same),
// then rewrites, checks and saves its own patients, and leaves its check in
// a sealed artifact; the parent's finish plans once more for the
// corpus-scope mappings, merges the parts' checks in the plan's order and
// finishes as a whole job does. Each process pays for the first pass and
// the plan (about a tenth of a first run's CPU), so parts gain only where
// they run on machines of their own, on PostgreSQL.
var resynthSplit = Split{Plan: planResynthParts, Part: resynthPart, Finish: finishResynthParts}

// maxResynthParts bounds ResynthesizeParams.Parts: each part reads the whole
// source once more.
const maxResynthParts = 64

// resynthPartState is what a part leaves for the finish: its check, its
// review items and the notes of earlier unannotated finds it rewrote. It
// names original values: a sealed artifact, removed once the job is done.
type resynthPartState struct {
	Check     surrogate.CheckState   `json:"check"`
	Review    []surrogate.ReviewItem `json:"review"`
	Annotated []string               `json:"annotated"`
}

func planResynthParts(ctx context.Context, run *Run) ([]map[string]any, error) {
	r, err := planResynthesis(ctx, run.Store, run.Job.Params, run.Job.ID, func(read, total int) {
		run.Progress(read, total, fmt.Sprintf("reading %s and planning its parts: %d of %d notes", run.Job.Params["corpus"], read, total))
	})
	if err != nil {
		return nil, err
	}
	if r.result != nil {
		return nil, nil // no parts: the finish reports r.result
	}
	if _, _, err := r.begin(ctx, run.Store, run.Job.ID); err != nil {
		return nil, err
	}
	// Cut by the notes to write: a run that adds notes to a corpus
	// resynthesized before has them where the new patients are. A redone
	// patient's notes are all written again.
	redone := map[string]bool{}
	for _, p := range r.plan.Redone {
		redone[p] = true
	}
	weight := func(patient string) int {
		if redone[patient] {
			return r.notesOf[patient]
		}
		return r.todoOf[patient]
	}
	work := 0
	for p := range r.notesOf {
		work += weight(p)
	}
	groups, docs, err := run.Store.PatientGroups(ctx, r.src, "", (work+r.p.Parts-1)/r.p.Parts, weight)
	if err != nil {
		return nil, err
	}
	// What the plan was made from: a part or a finish that plans from
	// another source (an import meanwhile) or with other code would draw
	// other surrogates than the parts before it.
	parts := make([]map[string]any, len(groups))
	for i := range groups {
		parts[i] = map[string]any{"patients": groups[i], "documents": docs[i],
			"sourceVersion": r.src.ContentVersion, "code": version.String()}
	}
	return parts, nil
}

// planned is what a resynthesis part's plan was made from.
type planned struct {
	SourceVersion int    `json:"sourceVersion"`
	Code          string `json:"code"`
}

// check refuses, for good, a part or finish whose source or code is not
// what the parent planned with: it would draw other surrogates.
func (p planned) check(ctx context.Context, st *store.Store, src *ent.Corpus) error {
	now := src.ContentVersion
	if c, err := st.CorpusByName(ctx, src.Name); err != nil {
		return err
	} else if c.ContentVersion != now {
		now = c.ContentVersion // it changed while this process read it
	}
	switch {
	case now != p.SourceVersion:
		return &apperr.Error{Code: apperr.Conflict, Err: errFinal, Msg: fmt.Sprintf("corpus %q changed since the job planned its parts "+
			"(content version %d, planned at %d): its parts would not agree; run the resynthesis again", src.Name, now, p.SourceVersion)}
	case p.Code != version.String():
		return &apperr.Error{Code: apperr.Conflict, Err: errFinal, Msg: fmt.Sprintf("this worker runs deidcorpus %s, the job planned its parts "+
			"with %s: its parts would not agree; run every worker on one version", version.String(), p.Code)}
	}
	return nil
}

// writing returns the target a parent resynthesis job marked as its own.
func (r *resynthesis) writing(ctx context.Context, st *store.Store, jobID int) (*ent.Corpus, *surrogate.RunState, error) {
	out, err := st.CorpusByName(ctx, r.p.Out)
	if err != nil {
		return nil, nil, err
	}
	m := store.InProgress(out)
	if m == nil || m.Job != jobID {
		return nil, nil, apperr.New(apperr.Conflict, "corpus %q is not being written by job %d", out.Name, jobID)
	}
	return out, m, nil
}

// resynthPart rewrites, checks and saves the patients of one part.
func resynthPart(ctx context.Context, run *Run, parent *ent.Job, part map[string]any) (Result, error) {
	var spec struct {
		planned
		Patients  []int `json:"patients"`
		Documents int   `json:"documents"`
	}
	if err := decodeParams(part, &spec); err != nil {
		return nil, apperr.New(apperr.Invalid, "part of job %d: %v", parent.ID, err)
	}
	if len(spec.Patients) == 0 {
		return nil, apperr.New(apperr.Invalid, "part of job %d: no patients", parent.ID)
	}
	r, err := planResynthesis(ctx, run.Store, parent.Params, parent.ID, func(read, total int) {
		run.Progress(0, spec.Documents, fmt.Sprintf("reading %s: %d of %d notes", parent.Params["corpus"], read, total))
	})
	if err != nil {
		return nil, err
	}
	if r.result != nil { // the parent's output is saved, or nothing is left to write
		return Result{"documents": 0, "message": r.result.Message}, nil
	}
	if err := spec.check(ctx, run.Store, r.src); err != nil {
		return nil, err
	}
	target, marker, err := r.writing(ctx, run.Store, parent.ID)
	if err != nil {
		return nil, err
	}
	checker := surrogate.NewPartChecker(r.policy, r.plan.Language)
	checker.Across(r.stream) // every note is searched for the corpus's names and places
	checker.KeptForReview(r.plan.Review)
	each := func(ctx context.Context, fn func([]pipeline.Document) error) error {
		return run.Store.EachBatchOf(ctx, r.src, r.p.Set, "", spec.Patients, batchSize, fn)
	}
	rw, err := r.rewrite(ctx, run.Store, parent.ID, each, target, marker, checker, func(read int) {
		run.Progress(read, spec.Documents, fmt.Sprintf("replacing the PHI of %s: %d of %d notes", r.p.Corpus, read, spec.Documents))
	})
	if err != nil {
		return nil, err
	}
	if err := spec.check(ctx, run.Store, r.src); err != nil { // the source changed while the part wrote
		return nil, err
	}
	data, err := json.Marshal(resynthPartState{Check: checker.State(), Review: rw.review, Annotated: rw.annotated})
	if err != nil {
		return nil, err
	}
	a, err := run.Store.SaveArtifact(ctx, store.ArtifactSpec{Name: fmt.Sprintf("%s-part-%d-check.json", r.p.Out, run.Job.ID),
		ContentType: "application/json", JobID: run.Job.ID, CorpusID: r.src.ID, CreatedBy: run.Job.CreatedBy, Sealed: true}, data)
	if err != nil {
		return nil, err
	}
	return Result{"documents": rw.produced, "written": rw.written, "newMappings": rw.newMappings,
		"reused": r.reuse.Counts(), "labels": r.stream.Labels(), "state": a.ID, "sourceVersion": spec.SourceVersion, "code": spec.Code}, nil
}

// finishResynthParts plans again, merges the parts' checks and counts in
// the plan's order, and finishes the job as a whole job finishes.
func finishResynthParts(ctx context.Context, run *Run, parts []Result) (Result, error) {
	r, err := planResynthesis(ctx, run.Store, run.Job.Params, run.Job.ID, func(read, total int) {
		run.Progress(read, total, fmt.Sprintf("reading %s to finish: %d of %d notes", run.Job.Params["corpus"], read, total))
	})
	if err != nil {
		return nil, err
	}
	if r.result != nil {
		return resultOf(r.result)
	}
	if len(parts) == 0 { // the plan found nothing to write, this finish does
		return nil, &apperr.Error{Code: apperr.Conflict, Err: errFinal,
			Msg: fmt.Sprintf("corpus %q changed since the job planned: run the resynthesis again", r.p.Corpus)}
	}
	target, marker, err := r.writing(ctx, run.Store, run.Job.ID)
	if err != nil {
		return nil, err
	}
	checker := surrogate.NewChecker(r.policy, r.plan.Language)
	checker.Add(nil, r.plan)
	var rw rewritten
	var states []int // the parts' sealed working files, removed once the job is finished
	for i, res := range parts {
		var got struct {
			planned
			Documents   int               `json:"documents"`
			Written     int               `json:"written"`
			NewMappings int               `json:"newMappings"`
			Reused      []surrogate.Reuse `json:"reused"`
			Labels      [][2]string       `json:"labels"`
			State       int               `json:"state"`
		}
		if err := decodeParams(res, &got); err != nil {
			return nil, apperr.New(apperr.Internal, "part %d of %d: its result: %v", i+1, len(parts), err)
		}
		if got.State == 0 {
			// It found the output saved or nothing to write, where this
			// finish found the job's work to merge: the check would leave
			// its patients out.
			return nil, &apperr.Error{Code: apperr.Conflict, Err: errFinal, Msg: fmt.Sprintf("part %d of %d wrote nothing (%v) "+
				"where the job has notes to write: run the resynthesis again", i+1, len(parts), res["message"])}
		}
		if err := got.check(ctx, run.Store, r.src); err != nil {
			return nil, err
		}
		states = append(states, got.State)
		a, err := run.Store.Artifact(ctx, got.State)
		if err != nil {
			return nil, fmt.Errorf("part %d of %d: its check: %w", i+1, len(parts), err)
		}
		var state resynthPartState
		if err := json.Unmarshal(a.Data, &state); err != nil {
			return nil, apperr.New(apperr.Internal, "part %d of %d: its check (artifact %d): %v", i+1, len(parts), a.ID, err)
		}
		checker.Merge(state.Check)
		rw.review = append(rw.review, state.Review...)
		rw.annotated = append(rw.annotated, state.Annotated...)
		rw.produced += got.Documents
		rw.written += got.Written
		rw.newMappings += got.NewMappings
		r.reuse.Merge(got.Reused)
		r.stream.AddLabels(got.Labels)
	}
	result, err := r.finish(ctx, run, target, marker, checker, rw)
	if result != nil {
		// The job's output and its check report are saved: the parts'
		// copies of original values go (a retry reports the saved output).
		if derr := run.Store.DeleteStoredWhole(context.WithoutCancel(ctx), states...); derr != nil {
			run.manager.logger.Warn("remove the parts' check states", "job", run.Job.ID, "err", derr)
		}
	}
	return result, err
}
