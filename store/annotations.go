package store

import (
	"context"
	"fmt"
	"slices"

	"entgo.io/ent/dialect"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/document"
	"deidcorpus/pipeline"
)

// An annotation set a job writes a batch at a time (BeginAnnotations,
// AppendAnnotations, FinishAnnotations) carries two provenance entries until
// the job finishes it: provWriting, the job writing it, and provWritten, the
// patients whose documents are written, as ranges of patient ids in the
// order EachBatch reads them. AnnotationSet refuses a set being written, so
// that nothing evaluates, releases, exports or counts half a set; a retried
// attempt of the job reads the ranges to skip what is written.
const (
	provWriting = "writing"
	provWritten = "written"
)

// BeginAnnotations creates an annotation set that a job will write a batch
// at a time, marked as being written. A set of that name made by the same
// job is returned as it is (a retried job resumes it, or finds it finished).
// One that a job which has ended left half written is abandoned: it is
// removed and made anew. Any other is a conflict.
func (s *Store) BeginAnnotations(ctx context.Context, c *ent.Corpus, setName, kind string, provenance map[string]any, jobID int) (*ent.AnnotationSet, error) {
	set, err := s.Client.AnnotationSet.Query().Where(annotationset.CorpusID(c.ID), annotationset.Name(setName)).Only(ctx)
	if err == nil {
		if job, _ := set.Provenance["job"].(float64); jobID != 0 && int(job) == jobID {
			return set, nil
		}
		if err := s.refuseTakeover(ctx, c, set); err != nil {
			return nil, err
		}
		if err := s.Client.AnnotationSet.DeleteOneID(set.ID).Exec(ctx); err != nil {
			return nil, err
		}
	} else if !ent.IsNotFound(err) {
		return nil, err
	}
	if err := annotationsKind(kind); err != nil {
		return nil, err
	}
	prov := make(map[string]any, len(provenance)+2)
	for k, v := range provenance {
		prov[k] = v
	}
	prov[provWriting] = jobID
	prov[provWritten] = []any{}
	set, err = s.Client.AnnotationSet.Create().SetCorpusID(c.ID).SetName(setName).
		SetKind(annotationset.Kind(kind)).SetProvenance(prov).Save(ctx)
	if ent.IsConstraintError(err) { // made meanwhile by someone else
		return nil, apperr.New(apperr.Conflict, "corpus %q already has an annotation set %q", c.Name, setName)
	}
	return set, err
}

// AnnotationSetFree refuses a set name that BeginAnnotations would refuse a
// new job (conflict), so that a job which writes the set is refused when it
// is queued rather than failing in a worker. A set that a job which has ended
// left half written is free: the new job makes it anew.
func (s *Store) AnnotationSetFree(ctx context.Context, c *ent.Corpus, name string) error {
	set, err := s.Client.AnnotationSet.Query().Where(annotationset.CorpusID(c.ID), annotationset.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.refuseTakeover(ctx, c, set)
}

// refuseTakeover refuses a new writer an existing set (conflict) unless a
// job which has ended left it half written.
func (s *Store) refuseTakeover(ctx context.Context, c *ent.Corpus, set *ent.AnnotationSet) error {
	writer, writing := writingJob(set)
	if !writing {
		return apperr.New(apperr.Conflict, "corpus %q already has an annotation set %q", c.Name, set.Name)
	}
	return refuseLiveWriter(ctx, s.Client.Job, fmt.Sprintf("annotation set %q of corpus %q", set.Name, c.Name), writer)
}

func annotationsKind(kind string) error {
	if err := annotationset.KindValidator(annotationset.Kind(kind)); err != nil {
		return apperr.New(apperr.Invalid, "unknown annotation set kind %q (known: %s, %s, %s, %s, %s)", kind,
			annotationset.KindGold, annotationset.KindAnnotator, annotationset.KindAdjudicated, annotationset.KindSystem, annotationset.KindSurrogate)
	}
	return nil
}

// Written tells whether a patient's documents are written to a set: all of
// them in a finished set, those in the ranges its batches recorded in one
// being written.
func Written(set *ent.AnnotationSet) func(patient string) bool {
	if _, writing := set.Provenance[provWriting]; !writing {
		return func(string) bool { return true }
	}
	ranges := writtenRanges(set.Provenance)
	return func(patient string) bool {
		for _, r := range ranges {
			if r[0] <= patient && patient <= r[1] {
				return true
			}
		}
		return false
	}
}

// writtenRanges reads the provWritten entry (a JSON list of [first, last]
// patient id pairs).
func writtenRanges(prov map[string]any) [][2]string {
	list, _ := prov[provWritten].([]any)
	out := make([][2]string, 0, len(list))
	for _, v := range list {
		switch r := v.(type) {
		case []any: // decoded from the database
			if len(r) == 2 {
				a, _ := r[0].(string)
				b, _ := r[1].(string)
				out = append(out, [2]string{a, b})
			}
		case []string: // written by this process, not yet reloaded
			if len(r) == 2 {
				out = append(out, [2]string{r[0], r[1]})
			}
		}
	}
	return out
}

// AppendAnnotations writes one batch of a set being written (whole patients,
// in EachBatch's order), in a transaction of its own that also records the
// batch's patients as written. after is the patient read just before the
// batch ("" for the first): a range that ends there is extended rather than
// a new one added, so that a job that writes in order keeps one range.
func (s *Store) AppendAnnotations(ctx context.Context, c *ent.Corpus, set *ent.AnnotationSet, after string, docs []pipeline.Document) error {
	if len(docs) == 0 {
		return nil
	}
	first, last := docs[0].Patient, docs[0].Patient
	for _, d := range docs {
		first, last = min(first, d.Patient), max(last, d.Patient)
	}
	opt := ImportOptions{Corpus: c.Name, Set: set.Name, Kind: string(set.Kind)}
	if err := opt.defaults(); err != nil {
		return err
	}
	return s.withTx(ctx, func(tx *ent.Tx) error {
		q := tx.AnnotationSet.Query().Where(annotationset.ID(set.ID))
		if s.Dialect == dialect.Postgres {
			// The parts of a split job append at once: the ranges are
			// read and written under the row's lock (SQLite has one writer).
			q.ForUpdate()
		}
		cur, err := q.Only(ctx)
		if err != nil {
			return err
		}
		if _, writing := cur.Provenance[provWriting]; !writing {
			return apperr.New(apperr.Conflict, "annotation set %q of corpus %q is finished: no batch can be added", set.Name, c.Name)
		}
		if err := s.writeDocuments(ctx, tx, c.ID, set.ID, docs, opt, &ImportResult{}); err != nil {
			return err
		}
		ranges := writtenRanges(cur.Provenance)
		if i := slices.IndexFunc(ranges, func(r [2]string) bool { return after != "" && r[1] == after }); i >= 0 {
			ranges[i][1] = max(ranges[i][1], last)
		} else {
			ranges = append(ranges, [2]string{first, last})
		}
		list := make([]any, len(ranges))
		for i, r := range ranges {
			list[i] = []string{r[0], r[1]}
		}
		prov := cur.Provenance
		prov[provWritten] = list
		return tx.AnnotationSet.UpdateOneID(set.ID).SetProvenance(prov).Exec(ctx)
	})
}

// FinishAnnotations marks a set as written: from then on it reads as any
// other. Finishing a finished set does nothing.
func (s *Store) FinishAnnotations(ctx context.Context, set *ent.AnnotationSet) (*ent.AnnotationSet, error) {
	var out *ent.AnnotationSet
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		cur, err := tx.AnnotationSet.Get(ctx, set.ID)
		if err != nil {
			return err
		}
		out = cur
		if _, writing := cur.Provenance[provWriting]; !writing {
			return nil
		}
		prov := cur.Provenance
		delete(prov, provWriting)
		delete(prov, provWritten)
		out, err = tx.AnnotationSet.UpdateOneID(set.ID).SetProvenance(prov).Save(ctx)
		return err
	})
	return out, err
}

