package store

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"entgo.io/ent/dialect"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/dateshift"
	"deidcorpus/ent/document"
	"deidcorpus/ent/job"
	"deidcorpus/ent/predicate"
	"deidcorpus/ent/surrogatemapping"
	"deidcorpus/internal/keys"
	"deidcorpus/internal/seqs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/release"
	"deidcorpus/pipeline/surrogate"
)

// surrogate.PriorState returns what earlier resynthesis jobs decided for a source
// corpus: every mapping and every patient's date shift.
func (s *Store) SurrogateState(ctx context.Context, sourceID int) (surrogate.PriorState, error) {
	return s.SurrogateStateBefore(ctx, sourceID, 0)
}

// surrogate.PriorStateBefore is surrogate.PriorState without what job jobID wrote: a
// retried attempt of a resynthesis sees the state its first attempt saw, and
// draws again what that attempt drew and saved.
func (s *Store) SurrogateStateBefore(ctx context.Context, sourceID, jobID int) (surrogate.PriorState, error) {
	out, err := s.mappingsBefore(ctx, sourceID, jobID)
	if err != nil {
		return out, err
	}
	return out, s.shiftsBefore(ctx, sourceID, jobID, &out)
}

// PlanState is what a resynthesis of a source reads at its start: what
// surrogate.PriorStateBefore returns for job jobID, but of the mappings only the
// corpus-scope ones; and whether there are patient-scope ones, which the run
// reads a batch of patients at a time (PatientMappingsBefore): at a million
// notes they are millions.
func (s *Store) PlanState(ctx context.Context, sourceID, jobID int) (state surrogate.PriorState, patientMappings bool, err error) {
	state, err = s.mappingsBefore(ctx, sourceID, jobID, surrogatemapping.Scope(surrogate.ScopeCorpus))
	if err != nil {
		return state, false, err
	}
	if err := s.shiftsBefore(ctx, sourceID, jobID, &state); err != nil {
		return state, false, err
	}
	patientMappings, err = s.Client.SurrogateMapping.Query().Where(surrogatemapping.CorpusID(sourceID),
		surrogatemapping.JobIDNEQ(jobID), surrogatemapping.ScopeNEQ(surrogate.ScopeCorpus)).Exist(ctx)
	return state, patientMappings, err
}

// PatientMappingsBefore returns the patient-scope mappings of some patients
// of a source, without those job jobID wrote (see surrogate.PriorStateBefore); the
// state holds no shifts.
func (s *Store) PatientMappingsBefore(ctx context.Context, sourceID, jobID int, patients []string) (surrogate.PriorState, error) {
	var out surrogate.PriorState
	for part := range slices.Chunk(patients, docBatch) {
		scopes := make([]string, len(part))
		for i, p := range part {
			scopes[i] = surrogate.PatientScope(p)
		}
		some, err := s.mappingsBefore(ctx, sourceID, jobID, surrogatemapping.ScopeIn(scopes...))
		if err != nil {
			return out, err
		}
		out.Mappings = append(out.Mappings, some.Mappings...)
		out.MappingJobs = append(out.MappingJobs, some.MappingJobs...)
	}
	return out, nil
}

// mappingsBefore reads and decrypts a source's mappings that job jobID did
// not write, those where says, in the order they were saved. The rows are
// read mappingReadBatch at a time: a rerun of a million notes reads about
// 1.5 million corpus-scope mappings, whose rows whole would cost several
// times their mappings.
func (s *Store) mappingsBefore(ctx context.Context, sourceID, jobID int, where ...predicate.SurrogateMapping) (surrogate.PriorState, error) {
	var out surrogate.PriorState
	var ring *keys.Ring
	for last := 0; ; {
		ms, err := s.Client.SurrogateMapping.Query().Where(surrogatemapping.CorpusID(sourceID), surrogatemapping.JobIDNEQ(jobID),
			surrogatemapping.IDGT(last)).Where(where...).Order(ent.Asc(surrogatemapping.FieldID)).Limit(mappingReadBatch).All(ctx)
		if err != nil {
			return out, err
		}
		if len(ms) > 0 && ring == nil {
			if ring, err = s.KeyRing(); err != nil {
				return out, err
			}
		}
		for _, m := range ms {
			original, err := openOriginal(ring, m.ID, m.KeyID, m.OriginalEnc, m.OriginalHash)
			if err != nil {
				return out, err
			}
			out.Mappings = append(out.Mappings, surrogate.Mapping{Scope: m.Scope, Category: m.Category, Type: m.Type,
				Original: original, Surrogate: m.Surrogate, Strategy: m.Strategy})
			out.MappingJobs = append(out.MappingJobs, m.JobID)
		}
		if len(ms) < mappingReadBatch {
			return out, nil
		}
		last = ms[len(ms)-1].ID
	}
}

