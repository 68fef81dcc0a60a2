package jobs

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/internal/seqs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/gate"
	"deidcorpus/pipeline/phi"
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
	// Parts, 2 or more, splits the job into that many parts of whole
	// patients that any worker takes (resynthSplit); 0 or 1 runs it whole.
	Parts int `json:"parts,omitempty"`
}

// Validate checks a resynthesis job's parameters before it is queued.
func (p ResynthesizeParams) Validate() error {
	switch {
	case p.Corpus == "":
		return required("corpus")
	case p.Out == "" || p.Out == p.Corpus:
		return fmt.Errorf("out: the surrogate corpus needs a name of its own")
	case p.Parts < 0 || p.Parts > maxResynthParts:
		return fmt.Errorf("parts: %d, want 0 to %d (0 or 1: the job is not split)", p.Parts, maxResynthParts)
	}
	_, _, err := p.policy()
	return err
}

func (p ResynthesizeParams) precondition(ctx context.Context, st *store.Store) error {
	if err := sourcePrecondition(ctx, st, p.Corpus, cmp.Or(p.Set, "gold"), "all"); err != nil {
		return err
	}
	if p.Policy != nil {
		if err := p.checkPolicyNames(ctx, st); err != nil {
			return err
		}
	}
	out, err := st.CorpusByName(ctx, p.Out)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil
	} else if err != nil {
		return err
	}
	src, err := st.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return err
	}
	return p.checkTarget(out, src)
}

// checkPolicyNames refuses a policy naming a type the source's labels cannot
// reach (see surrogate.Policy.CheckNames).
func (p ResynthesizeParams) checkPolicyNames(ctx context.Context, st *store.Store) error {
	pol, _, err := p.policy()
	if err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	c, err := st.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return err
	}
	labels, err := st.Labels(ctx, c, cmp.Or(p.Set, "gold"))
	if err != nil {
		return err
	}
	declared, _ := phi.Lookup(c.Tagset)
	if err := pol.CheckNames(labels, declared); err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	return nil
}

// checkTarget refuses an existing target corpus that is not a surrogate of
// the job's source made by resynthesis (a corpus derived from the source
// names it too, and holds its original text).
func (p ResynthesizeParams) checkTarget(out, src *ent.Corpus) error {
	switch {
	case out.Kind != corpus.KindSurrogate:
		return apperr.New(apperr.Conflict, "corpus %q exists and holds original text: choose another name for the surrogate corpus", p.Out)
	case out.Origin != corpus.OriginResynthesis || out.SourceID == nil || *out.SourceID != src.ID:
		return apperr.New(apperr.Conflict, "corpus %q exists and is not a surrogate of %q made by resynthesis: choose another name", p.Out, p.Corpus)
	}
	return nil
}

// policy returns the job's policy, and the JSON it is recorded as ("null"
// for the default). A policy carries its mapping and a site's lists as
// text; one that names a path (a job queued by an older version) fails
// here, its path unread.
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
	if len(pol.ResourceFiles) > 0 {
		data, err = recordedLists(data, pol.ResourceFiles)
	}
	return pol, data, err
}

// recordedLists replaces a policy's lists by their hashes in the JSON that
// the surrogate corpus's provenance records: they pin the lists without
// copying megabytes of them into every corpus's provenance.
func recordedLists(policy []byte, files map[string]string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(policy, &obj); err != nil {
		return nil, err
	}
	hashes := map[string]string{}
	for name, text := range files {
		sum := sha256.Sum256([]byte(text))
		hashes[name] = "sha256:" + hex.EncodeToString(sum[:])
	}
	obj["resourceFiles"] = hashes
	return json.Marshal(obj)
}

