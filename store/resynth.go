package store

import (
	"context"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/dateshift"
	"deidcorpus/ent/document"
	"deidcorpus/ent/surrogatemapping"
	"deidcorpus/internal/keys"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/surrogate"
)

// SurrogateState returns what earlier resynthesis jobs decided for a source
// corpus: every mapping and every patient's date shift.
func (s *Store) SurrogateState(ctx context.Context, sourceID int) (surrogate.Store, error) {
	var out surrogate.Store
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
	}
	shifts, err := s.Client.DateShift.Query().Where(dateshift.CorpusID(sourceID)).
		Order(ent.Asc(dateshift.FieldPatient)).All(ctx)
	if err != nil {
		return out, err
	}
	for _, sh := range shifts {
		out.Shifts = append(out.Shifts, surrogate.PatientShift{Patient: sh.Patient, Days: sh.Days, AgeShift: sh.AgeShift})
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
	SourceID   int
	Target     string // name of the surrogate corpus; created if missing
	TagSet     string
	Provenance map[string]any // of a new target corpus
	Docs       []pipeline.Document
	Result     *surrogate.Result
	JobID      int
}

// SaveResynthesis writes surrogate documents into the target corpus (as its
// gold set, of kind surrogate) together with the run's new mappings and date
// shifts, in one transaction. It reports false when this job's output was
// already saved by an earlier attempt.
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
	opt := ImportOptions{Corpus: in.Target, TagSet: in.TagSet, Set: "gold", Kind: "surrogate", Provenance: in.Provenance}
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
	var target *ent.Corpus
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		c := existing
		if c == nil {
			if c, err = tx.Corpus.Create().SetName(in.Target).SetTagset(tagset).SetKind(corpus.KindSurrogate).
				SetProvenance(in.Provenance).Save(ctx); err != nil {
				return err
			}
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