// mappingReadBatch is how many mapping rows mappingsBefore reads at a time.
var mappingReadBatch = 10000

// shiftsBefore adds a source's date shifts that job jobID did not draw to
// out.
func (s *Store) shiftsBefore(ctx context.Context, sourceID, jobID int, out *surrogate.PriorState) error {
	shifts, err := s.Client.DateShift.Query().Where(dateshift.CorpusID(sourceID), dateshift.JobIDNEQ(jobID)).
		Order(ent.Asc(dateshift.FieldPatient)).All(ctx)
	if err != nil {
		return err
	}
	for _, sh := range shifts {
		out.Shifts = append(out.Shifts, surrogate.PatientShift{Patient: sh.Patient, Days: sh.Days, AgeShift: sh.AgeShift})
		out.ShiftJobs = append(out.ShiftJobs, sh.JobID)
	}
	return nil
}

// Reused tells, per earlier job, what a run took over (as counted), with the
// job's seed and the surrogate corpus it wrote.
func (s *Store) Reused(ctx context.Context, c *surrogate.ReuseCounter) ([]surrogate.Reuse, error) {
	jobs, err := s.Client.Job.Query().Where(job.IDIn(c.Jobs()...)).All(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[int]*ent.Job, len(jobs))
	for _, j := range jobs {
		byID[j.ID] = j
	}
	return c.Reused(func(id int) (any, string, bool) {
		j := byID[id]
		if j == nil {
			return nil, "", false
		}
		out, _ := j.Params["out"].(string)
		return j.Params["seed"], out, true
	}), nil
}

// DocumentIDs lists the external ids of a corpus's documents.
func (s *Store) DocumentIDs(ctx context.Context, corpusID int) (map[string]bool, error) {
	return s.DocumentIDsBefore(ctx, corpusID, time.Time{})
}