// resynthesize replaces the PHI of a corpus's documents with surrogates and
// writes them, re-aligned, into a surrogate corpus. Documents the surrogate
// corpus already has are not rewritten unless their source changed since
// (see surrogate.Outline): they constrain the new surrogates, and the stored
// mappings and date shifts make a patient's new notes consistent with their
// earlier ones. A job that asks for parts is split (resynthSplit).
func resynthesize(ctx context.Context, run *Run) (Result, error) {
	var p ResynthesizeParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	if p.Parts >= 2 {
		return run.manager.runSplit(ctx, run, resynthSplit)
	}
	r, err := planResynthesis(ctx, run.Store, run.Job.Params, run.Job.ID, func(read, total int) {
		run.Progress(read, 2*total, fmt.Sprintf("reading %s: %d of %d notes", p.Corpus, read, total))
	})
	if err != nil {
		return nil, err
	}
	if r.result != nil {
		return resultOf(r.result)
	}
	target, marker, err := r.begin(ctx, run.Store, run.Job.ID)
	if err != nil {
		return nil, err
	}
	checker := surrogate.NewChecker(r.policy, r.plan.Language)
	checker.Across(r.stream) // every note is searched for the corpus's names and places
	checker.Add(nil, r.plan)
	each := func(ctx context.Context, fn func([]pipeline.Document) error) error {
		return run.Store.EachBatch(ctx, r.src, r.p.Set, "", batchSize, fn)
	}
	rw, err := r.rewrite(ctx, run.Store, run.Job.ID, each, target, marker, checker, func(read int) {
		run.Progress(r.total+read, 2*r.total, fmt.Sprintf("replacing the PHI of %s: %d of %d notes", p.Corpus, read, r.total))
	})
	if err != nil {
		return nil, err
	}
	return r.finish(ctx, run, target, marker, checker, rw)
}

// resynthesis is a resynthesis job read and planned: what its first pass
// and plan decide, which every process that works on the job decides alike
// (see surrogate.Stream).
type resynthesis struct {
	p          ResynthesizeParams // with its defaults
	policy     *surrogate.Policy
	policyJSON []byte
	src        *ent.Corpus
	total      int // the source's documents
	// names are the target's ids of the source's notes.
	names store.SurrogateNames
	// done are the target's notes, which the job does not rewrite unless
	// their source changed since: their outlines, by the target's ids.
	done map[string]surrogate.Outline
	// unannotated are the target's notes with unannotated finds (from
	// earlier runs), by the target's ids: a note the job rewrites gets its
	// own count.
	unannotated map[string]int
	// todo counts the notes to write; when the job is split into parts,
	// which are cut by the notes to write, todoOf counts them by patient and
	// notesOf every note.
	todo            int
	todoOf, notesOf map[string]int
	redo            bool
	marker          *surrogate.RunState // the job's, when an earlier attempt began writing
	stream          *surrogate.Stream
	reuse           *surrogate.ReuseCounter
	loadErr         error // reading stored mappings failed: the database's error, not the input's
	plan            *surrogate.Result
	// result, when set, is the job's whole result: an earlier attempt
	// saved its output, or there is nothing to write.
	result *ResynthesizeResult
}