// SetSpans returns docs (documents of the set's corpus, by id) with their
// spans in set instead of their own, in offset order: a batch read with one
// set's spans (EachBatch) gets another's, and a retried job reads back what
// an earlier attempt wrote.
func (s *Store) SetSpans(ctx context.Context, set *ent.AnnotationSet, docs []pipeline.Document) ([]pipeline.Document, error) {
	out := make([]pipeline.Document, len(docs))
	index := make(map[string]int, len(docs))
	ids := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d
		out[i].Spans = nil
		index[d.ID] = i
		ids[i] = d.ID
	}
	for start := 0; start < len(ids); start += docBatch {
		rows, err := s.Client.Document.Query().
			Where(document.CorpusID(set.CorpusID), document.ExternalIDIn(ids[start:min(start+docBatch, len(ids))]...)).
			Select(document.FieldID, document.FieldExternalID).All(ctx)
		if err != nil {
			return nil, err
		}
		byRow := make(map[int]int, len(rows))
		rowIDs := make([]int, len(rows))
		for i, r := range rows {
			byRow[r.ID] = index[r.ExternalID]
			rowIDs[i] = r.ID
		}
		if err := s.loadSpans(ctx, set.ID, rowIDs, func(doc int, sp pipeline.Span) {
			d := &out[byRow[doc]]
			d.Spans = append(d.Spans, sp)
		}); err != nil {
			return nil, err
		}
	}
	for i := range out {
		out[i].SortSpans()
	}
	return out, nil
}

// refuseWriting refuses to read a set that a job is still writing.
func refuseWriting(c *ent.Corpus, set *ent.AnnotationSet) error {
	if job, writing := writingJob(set); writing {
		return apperr.New(apperr.Conflict, "annotation set %q of corpus %q is being written by job %d; it can be read when the job has finished",
			set.Name, c.Name, job)
	}
	return nil
}

// writingJob is the job writing a set, if one is (a JSON number once read
// back from the database).
func writingJob(set *ent.AnnotationSet) (int, bool) {
	switch job := set.Provenance[provWriting].(type) {
	case float64:
		return int(job), true
	case int:
		return job, true
	}
	return 0, false
}

// CountDocuments is the number of documents of a corpus, or of one of its
// splits: what EachBatch will read.
func (s *Store) CountDocuments(ctx context.Context, c *ent.Corpus, split string) (int, error) {
	where, err := splitWhere(c, split)
	if err != nil {
		return 0, err
	}
	return s.Client.Document.Query().Where(where...).Count(ctx)
}