// DocumentIDsBefore lists the external ids of a corpus's documents written
// before a time (every document when it is zero): those a resynthesis found
// in its target when it began, not those it wrote since.
func (s *Store) DocumentIDsBefore(ctx context.Context, corpusID int, before time.Time) (map[string]bool, error) {
	q := s.Client.Document.Query().Where(document.CorpusID(corpusID))
	if !before.IsZero() {
		q.Where(document.ImportedAtLT(before))
	}
	ids, err := q.Select(document.FieldExternalID).Strings(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// SurrogateOutlines reads the outline (surrogate.Outline) of each document
// a surrogate corpus held before a time (every one when it is zero), a
// batch at a time: a resynthesis rewrites a source note whose outline
// differs from its surrogate's, one changed since.
func (s *Store) SurrogateOutlines(ctx context.Context, target *ent.Corpus, before time.Time) (map[string]surrogate.Outline, error) {
	ids, err := s.DocumentIDsBefore(ctx, target.ID, before)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	out := make(map[string]surrogate.Outline, len(ids))
	err = s.EachBatch(ctx, target, "gold", "", readBatch, func(docs []pipeline.Document) error {
		for _, d := range docs {
			if ids[d.ID] {
				out[d.ID] = surrogate.OutlineOf(d)
			}
		}
		return ctx.Err()
	})
	return out, err
}

// InProgress returns where the resynthesis writing into a corpus stands, if
// one is.
func InProgress(c *ent.Corpus) *surrogate.RunState {
	if c.State != corpus.StateResynthesizing {
		return nil
	}
	return c.Resynthesis
}

// ResynthesisStart is what a resynthesis decided in its first pass.
type ResynthesisStart struct {
	SourceID int
	Target   string // name of the surrogate corpus; created if missing
	TagSet   string
	From     string // the source corpus's name
	JobID    int
	Redo     bool // the target was quarantined: every note is rewritten
	// Redone are the patients whose earlier notes are rewritten; Redrawn,
	// those of them whose stored shift and patient-scope mappings are drawn
	// anew, and Dropped the stored corpus-scope mappings drawn anew: the
	// stored ones are deleted.
	Redone, Redrawn []string
	Dropped         []surrogate.Mapping
}

// BeginResynthesis marks the target of a resynthesis in progress (creating
// it if missing) and quarantines it until FinishResynthesis, and deletes the
// stored state the run replaces, in one transaction. A retried attempt of the
// same job finds its marker and changes nothing.
func (s *Store) BeginResynthesis(ctx context.Context, in ResynthesisStart) (*ent.Corpus, *surrogate.RunState, error) {
	opt := ImportOptions{Corpus: in.Target, TagSet: in.TagSet, Set: "gold", Kind: "surrogate"}
	if err := opt.defaults(); err != nil {
		return nil, nil, err
	}
	ring, err := s.KeyRing()
	if err != nil {
		return nil, nil, err
	}
	existing, _, tagset, err := s.importTarget(ctx, opt)
	if err != nil {
		return nil, nil, err
	}
	if existing != nil && existing.Kind != corpus.KindSurrogate {
		return nil, nil, apperr.New(apperr.Conflict, "corpus %q exists and holds original text: choose another name for the surrogate corpus", in.Target)
	}
	if existing != nil {
		if m := InProgress(existing); m != nil && m.Job == in.JobID {
			return existing, m, nil
		}
	}
	// Found before the write transaction, which they would hold up: no
	// index leads by the keyed hash.
	dropped, err := s.mappingIDs(ctx, ring, in.SourceID, in.Dropped)
	if err != nil {
		return nil, nil, err
	}
	m := &surrogate.RunState{Job: in.JobID, Since: time.Now().UTC(), Redo: in.Redo, Redone: in.Redone, Status: string(corpus.CheckStatusNone),
		Created: existing == nil}
	var target *ent.Corpus
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		if existing == nil {
			target, err = tx.Corpus.Create().SetName(in.Target).SetTagset(tagset).SetKind(corpus.KindSurrogate).SetIds(corpus.IdsPseudonymous).
				SetProvenance(map[string]any{"source": "resynthesis", "from": in.From, "fromID": in.SourceID}).
				SetOrigin(corpus.OriginResynthesis).SetSourceID(in.SourceID).
				SetState(corpus.StateResynthesizing).SetResynthesis(m).SetCheckStatus(corpus.CheckStatusFailed).Save(ctx)
			if err != nil {
				return err
			}
		} else {
			q := tx.Corpus.Query().Where(corpus.ID(existing.ID))
			if s.Dialect == dialect.Postgres {
				q.ForUpdate() // two jobs starting at once see each other's marker (SQLite has one writer)
			}
			cur, err := q.Only(ctx)
			if err != nil {
				return err
			}
			existing = cur
			if prior := InProgress(existing); prior != nil {
				if err := refuseLiveWriter(ctx, tx.Job, fmt.Sprintf("corpus %q", existing.Name), prior.Job); err != nil {
					return err
				}
				// An abandoned run's: the target was quarantined before it too.
				m.Status, m.Findings = prior.Status, prior.Findings
			} else {
				m.Status, m.Findings = string(existing.CheckStatus), existing.CheckFindings
			}
			if target, err = tx.Corpus.UpdateOneID(existing.ID).SetState(corpus.StateResynthesizing).SetResynthesis(m).
				SetCheckStatus(corpus.CheckStatusFailed).Save(ctx); err != nil {
				return err
			}
		}
		if _, err := getOrCreateSet(ctx, tx, target.ID, "gold", "surrogate"); err != nil {
			return err
		}
		return dropReplacedState(ctx, tx, in, dropped)
	})
	if ent.IsConstraintError(err) {
		return nil, nil, apperr.Wrap(apperr.Conflict, err)
	}
	if err != nil {
		return nil, nil, err
	}
	return target, m, nil
}

