package jobs

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/internal/seqs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/release"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/store"
	"deidcorpus/version"
)

// ResynthesizeParams are a resynthesis job's parameters.
type ResynthesizeParams struct {
	Corpus string `json:"corpus"`           // the source corpus
	Out    string `json:"out"`              // the surrogate corpus to write (or add new notes to)
	Set    string `json:"set,omitempty"`    // the source's annotation set; default gold
	Seed   uint64 `json:"seed"`             // makes the output reproducible
	Policy any    `json:"policy,omitempty"` // a policy object; default surrogate.DefaultPolicy
}

// Validate checks a resynthesis job's parameters before it is queued.
func (p ResynthesizeParams) Validate() error {
	switch {
	case p.Corpus == "":
		return required("corpus")
	case p.Out == "" || p.Out == p.Corpus:
		return fmt.Errorf("out: the surrogate corpus needs a name of its own")
	}
	_, _, err := p.policy()
	return err
}

func (p ResynthesizeParams) precondition(ctx context.Context, st *store.Store) error {
	if err := sourcePrecondition(ctx, st, p.Corpus, cmp.Or(p.Set, "gold"), "all"); err != nil {
		return err
	}
	out, err := st.CorpusByName(ctx, p.Out)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil
	} else if err != nil {
		return err
	}
	return p.checkTarget(out)
}

// checkTarget refuses an existing target corpus that is not a surrogate of
// the job's source made by resynthesis (a corpus derived from the source
// names it too, and holds its original text).
func (p ResynthesizeParams) checkTarget(out *ent.Corpus) error {
	from, _ := out.Provenance["from"].(string)
	source, _ := out.Provenance["source"].(string)
	switch {
	case out.Kind != corpus.KindSurrogate:
		return apperr.New(apperr.Conflict, "corpus %q exists and holds original text: choose another name for the surrogate corpus", p.Out)
	case from != p.Corpus || source != "resynthesis":
		return apperr.New(apperr.Conflict, "corpus %q exists and is not a surrogate of %q made by resynthesis: choose another name", p.Out, p.Corpus)
	}
	return nil
}

// policy returns the job's policy, and the JSON it is recorded as ("null"
// for the default).
func (p ResynthesizeParams) policy() (*surrogate.Policy, []byte, error) {
	if p.Policy == nil {
		return surrogate.DefaultPolicy(), []byte("null"), nil
	}
	data, err := json.Marshal(p.Policy)
	if err != nil {
		return nil, nil, fmt.Errorf("policy: %v", err)
	}
	pol, err := surrogate.ParsePolicy(data) // its errors say "policy:"
	if err != nil {
		return nil, nil, err
	}
	return pol, data, nil
}