// planResynthesis reads a resynthesis job's source (pass 1) and plans the
// job. jobID is the job's (a part's parent's): what it wrote is not stored
// state to a retry, which draws it again, identically.
func planResynthesis(ctx context.Context, st *store.Store, params map[string]any, jobID int, progress func(read, total int)) (*resynthesis, error) {
	r := &resynthesis{unannotated: map[string]int{}}
	if err := decodeParams(params, &r.p); err != nil {
		return nil, apperr.New(apperr.Invalid, "resynthesis parameters: %v", err)
	}
	p := &r.p
	if p.Set == "" {
		p.Set = "gold"
	}
	var err error
	if r.policy, r.policyJSON, err = p.policy(); err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	if r.src, err = st.CorpusByName(ctx, p.Corpus); err != nil {
		return nil, err
	}
	if r.total, err = st.CountDocuments(ctx, r.src, ""); err != nil {
		return nil, err
	}
	var before time.Time
	out, err := st.CorpusByName(ctx, p.Out)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return nil, err
	}
	if r.names, err = st.SurrogateNames(out, r.src.ID); err != nil {
		return nil, err
	}
	if out != nil {
		if err := p.checkTarget(out, r.src); err != nil {
			return nil, err
		}
		if err := st.RefuseOtherWriter(ctx, out, jobID); err != nil {
			return nil, err
		}
		if earlier := finishedRun(out, jobID); earlier != nil {
			// A retry of a job whose output was saved: it reports what it wrote.
			var saved ResynthesizeResult
			if err := decodeParams(map[string]any{"documents": earlier["documents"], "check": earlier["check"], "reused": earlier["reused"]}, &saved); err != nil {
				return nil, apperr.New(apperr.Internal, "corpus %q: the run of job %d: %v", out.Name, jobID, err)
			}
			r.result = &ResynthesizeResult{CorpusName: p.Out, Documents: saved.Documents, Check: saved.Check, Reused: saved.Reused,
				Message: "saved by an earlier attempt of this job"}
			return r, nil
		}
		if m := store.InProgress(out); m != nil && m.Job == jobID {
			r.marker, r.redo, before = m, m.Redo, m.Since
		} else {
			// A quarantined corpus's notes cannot be trusted: a rerun rewrites
			// and checks them all, and its check decides the quarantine.
			r.redo = out.CheckStatus == corpus.CheckStatusFailed
		}
		if !r.redo {
			if r.done, err = st.SurrogateOutlines(ctx, out, before); err != nil {
				return nil, err
			}
			r.unannotated, _ = release.Unannotated(out.Provenance)
		}
	}
	state, patientMappings, err := st.PlanState(ctx, r.src.ID, jobID)
	if err != nil {
		return nil, err
	}
	seed, err := st.SecretSeed(p.Seed, r.src.ID)
	if err != nil {
		return nil, err
	}
	if r.stream, err = surrogate.New(r.policy, nil, seed).Stream(state.Store); err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	r.reuse = state.Reuse()
	if patientMappings {
		// The patients' own mappings are read with their batch, in each pass.
		r.stream.LoadPatientState(func(patients []string) ([]surrogate.Mapping, error) {
			batch, err := st.PatientMappingsBefore(ctx, r.src.ID, jobID, patients)
			r.loadErr = err
			r.reuse.Batch(batch)
			return batch.Mappings, err
		})
	}

	// Pass 1 reads the source for what its values decide; memory holds one
	// batch of notes and those values. It forgets the target's notes whose
	// source changed since (their outlines differ), so that the second pass
	// splits alike without hashing every note again.
	read := 0
	if p.Parts > 1 {
		r.todoOf, r.notesOf = map[string]int{}, map[string]int{}
	}
	if err := st.EachBatch(ctx, r.src, p.Set, "", batchSize, func(batch []pipeline.Document) error {
		for _, d := range batch {
			if o, ok := r.done[r.names.Doc(d.ID)]; ok && o != surrogate.OutlineOf(d) {
				delete(r.done, r.names.Doc(d.ID))
			}
		}
		t, c := r.split(batch)
		if err := r.stream.Observe(t, c); err != nil {
			return r.invalid(err)
		}
		read += len(batch)
		r.todo += len(t)
		if r.todoOf != nil {
			for _, d := range t {
				r.todoOf[d.Patient]++
			}
			for _, d := range batch {
				r.notesOf[d.Patient]++
			}
		}
		progress(read, r.total)
		return ctx.Err()
	}); err != nil {
		return nil, err
	}
	if r.todo == 0 {
		r.result = &ResynthesizeResult{CorpusName: p.Out, Message: "every document is already resynthesized"}
		return r, nil
	}
	var force []string
	if r.marker != nil {
		force = r.marker.Redone
	}
	if r.plan, err = r.stream.Plan(force); err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	return r, nil
}