// RefuseOtherWriter refuses to let job jobID write surrogate corpus c while
// another resynthesis job, still queued or running, writes it: their
// batches would interleave. A job that ended without finishing the corpus
// has abandoned it, and a new one takes it over. A job asks before its first
// pass; BeginResynthesis asks again, atomically, before it writes.
func (s *Store) RefuseOtherWriter(ctx context.Context, c *ent.Corpus, jobID int) error {
	if m := InProgress(c); m != nil && m.Job != jobID {
		return refuseLiveWriter(ctx, s.Client.Job, fmt.Sprintf("corpus %q", c.Name), m.Job)
	}
	return nil
}

// refuseLiveWriter is a conflict while job jobID, which began writing what
// (a corpus, an annotation set), is queued or running: a job that ended
// without finishing it has abandoned it.
func refuseLiveWriter(ctx context.Context, jobs *ent.JobClient, what string, jobID int) error {
	j, err := jobs.Get(ctx, jobID)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if j.Status == job.StatusQueued || j.Status == job.StatusRunning {
		return apperr.New(apperr.Conflict, "%s is being written by %s job %d (%s): wait for it, or cancel it, before writing it again",
			what, j.Kind, jobID, j.Status)
	}
	return nil
}

// ResynthesisBatch is one batch of a resynthesis's output.
type ResynthesisBatch struct {
	SourceID, TargetID, JobID int
	Marker                    *surrogate.RunState
	Result                    *surrogate.Result // the batch's documents, patient-scope mappings and shifts
}

