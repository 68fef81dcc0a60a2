package store

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/dateshift"
	"deidcorpus/ent/document"
	"deidcorpus/ent/job"
	"deidcorpus/ent/surrogatemapping"
	"deidcorpus/internal/keys"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/surrogate"
)

// SurrogateState is what earlier resynthesis jobs decided for a source
// corpus, and which job decided each part: MappingJobs[i] made Mappings[i],
// ShiftJobs[i] drew Shifts[i].
type SurrogateState struct {
	surrogate.Store
	MappingJobs, ShiftJobs []int
}

// SurrogateState returns what earlier resynthesis jobs decided for a source
// corpus: every mapping and every patient's date shift.
func (s *Store) SurrogateState(ctx context.Context, sourceID int) (SurrogateState, error) {
	var out SurrogateState
	ms, err := s.Client.SurrogateMapping.Query().Where(surrogatemapping.CorpusID(sourceID)).
		Order(ent.Asc(surrogatemapping.FieldID)).All(ctx)
	if err != nil {
		return out, err
	}
	var ring *keys.Ring
	if len(ms) > 0 {
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
	shifts, err := s.Client.DateShift.Query().Where(dateshift.CorpusID(sourceID)).
		Order(ent.Asc(dateshift.FieldPatient)).All(ctx)
	if err != nil {
		return out, err
	}
	for _, sh := range shifts {
		out.Shifts = append(out.Shifts, surrogate.PatientShift{Patient: sh.Patient, Days: sh.Days, AgeShift: sh.AgeShift})
		out.ShiftJobs = append(out.ShiftJobs, sh.JobID)
	}
	return out, nil
}

// Reuse is what a resynthesis took over from one earlier job instead of
// drawing it from its own seed.
type Reuse struct {
	Job      int    `json:"job"`
	Seed     any    `json:"seed"`   // the earlier job's seed
	Out      string `json:"corpus"` // the surrogate corpus the earlier job wrote
	Mappings int    `json:"mappings"`
	Shifts   int    `json:"shifts"`
}

// Reused tells, per earlier job, how many of the mappings and date shifts a
// run's result used were that job's rather than drawn by the run: the seed of
// a run governs only what it drew itself.
func (s *Store) Reused(ctx context.Context, state SurrogateState, res *surrogate.Result) ([]Reuse, error) {
	type key struct{ scope, category, typ, original string }
	mappingJob := make(map[key]int, len(state.Mappings))
	for i, m := range state.Mappings {
		mappingJob[key{m.Scope, m.Category, m.Type, m.Original}] = state.MappingJobs[i]
	}
	shiftJob := make(map[string]int, len(state.Shifts))
	for i, sh := range state.Shifts {
		shiftJob[sh.Patient] = state.ShiftJobs[i]
	}
	byJob := map[int]*Reuse{}
	reuse := func(job int) *Reuse {
		if byJob[job] == nil {
			byJob[job] = &Reuse{Job: job}
		}
		return byJob[job]
	}
	for _, m := range res.Mappings {
		if job, ok := mappingJob[key{m.Scope, m.Category, m.Type, m.Original}]; ok && !m.New {
			reuse(job).Mappings++
		}
	}
	for _, sh := range res.Shifts {
		if job, ok := shiftJob[sh.Patient]; ok && !sh.New {
			reuse(job).Shifts++
		}
	}
	ids := slices.Sorted(maps.Keys(byJob))
	jobs, err := s.Client.Job.Query().Where(job.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		byJob[j.ID].Seed = j.Params["seed"]
		byJob[j.ID].Out, _ = j.Params["out"].(string)
	}
	out := make([]Reuse, len(ids))
	for i, id := range ids {
		out[i] = *byJob[id]
	}
	return out, nil
}

// DocumentIDs lists the external ids of a corpus's documents.
func (s *Store) DocumentIDs(ctx context.Context, corpusID int) (map[string]bool, error) {
	ids, err := s.Client.Document.Query().Where(document.CorpusID(corpusID)).Select(document.FieldExternalID).Strings(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// Resynthesis is a resynthesis job's output to save.
type Resynthesis struct {
	SourceID int
	Target   string // name of the surrogate corpus; created if missing
	TagSet   string
	// Provenance of the run: a new or redone target's provenance, or an entry
	// of an existing target's provenance "runs".
	Provenance map[string]any
	Docs       []pipeline.Document
	Result     *surrogate.Result
	JobID      int
	// Findings is the number of problems the run's check found (0: passed).
	Findings int
	// Redo: Docs are every document of the target, rewritten; the run's
	// check covers the whole corpus and replaces the target's check state.
	Redo bool
}

// SaveResynthesis writes surrogate documents into the target corpus (as its
// gold set, of kind surrogate) together with the run's new mappings and date
// shifts and the corpus's check state, in one transaction: a corpus whose
// check failed is quarantined (check status failed: hidden from annotators
// and researchers, not releasable) from the moment its text is there. A run
// that adds notes to a corpus adds its findings to the corpus's and never
// lifts a quarantine, since the notes written before stay; a redo replaces
// the corpus's state with its own. It reports false when this job's output
// was already saved by an earlier attempt.
func (s *Store) SaveResynthesis(ctx context.Context, in Resynthesis) (*ent.Corpus, bool, error) {
	saved, err := s.Client.DateShift.Query().Where(dateshift.JobID(in.JobID)).Exist(ctx)
	if err != nil {
		return nil, false, err
	}
	if !saved {
		saved, err = s.Client.SurrogateMapping.Query().Where(surrogatemapping.JobID(in.JobID)).Exist(ctx)
		if err != nil {
			return nil, false, err
		}
	}
	if saved {
		c, err := s.CorpusByName(ctx, in.Target)
		return c, false, err
	}
	opt := ImportOptions{Corpus: in.Target, TagSet: in.TagSet, Set: "gold", Kind: "surrogate", Provenance: in.Provenance, Replace: in.Redo}
	if err := opt.defaults(); err != nil {
		return nil, false, err
	}
	ring, err := s.KeyRing()
	if err != nil {
		return nil, false, err
	}
	existing, _, tagset, err := s.importTarget(ctx, opt)
	if err != nil {
		return nil, false, err
	}
	if existing != nil && existing.Kind != corpus.KindSurrogate {
		return nil, false, apperr.New(apperr.Conflict, "corpus %q exists and holds original text: choose another name for the surrogate corpus", in.Target)
	}
	status := corpus.CheckStatusPassed
	if in.Findings > 0 {
		status = corpus.CheckStatusFailed
	}
	var target *ent.Corpus
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		c := existing
		if c == nil {
			if c, err = tx.Corpus.Create().SetName(in.Target).SetTagset(tagset).SetKind(corpus.KindSurrogate).
				SetProvenance(in.Provenance).SetCheckStatus(status).SetCheckFindings(in.Findings).Save(ctx); err != nil {
				return err
			}
		} else if err := recordRun(ctx, tx, c.ID, in, status); err != nil {
			return err
		}
		target = c
		set, err := getOrCreateSet(ctx, tx, c.ID, "gold", "surrogate")
		if err != nil {
			return err
		}
		if err := s.writeDocuments(ctx, tx, c.ID, set.ID, in.Docs, opt, &ImportResult{}); err != nil {
			return err
		}
		var ms []*ent.SurrogateMappingCreate
		for _, m := range in.Result.Mappings {
			if !m.New {
				continue
			}
			enc, hash, keyID := sealOriginal(ring, m.Original)
			ms = append(ms, tx.SurrogateMapping.Create().SetCorpusID(in.SourceID).SetScope(m.Scope).
				SetCategory(m.Category).SetType(m.Type).SetOriginalEnc(enc).SetOriginalHash(hash).SetKeyID(keyID).
				SetSurrogate(m.Surrogate).SetStrategy(m.Strategy).SetJobID(in.JobID))
			if len(ms) == spanBatch {
				if err := tx.SurrogateMapping.CreateBulk(ms...).Exec(ctx); err != nil {
					return err
				}
				ms = ms[:0]
			}
		}
		if len(ms) > 0 {
			if err := tx.SurrogateMapping.CreateBulk(ms...).Exec(ctx); err != nil {
				return err
			}
		}
		var shifts []*ent.DateShiftCreate
		for _, sh := range in.Result.Shifts {
			if sh.New {
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
		return nil, false, apperr.Wrap(apperr.Conflict, err)
	}
	if err != nil {
		return nil, false, err
	}
	c, err := s.Client.Corpus.Get(ctx, target.ID)
	return c, true, err
}

// CheckFindings counts the problems of a check summary (a resynthesis job's
// result "check", as the job makes it or as JSON decoded it): the findings
// that fail a check and quarantine its corpus.
func CheckFindings(summary map[string]any) int {
	n := 0
	for _, k := range []string{"misaligned", "leaks", "inconsistent", "intervalErrors", "equalToOriginal"} {
		switch v := summary[k].(type) {
		case int:
			n += v
		case float64:
			n += int(v)
		}
	}
	return n
}

// recordRun writes a resynthesis run into an existing target corpus's
// provenance and check state.
func recordRun(ctx context.Context, tx *ent.Tx, id int, in Resynthesis, status corpus.CheckStatus) error {
	c, err := tx.Corpus.Get(ctx, id)
	if err != nil {
		return err
	}
	upd := tx.Corpus.UpdateOneID(id)
	switch {
	case in.Redo:
		upd.SetProvenance(in.Provenance).SetCheckStatus(status).SetCheckFindings(in.Findings)
	case in.Findings > 0 && c.CheckStatus == corpus.CheckStatusFailed:
		upd.AddCheckFindings(in.Findings)
	case in.Findings > 0:
		upd.SetCheckStatus(status).SetCheckFindings(in.Findings)
	}
	if !in.Redo {
		prov := maps.Clone(c.Provenance)
		if prov == nil {
			prov = map[string]any{}
		}
		runs, _ := prov["runs"].([]any)
		prov["runs"] = append(runs, in.Provenance)
		upd.SetProvenance(prov)
	}
	return upd.Exec(ctx)
}

// refuseQuarantined refuses to take a quarantined corpus's text out of the
// quarantine (into a release, a derived corpus) while doing something.
func refuseQuarantined(c *ent.Corpus, doing string) error {
	if c.CheckStatus != corpus.CheckStatusFailed {
		return nil
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
// MappingOriginal decrypts one.
func (s *Store) SurrogateMappings(ctx context.Context, corpusName, scope string, limit, offset int) ([]*ent.SurrogateMapping, error) {
	c, err := s.CorpusByName(ctx, corpusName)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 10000 {
		return nil, apperr.New(apperr.Invalid, "first must be between 1 and 10000")
	}
	q := s.Client.SurrogateMapping.Query().Where(surrogatemapping.CorpusID(c.ID))
	if scope != "" {
		q.Where(surrogatemapping.Scope(scope))
	}
	return q.Order(ent.Asc(surrogatemapping.FieldID)).Limit(limit).Offset(offset).All(ctx)
}