// split sorts a batch into the notes to write and those the target holds
// as they are.
func (r *resynthesis) split(batch []pipeline.Document) (todo, context []pipeline.Document) {
	for _, d := range batch {
		if _, ok := r.done[r.names.Doc(d.ID)]; ok {
			context = append(context, d)
		} else {
			todo = append(todo, d)
		}
	}
	return todo, context
}

// invalid is the error of a stream's step: the input's, unless reading the
// stored mappings failed.
func (r *resynthesis) invalid(err error) error {
	if r.loadErr != nil {
		return r.loadErr
	}
	return apperr.Wrap(apperr.Invalid, err)
}

// begin marks the target as written by job jobID (creating it if need be).
func (r *resynthesis) begin(ctx context.Context, st *store.Store, jobID int) (*ent.Corpus, *surrogate.RunState, error) {
	return st.BeginResynthesis(ctx, store.ResynthesisStart{SourceID: r.src.ID, Target: r.p.Out, TagSet: r.src.Tagset,
		From: r.p.Corpus, JobID: jobID, Redo: r.redo, Redone: r.plan.Redone, Redrawn: r.stream.Redrawn(), Dropped: r.plan.Dropped})
}

// rewritten is what a second pass wrote.
type rewritten struct {
	produced, written, newMappings int
	review                         []surrogate.ReviewItem
	annotated                      []string // notes of unannotated it rewrote
}

// rewrite is the second pass over the batches each gives (whole patients):
// it rewrites, checks and saves a batch at a time, each in a transaction of
// its own, for job jobID; a retry rewrites the batches an earlier attempt
// saved (for the check) without saving them again. A batch is saved, in
// order, while the next is read and rewritten.
func (r *resynthesis) rewrite(ctx context.Context, st *store.Store, jobID int, each func(context.Context, func([]pipeline.Document) error) error,
	target *ent.Corpus, marker *surrogate.RunState, checker *surrogate.Checker, progress func(read int)) (rewritten, error) {
	var rw rewritten
	read := 0
	pass := func(ctx context.Context, send func(*surrogate.Result) error) error {
		return each(ctx, func(batch []pipeline.Document) error {
			read += len(batch)
			t, c := r.split(batch)
			res, err := r.stream.Rewrite(t, c)
			if err != nil {
				return r.invalid(err)
			}
			if len(res.Docs) > 0 {
				checker.Add(batch, res)
				for _, d := range res.Docs {
					if id := r.names.Doc(d.ID); r.unannotated[id] > 0 {
						rw.annotated = append(rw.annotated, id)
					}
				}
				r.reuse.Add(res)
				rw.review = append(rw.review, res.Review...)
				rw.produced += len(res.Docs)
				for _, m := range res.Mappings {
					if m.New {
						rw.newMappings++
					}
				}
				if err := send(res); err != nil {
					return err
				}
			}
			progress(read)
			return ctx.Err()
		})
	}
	saved := 0
	err := seqs.Ahead(ctx, pass, func(res *surrogate.Result) error {
		n, err := st.SaveResynthesisBatch(ctx, store.ResynthesisBatch{SourceID: r.src.ID, TargetID: target.ID, JobID: jobID,
			Marker: marker, Result: res})
		if err != nil {
			return err
		}
		rw.written += n
		if saved++; batchSaved != nil {
			return batchSaved(saved)
		}
		return nil
	})
	return rw, err
}