// SaveResynthesisBatch writes one batch of surrogate documents into the
// target's gold set with its new mappings and date shifts, in a transaction
// of its own. The patients whose documents an earlier attempt of the job
// already wrote are skipped. It returns how many documents it wrote.
func (s *Store) SaveResynthesisBatch(ctx context.Context, in ResynthesisBatch) (int, error) {
	ring, err := s.KeyRing()
	if err != nil {
		return 0, err
	}
	target, err := s.Client.Corpus.Get(ctx, in.TargetID)
	if err != nil {
		return 0, Coded(err)
	}
	names, err := s.SurrogateNames(target, in.SourceID)
	if err != nil {
		return 0, err
	}
	ids := make([]string, len(in.Result.Docs))
	for i, d := range in.Result.Docs {
		ids[i] = names.Doc(d.ID)
	}
	written, err := s.Client.Document.Query().Where(document.CorpusID(in.TargetID), document.ExternalIDIn(ids...),
		document.ImportedAtGTE(in.Marker.Since)).Select(document.FieldExternalID).Strings(ctx)
	if err != nil {
		return 0, Coded(err)
	}
	skip := map[string]bool{} // patients, by their source ids
	if len(written) > 0 {
		w := map[string]bool{}
		for _, id := range written {
			w[id] = true
		}
		for i, d := range in.Result.Docs {
			if w[ids[i]] {
				skip[d.Patient] = true
			}
		}
	}
	var docs []pipeline.Document
	for _, d := range in.Result.Docs {
		if !skip[d.Patient] {
			names.Rename(&d)
			docs = append(docs, d)
		}
	}
	if len(docs) == 0 {
		return 0, nil
	}
	// The job tells its documents by an import time at or after the
	// marker's, which the machine that began the job took from its clock: a
	// writer whose clock is behind stamps that time, so that its documents
	// still count as the job's (a part on another machine, or a retry).
	opt := ImportOptions{Set: "gold", Replace: true, importedAt: time.Now().UTC()}
	if floor := in.Marker.Since.Truncate(time.Microsecond).Add(time.Microsecond); opt.importedAt.Before(floor) {
		opt.importedAt = floor
	}
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		// A part of a split job still running when another job has taken
		// the target over (its job failed, a new one began) writes nothing.
		c, err := tx.Corpus.Get(ctx, in.TargetID)
		if err != nil {
			return err
		}
		if m := InProgress(c); m == nil || m.Job != in.JobID {
			return apperr.New(apperr.Conflict, "corpus %q is not being written by job %d", c.Name, in.JobID)
		}
		set, err := getOrCreateSet(ctx, tx, in.TargetID, "gold", "surrogate")
		if err != nil {
			return err
		}
		if err := s.writeDocuments(ctx, tx, in.TargetID, set.ID, docs, opt, &ImportResult{}); err != nil {
			return err
		}
		var ms []surrogate.Mapping
		for _, m := range in.Result.Mappings {
			if m.New && !skip[strings.TrimPrefix(m.Scope, "patient:")] {
				ms = append(ms, m)
			}
		}
		if err := s.saveMappings(ctx, tx, ring, in.SourceID, in.JobID, ms); err != nil {
			return err
		}
		var shifts []*ent.DateShiftCreate
		for _, sh := range in.Result.Shifts {
			if sh.New && !skip[sh.Patient] {
				shifts = append(shifts, tx.DateShift.Create().SetCorpusID(in.SourceID).SetPatient(sh.Patient).
					SetDays(sh.Days).SetAgeShift(sh.AgeShift).SetJobID(in.JobID))
			}
		}
		for start := 0; start < len(shifts); start += docBatch {
			if err := tx.DateShift.CreateBulk(shifts[start:min(start+docBatch, len(shifts))]...).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if ent.IsConstraintError(err) {
		return 0, apperr.Wrap(apperr.Conflict, err)
	}
	return len(docs), err
}

// mappingInsert writes surrogate mappings (see saveMappings).
var mappingInsert = rowInsert{table: "surrogate_mappings",
	columns: []string{"corpus_id", "scope", "category", `"type"`, "original_enc", "original_hash", "key_id", "surrogate", "strategy", "job_id", "created_at"}}

// saveMappings stores mappings a job drew, their originals sealed. A source
// deleted while the job ran is an error: its mappings and date shifts were
// deleted with it, and new ones would keep its originals for nothing.
func (s *Store) saveMappings(ctx context.Context, tx *ent.Tx, ring *keys.Ring, sourceID, jobID int, mappings []surrogate.Mapping) error {
	if ok, err := tx.Corpus.Query().Where(corpus.ID(sourceID)).Exist(ctx); err != nil {
		return err
	} else if !ok {
		return apperr.New(apperr.NotFound, "the source corpus (id %d) was deleted while job %d ran: nothing of it is kept", sourceID, jobID)
	}
	now := time.Now()
	args := make([]any, 0, len(mappings)*len(mappingInsert.columns))
	for _, m := range mappings {
		enc, hash, keyID := sealOriginal(ring, m.Original)
		args = append(args, sourceID, m.Scope, m.Category, m.Type, enc, hash, keyID, m.Surrogate, m.Strategy, jobID, now)
	}
	if err := s.insertRows(ctx, tx, &mappingInsert, args); err != nil {
		return fmt.Errorf("insert surrogate mappings: %w", err)
	}
	return nil
}

// mappingBatch is how many corpus-scope mappings FinishResynthesis saves in
// one transaction (tests set fewer).
var mappingBatch = 2000

// ResynthesisEnd is what a resynthesis records when every batch is saved.
type ResynthesisEnd struct {
	SourceID, TargetID, JobID int
	Marker                    *surrogate.RunState
	// Provenance of the run: a new or redone target's provenance, or an entry
	// of an existing target's provenance "runs".
	Provenance map[string]any
	Mappings   iter.Seq[surrogate.Mapping] // the corpus-scope mappings the run used; the new ones are stored
	// Findings is the number of problems the run's check found (0: passed).
	Findings int
	// Unannotated counts, per note of the target, the originals its
	// surrogate holds where the source's gold has no span, as of this run
	// (earlier runs' counts for notes it did not rewrite included).
	Unannotated map[string]int
}

// FinishResynthesis stores a resynthesis's new corpus-scope mappings, then
// records its provenance and check state on the target, lifting the
// in-progress marker, in one transaction: a target whose check failed stays
// quarantined (hidden from annotators and researchers, not releasable). A
// run that adds notes to a corpus adds its findings to the corpus's and never
// lifts a quarantine, since the notes written before stay; a new or redone
// target takes the run's check state.
//
// The mappings are saved mappingBatch to a transaction: a million-note corpus
// has hundreds of thousands, and one transaction of them all held SQLite's
// single writer for seconds (River's leader election timed out behind it).
// Those an earlier attempt of the job saved before it stopped are not saved
// again: the job's own rows are never state it reads (surrogate.PriorStateBefore),
// so a retry draws them again, identically.
func (s *Store) FinishResynthesis(ctx context.Context, in ResynthesisEnd) (*ent.Corpus, error) {
	ring, err := s.KeyRing()
	if err != nil {
		return nil, err
	}
	writing := func(c *ent.Corpus) error {
		if m := InProgress(c); m == nil || m.Job != in.JobID {
			return apperr.New(apperr.Conflict, "corpus %q is not being written by job %d", c.Name, in.JobID)
		}
		return nil
	}
	c, err := s.Client.Corpus.Get(ctx, in.TargetID)
	if err != nil {
		return nil, Coded(err)
	}
	if err := writing(c); err != nil {
		return nil, err
	}
	earlier, err := s.Client.SurrogateMapping.Query().Where(surrogatemapping.CorpusID(in.SourceID),
		surrogatemapping.JobID(in.JobID), surrogatemapping.Scope(surrogate.ScopeCorpus)).
		Select(surrogatemapping.FieldType, surrogatemapping.FieldOriginalHash).All(ctx)
	if err != nil {
		return nil, err
	}
	saved := map[[2]string]bool{} // by an earlier attempt of this job
	for _, m := range earlier {
		saved[[2]string{m.Type, m.OriginalHash}] = true
	}
	// The new mappings are gathered a batch at a time: a run over a million
	// notes uses millions of corpus-scope mappings, which come one at a time.
	unsaved := func(yield func(surrogate.Mapping) bool) {
		for m := range in.Mappings {
			// A first attempt saved nothing: it skips the HMAC of every mapping.
			if m.New && (len(saved) == 0 || !saved[[2]string{m.Type, ring.Hash(m.Original)}]) && !yield(m) {
				return
			}
		}
	}
	if in.Mappings != nil {
		for part := range seqs.Chunk(unsaved, mappingBatch) {
			if err := s.withTx(ctx, func(tx *ent.Tx) error {
				return s.saveMappings(ctx, tx, ring, in.SourceID, in.JobID, part)
			}); err != nil {
				return nil, err
			}
		}
	}
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		c, err := tx.Corpus.Get(ctx, in.TargetID)
		if err != nil {
			return err
		}
		if err := writing(c); err != nil {
			return err
		}
		status, findings := corpus.CheckStatusPassed, in.Findings
		if in.Findings > 0 {
			status = corpus.CheckStatusFailed
		}
		prov := maps.Clone(c.Provenance)
		switch prior := corpus.CheckStatus(in.Marker.Status); {
		case in.Marker.Created || in.Marker.Redo:
			prov = in.Provenance
		case prior == corpus.CheckStatusFailed:
			status, findings = prior, in.Marker.Findings+in.Findings
		case in.Findings == 0:
			status, findings = prior, in.Marker.Findings
		}
		if !in.Marker.Created && !in.Marker.Redo {
			runs, _ := prov["runs"].([]any)
			prov["runs"] = append(runs, in.Provenance)
		}
		// Kept even when empty: a corpus from before the count has none.
		prov = maps.Clone(prov) // in.Provenance may be prov: the run's own record stays as it was
		counts := in.Unannotated
		if counts == nil {
			counts = map[string]int{}
		}
		prov[release.UnannotatedKey] = counts
		return tx.Corpus.UpdateOneID(c.ID).SetProvenance(prov).SetCheckStatus(status).SetCheckFindings(findings).
			SetState(corpus.StateReady).ClearResynthesis().Exec(ctx)
	})
	if ent.IsConstraintError(err) {
		return nil, apperr.Wrap(apperr.Conflict, err)
	}
	if err != nil {
		return nil, err
	}
	c, err = s.Client.Corpus.Get(ctx, in.TargetID)
	return c, Coded(err)
}