// resynthesize replaces the PHI of a corpus's documents with surrogates and
// writes them, re-aligned, into a surrogate corpus. Documents the surrogate
// corpus already has are not rewritten unless their source changed since
// (see surrogate.Outline): they constrain the new surrogates, and the stored
// mappings and date shifts make a patient's new notes consistent with their
// earlier ones.
func resynthesize(ctx context.Context, run *Run) (Result, error) {
	var p ResynthesizeParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	if p.Set == "" {
		p.Set = "gold"
	}
	policy, policyJSON, err := p.policy()
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	st := run.Store
	src, err := st.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return nil, err
	}
	total, err := st.CountDocuments(ctx, src, "")
	if err != nil {
		return nil, err
	}
	// The target's notes, which this job does not rewrite unless their
	// source changed since: their outlines.
	var done map[string]surrogate.Outline
	// The target's notes with unannotated finds (from earlier runs): a note
	// this run rewrites gets its own count.
	unannotated := map[string]int{}
	redo := false
	var marker *store.ResynthesisMarker // this job's, when an earlier attempt began writing
	if out, err := st.CorpusByName(ctx, p.Out); err == nil {
		if err := p.checkTarget(out); err != nil {
			return nil, err
		}
		if err := st.RefuseOtherWriter(ctx, out, run.Job.ID); err != nil {
			return nil, err
		}
		if earlier := finishedRun(out.Provenance, run.Job.ID); earlier != nil {
			// A retry of a job whose output was saved: it reports what it wrote.
			return Result{"corpus": p.Out, "documents": earlier["documents"], "check": earlier["check"], "reused": earlier["reused"],
				"message": "saved by an earlier attempt of this job"}, nil
		}
		var before time.Time
		if m := store.InProgress(out); m != nil && m.Job == run.Job.ID {
			marker, redo, before = m, m.Redo, m.Since
		} else {
			// A quarantined corpus's notes cannot be trusted: a rerun rewrites
			// and checks them all, and its check decides the quarantine.
			redo = out.CheckStatus == corpus.CheckStatusFailed
		}
		if !redo {
			if done, err = st.SurrogateOutlines(ctx, out, before); err != nil {
				return nil, err
			}
			unannotated, _ = release.Unannotated(out.Provenance)
		}
	}
	// split sorts a batch into the notes to write and those the target
	// holds as they are; the first pass forgets the target's notes whose
	// source changed since (their outlines differ), so the second pass
	// splits alike without hashing every note again.
	split := func(batch []pipeline.Document) (todo, context []pipeline.Document) {
		for _, d := range batch {
			if _, ok := done[d.ID]; ok {
				context = append(context, d)
			} else {
				todo = append(todo, d)
			}
		}
		return todo, context
	}
	// What an earlier attempt of this job saved is not stored state to this
	// one: it draws it again, identically. The patients' own mappings are
	// read with their batch, in each pass.
	state, patientMappings, err := st.PlanState(ctx, src.ID, run.Job.ID)
	if err != nil {
		return nil, err
	}
	seed, err := st.SecretSeed(p.Seed, src.ID)
	if err != nil {
		return nil, err
	}
	stream, err := surrogate.New(policy, nil, seed).Stream(state.Store)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	reuse := state.Reuse()
	var loadErr error // reading stored mappings failed: the database's error, not the input's
	if patientMappings {
		stream.LoadPatientState(func(patients []string) ([]surrogate.Mapping, error) {
			batch, err := st.PatientMappingsBefore(ctx, src.ID, run.Job.ID, patients)
			loadErr = err
			reuse.Batch(batch)
			return batch.Mappings, err
		})
	}
	invalid := func(err error) error {
		if loadErr != nil {
			return loadErr
		}
		return apperr.Wrap(apperr.Invalid, err)
	}

	// Pass 1 reads the source for what its values decide; memory holds one
	// batch of notes and those values.
	read, todo := 0, 0
	if err := st.EachBatch(ctx, src, p.Set, "", batchSize, func(batch []pipeline.Document) error {
		for _, d := range batch {
			if o, ok := done[d.ID]; ok && o != surrogate.OutlineOf(d) {
				delete(done, d.ID)
			}
		}
		t, c := split(batch)
		if err := stream.Observe(t, c); err != nil {
			return invalid(err)
		}
		read += len(batch)
		todo += len(t)
		run.Progress(read, 2*total, fmt.Sprintf("reading %s: %d of %d notes", p.Corpus, read, total))
		return ctx.Err()
	}); err != nil {
		return nil, err
	}
	if todo == 0 {
		return Result{"corpus": p.Out, "documents": 0, "message": "every document is already resynthesized"}, nil
	}
	var force []string
	if marker != nil {
		force = marker.Redone
	}
	plan, err := stream.Plan(force)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	target, marker, err := st.BeginResynthesis(ctx, store.ResynthesisStart{SourceID: src.ID, Target: p.Out, TagSet: src.Tagset,
		From: p.Corpus, JobID: run.Job.ID, Redo: redo, Redone: plan.Redone, Redrawn: stream.Redrawn(), Dropped: plan.Dropped})
	if err != nil {
		return nil, err
	}

	// Pass 2 rewrites, checks and saves a batch of whole patients at a time,
	// each batch in a transaction of its own; a retry rewrites the batches an
	// earlier attempt saved (for the check) without saving them again. A
	// batch is saved, in order, while the next is read and rewritten.
	checker := surrogate.NewChecker(policy, plan.Language)
	checker.Add(nil, plan)
	review := plan.Review
	produced, written, newMappings := 0, 0, 0
	read = 0
	rewrite := func(ctx context.Context, send func(*surrogate.Result) error) error {
		return st.EachBatch(ctx, src, p.Set, "", batchSize, func(batch []pipeline.Document) error {
			read += len(batch)
			t, c := split(batch)
			res, err := stream.Rewrite(t, c)
			if err != nil {
				return invalid(err)
			}
			if len(res.Docs) > 0 {
				checker.Add(batch, res)
				for _, d := range res.Docs {
					delete(unannotated, d.ID)
				}
				reuse.Add(res)
				review = append(review, res.Review...)
				produced += len(res.Docs)
				for _, m := range res.Mappings {
					if m.New {
						newMappings++
					}
				}
				if err := send(res); err != nil {
					return err
				}
			}
			run.Progress(total+read, 2*total, fmt.Sprintf("replacing the PHI of %s: %d of %d notes", p.Corpus, read, total))
			return ctx.Err()
		})
	}
	saved := 0
	if err := seqs.Ahead(ctx, rewrite, func(res *surrogate.Result) error {
		n, err := st.SaveResynthesisBatch(ctx, store.ResynthesisBatch{SourceID: src.ID, TargetID: target.ID, JobID: run.Job.ID,
			Marker: marker, Result: res})
		if err != nil {
			return err
		}
		written += n
		if saved++; batchSaved != nil {
			return batchSaved(saved)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	// The corpus-scope mappings the run used are checked and counted a
	// batch at a time (a million notes use millions), then saved.
	fin := stream.Finish()
	for batch := range seqs.Chunk(stream.CorpusMappings(), mappingCheckBatch) {
		part := &surrogate.Result{Mappings: batch}
		checker.Add(nil, part)
		reuse.Add(part)
		for _, m := range batch {
			if m.New {
				newMappings++
			}
		}
	}
	report := checker.Report()
	summary := checkSummary(report)
	findings := store.CheckFindings(summary)
	// The seed draws only what no earlier run of the source decided: the
	// provenance says what was taken over, from which job and its seed.
	reused, err := st.Reused(ctx, reuse)
	if err != nil {
		return nil, err
	}
	var policyObj any
	json.Unmarshal(policyJSON, &policyObj)
	prov := map[string]any{
		"source": "resynthesis", "from": p.Corpus, "fromID": src.ID, "set": p.Set, "job": run.Job.ID,
		"seed": p.Seed, "policy": policyObj, "codeVersion": version.String(), "language": plan.Language,
		"documents": produced, "redonePatients": len(plan.Redone), "newMappings": newMappings, "reused": reused, "check": summary,
		"labels": fin.Labels,
	}
	for _, l := range report.Unannotated {
		unannotated[l.Doc]++
	}
	out, err := st.FinishResynthesis(ctx, store.ResynthesisEnd{SourceID: src.ID, TargetID: target.ID, JobID: run.Job.ID,
		Marker: marker, Provenance: prov, Mappings: stream.CorpusMappings(), Findings: findings, Unannotated: unannotated})
	if err != nil {
		return nil, err
	}
	full, err := json.Marshal(struct {
		Report *surrogate.Report      `json:"report"`
		Review []surrogate.ReviewItem `json:"review"`
	}{report, review})
	if err != nil {
		return nil, err
	}
	// The full report names original values beside their surrogates (review
	// items, leaks, values kept): it stays an artifact of the job, not part
	// of the surrogate corpus, sealed under the mapping keys.
	a, err := st.SaveArtifact(ctx, store.ArtifactSpec{Name: p.Out + "-check-report.json", ContentType: "application/json",
		JobID: run.Job.ID, CorpusID: src.ID, CreatedBy: run.Job.CreatedBy, Sealed: true}, full)
	if err != nil {
		return nil, err
	}
	result := Result{"corpus": out.ID, "corpusName": out.Name, "documents": produced, "written": written,
		"redonePatients": len(plan.Redone), "newMappings": newMappings,
		"reused": reused, "redo": redo, "check": summary, "checkReport": a.ID, "saved": written > 0,
		"checkStatus": string(out.CheckStatus), "checkFindings": out.CheckFindings}
	if findings > 0 {
		return result, &CheckFailed{Message: fmt.Sprintf("the check found %d problems (%d leaks, %d source ids in the text, %d misaligned spans): "+
			"corpus %q is quarantined (%d unresolved findings) until a rerun into it passes or a curator resolves them",
			findings, len(report.Leaks), len(report.Identifiers), len(report.Misaligned), out.Name, out.CheckFindings)}
	}
	return result, nil
}

// batchSize is about how many notes a resynthesis holds at a time.
var batchSize = 500

// mappingCheckBatch is how many corpus-scope mappings the end of a
// resynthesis checks at a time.
const mappingCheckBatch = 5000

// batchSaved, when set (by tests), is called after each batch a resynthesis
// saves, with how many it saved so far; an error ends the attempt there.
var batchSaved func(saved int) error

// finishedRun is the provenance that job wrote on a surrogate corpus when it
// finished: the corpus's own, or an entry of its runs.
func finishedRun(prov map[string]any, jobID int) map[string]any {
	if _, busy := prov["inProgress"]; busy {
		return nil
	}
	runs, _ := prov["runs"].([]any)
	for _, r := range append([]any{prov}, runs...) {
		if m, ok := r.(map[string]any); ok {
			if job, ok := m["job"].(float64); ok && int(job) == jobID {
				return m
			}
		}
	}
	return nil
}

// checkSummary is the PHI-free part of a check report: counts and the name
// pattern table.
func checkSummary(r *surrogate.Report) map[string]any {
	patterns := make([]map[string]any, len(r.NamePatterns))
	for i, p := range r.NamePatterns {
		patterns[i] = map[string]any{"pattern": p.Pattern, "tokens": p.Tokens, "original": p.Original, "surrogate": p.Surrogate}
	}
	return map[string]any{
		"ok": r.OK(), "documents": r.Documents, "spans": r.Spans, "replaced": r.Replaced,
		"misaligned": len(r.Misaligned), "leaks": len(r.Leaks), "identifiers": len(r.Identifiers), "unannotated": len(r.Unannotated),
		"inconsistent": len(r.Inconsistent), "intervalErrors": len(r.IntervalErrors), "datesChecked": r.DatesChecked,
		"equalToOriginal": len(r.EqualToOriginal), "review": r.Review, "namePatterns": patterns,
	}
}