// finish checks and counts the corpus-scope mappings the run used, saves
// them with the run's provenance and check, and saves the full check report.
func (r *resynthesis) finish(ctx context.Context, run *Run, target *ent.Corpus, marker *surrogate.RunState,
	checker *surrogate.Checker, rw rewritten) (Result, error) {
	st, p := run.Store, r.p
	review := append(slices.Clone(r.plan.Review), rw.review...)
	for _, id := range rw.annotated {
		delete(r.unannotated, id)
	}
	newMappings := rw.newMappings
	// The corpus-scope mappings the run used are checked and counted a
	// batch at a time (a million notes use millions), then saved.
	fin := r.stream.Finish()
	for batch := range seqs.Chunk(r.stream.CorpusMappings(), mappingCheckBatch) {
		part := &surrogate.Result{Mappings: batch}
		checker.Add(nil, part)
		r.reuse.Add(part)
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
	reused, err := st.Reused(ctx, r.reuse)
	if err != nil {
		return nil, err
	}
	var policyObj any
	json.Unmarshal(r.policyJSON, &policyObj)
	prov := map[string]any{
		"source": "resynthesis", "from": p.Corpus, "fromID": r.src.ID, "set": p.Set, "job": run.Job.ID,
		"seed": p.Seed, "policy": policyObj, "codeVersion": version.String(), "language": r.plan.Language,
		"documents": rw.produced, "redonePatients": len(r.plan.Redone), "newMappings": newMappings, "reused": reused, "check": summary,
		"labels": fin.Labels,
	}
	if p.Parts >= 2 {
		prov["parts"] = p.Parts
	}
	// A tagger's spans leave what it missed in the text: the run records
	// which tagger, and its held-out estimate of that risk, for the release
	// gate (pipeline/gate) and the datasheet.
	if t, err := taggerOf(ctx, st, r.src, p.Set); err != nil {
		return nil, err
	} else if t != nil {
		prov[gate.Key] = t
	}
	for _, l := range report.Unannotated {
		r.unannotated[r.names.Doc(l.Doc)]++
	}
	out, err := st.FinishResynthesis(ctx, store.ResynthesisEnd{SourceID: r.src.ID, TargetID: target.ID, JobID: run.Job.ID,
		Marker: marker, Provenance: prov, Mappings: r.stream.CorpusMappings(), Findings: findings, Unannotated: r.unannotated})
	if err != nil {
		return nil, err
	}
	full, err := json.Marshal(surrogate.CheckFile{Report: *report, Review: review})
	if err != nil {
		return nil, err
	}
	// The full report names original values beside their surrogates (review
	// items, leaks, values kept): it stays an artifact of the job, not part
	// of the surrogate corpus, sealed under the mapping keys.
	a, err := st.SaveArtifact(ctx, store.ArtifactSpec{Name: p.Out + "-check-report.json", ContentType: "application/json",
		JobID: run.Job.ID, CorpusID: r.src.ID, CreatedBy: run.Job.CreatedBy, Sealed: true}, full)
	if err != nil {
		return nil, err
	}
	var check CheckSummary
	if err := decodeParams(summary, &check); err != nil {
		return nil, err
	}
	result, err := resultOf(ResynthesizeResult{Corpus: out.ID, CorpusName: out.Name, Documents: rw.produced, Written: rw.written,
		RedonePatients: len(r.plan.Redone), NewMappings: newMappings, Reused: reused, Redo: r.redo, Check: &check,
		CheckReport: a.ID, Saved: rw.written > 0, CheckStatus: string(out.CheckStatus), CheckFindings: out.CheckFindings})
	if err != nil {
		return nil, err
	}
	if findings > 0 {
		return result, &CheckFailed{Message: fmt.Sprintf("the check found %d problems (%d leaks, %d source ids in the text, %d misaligned spans, "+
			"%d unannotated originals): corpus %q is quarantined (%d unresolved findings) until a rerun into it passes or a curator resolves them",
			findings, len(report.Leaks), len(report.Identifiers), len(report.Misaligned), len(report.Unannotated), out.Name, out.CheckFindings)}
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
func finishedRun(out *ent.Corpus, jobID int) map[string]any {
	if store.InProgress(out) != nil {
		return nil
	}
	runs, _ := out.Provenance["runs"].([]any)
	for _, r := range append([]any{out.Provenance}, runs...) {
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
		"equalToOriginal": len(r.EqualToOriginal), "metadata": len(r.Metadata), "propagated": len(r.Propagated),
		"review": r.Review, "namePatterns": patterns,
	}
}