// CheckFindings counts the problems of a check summary (a resynthesis job's
// result "check", as the job makes it or as JSON decoded it): the findings
// that fail a check and quarantine its corpus ("identifiers": source patient
// and note ids in the text), and the unannotated finds, originals that the
// run copied where the gold has no span and no annotated value's surrogate
// replaced (see surrogate.Propagation): they pass the check, which lists
// them, but researchers read the corpus through the API, so they quarantine
// it as well until a curator resolves them. A summary that says the check
// failed ("ok": false) counts one at least: a kind of finding the check has
// and this list lacks, or its maker does not count, still quarantines the
// corpus.
func CheckFindings(summary map[string]any) int {
	n := 0
	for _, k := range []string{"misaligned", "leaks", "identifiers", "inconsistent", "intervalErrors", "equalToOriginal", "metadata", "unannotated"} {
		switch v := summary[k].(type) {
		case int:
			n += v
		case float64:
			n += int(v)
		}
	}
	if ok, known := summary["ok"].(bool); known && !ok {
		n = max(n, 1)
	}
	return n
}

// refuseTakingOut refuses to take a corpus's text out (into a release, a
// derived corpus) while doing something when it is not whole: quarantined,
// or imported in part.
func refuseTakingOut(c *ent.Corpus, doing string) error {
	if unfinishedImport(c) {
		return apperr.New(apperr.Conflict, "corpus %q holds an import that has not finished: complete it (import the same "+
			"files again with --replace) before %s", c.Name, doing)
	}
	if c.CheckStatus != corpus.CheckStatusFailed {
		return nil
	}
	if m := InProgress(c); m != nil {
		return apperr.New(apperr.Conflict, "corpus %q is being written by resynthesis job %d: it is quarantined until the job has checked it; wait for it before %s",
			c.Name, m.Job, doing)
	}
	return apperr.New(apperr.Conflict, "corpus %q is quarantined: its resynthesis check has %d unresolved findings; "+
		"rerun the resynthesis into it or resolve the findings (resolveCheckFindings, deidcorpus resynth resolve) before %s",
		c.Name, c.CheckFindings, doing)
}

// ResolveCheckFindings lifts a corpus's quarantine: a curator has reviewed
// every finding of its failed checks (values that are no PHI, say) and says
// why they may stand. The reason, who gave it and how many findings it
// covers stay on the corpus (check_resolution); the operation is audited.
func (s *Store) ResolveCheckFindings(ctx context.Context, corpusName, reason, by string) (*ent.Corpus, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, apperr.New(apperr.Invalid, "resolving check findings needs a reason")
	}
	c, err := s.CorpusByName(ctx, corpusName)
	if err != nil {
		return nil, err
	}
	if m := InProgress(c); m != nil {
		return nil, apperr.New(apperr.Conflict, "corpus %q is being written by resynthesis job %d: it has no check to resolve yet", c.Name, m.Job)
	}
	if c.CheckStatus != corpus.CheckStatusFailed {
		return nil, apperr.New(apperr.Conflict, "corpus %q has no unresolved check findings (its check is %s)", c.Name, c.CheckStatus)
	}
	n, err := s.Client.Corpus.Update().
		Where(corpus.ID(c.ID), corpus.CheckStatusEQ(corpus.CheckStatusFailed), corpus.CheckFindings(c.CheckFindings)).
		SetCheckStatus(corpus.CheckStatusResolved).SetCheckFindings(0).
		SetCheckResolution(map[string]any{"by": by, "at": time.Now().UTC().Format(time.RFC3339), "reason": reason,
			"findings": c.CheckFindings}).
		Save(ctx)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, apperr.New(apperr.Conflict, "the check findings of corpus %q changed meanwhile (a resynthesis ran): review them again", c.Name)
	}
	return s.Client.Corpus.Get(ctx, c.ID)
}

// SurrogateMappings lists a source corpus's stored mappings, optionally of one
// scope, in the order they were made. Their original values are encrypted:
// MappingOriginal decrypts one. A surrogate corpus's name stands for its
// source: the mappings are the source's, shared by every corpus made from it.
func (s *Store) SurrogateMappings(ctx context.Context, corpusName, scope string, limit, offset int) ([]*ent.SurrogateMapping, error) {
	c, err := s.CorpusByName(ctx, corpusName)
	if err != nil {
		return nil, err
	}
	if c.Kind == corpus.KindSurrogate {
		if c, err = s.surrogateSource(ctx, c); err != nil {
			return nil, err
		}
	}
	if err := CheckPage("first", limit); err != nil {
		return nil, err
	}
	q := s.Client.SurrogateMapping.Query().Where(surrogatemapping.CorpusID(c.ID))
	if scope != "" {
		q.Where(surrogatemapping.Scope(scope))
	}
	return q.Order(ent.Asc(surrogatemapping.FieldID)).Limit(limit).Offset(offset).All(ctx)
}

// dropReplacedState deletes what a run replaces: the date shift and
// patient-scope mappings of each patient it draws anew (their notes collided
// with them), and the corpus-scope mappings it redraws (by id, see
// mappingIDs).
func dropReplacedState(ctx context.Context, tx *ent.Tx, in ResynthesisStart, dropped []int) error {
	if len(in.Redrawn) > 0 {
		scopes := make([]string, len(in.Redrawn))
		for i, p := range in.Redrawn {
			scopes[i] = surrogate.PatientScope(p)
		}
		if _, err := tx.DateShift.Delete().Where(dateshift.CorpusID(in.SourceID), dateshift.PatientIn(in.Redrawn...)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.SurrogateMapping.Delete().Where(surrogatemapping.CorpusID(in.SourceID), surrogatemapping.ScopeIn(scopes...)).Exec(ctx); err != nil {
			return err
		}
	}
	for batch := range slices.Chunk(dropped, spanBatch) {
		if _, err := tx.SurrogateMapping.Delete().Where(surrogatemapping.IDIn(batch...)).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// mappingIDs are the ids of a source's stored mappings of ms (by scope, type
// and keyed hash). No index leads by the hash (each new mapping would go to
// a random page of it): each scope's rows are read once, a row at a time.
func (s *Store) mappingIDs(ctx context.Context, ring *keys.Ring, corpusID int, ms []surrogate.Mapping) ([]int, error) {
	want := map[string]map[[2]string]bool{} // scope -> (type, hash)
	for _, m := range ms {
		if want[m.Scope] == nil {
			want[m.Scope] = map[[2]string]bool{}
		}
		want[m.Scope][[2]string{m.Type, ring.Hash(m.Original)}] = true
	}
	var ids []int
	for _, scope := range slices.Sorted(maps.Keys(want)) {
		rows, err := s.reader().QueryContext(ctx, s.rebind(`SELECT id, "type", original_hash FROM surrogate_mappings WHERE corpus_id = ? AND scope = ?`),
			corpusID, scope)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int
			var k [2]string
			if err := rows.Scan(&id, &k[0], &k[1]); err != nil {
				rows.Close()
				return nil, err
			}
			if want[scope][k] {
				ids = append(ids, id)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
	}
	return ids, nil
}
