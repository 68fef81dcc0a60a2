package store

import (
	"bytes"
	"cmp"
	"context"
	"slices"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/document"
	"deidcorpus/ent/documentprogress"
	"deidcorpus/ent/model"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/tagger"
)

// What to annotate next: the documents of an annotation set that are not
// done, ordered by a built-in model's uncertainty about them
// (tagger.Model.Uncertainty), most uncertain first, so that an annotator's
// next note is the one the model would learn most from.

// QueuedDocument is a document of a set not done yet, with the model's
// doubt about it.
type QueuedDocument struct {
	Document *ent.Document
	Status   documentprogress.Status
	tagger.Uncertainty
}

// AnnotationQueue scores the documents of set that are not done with the
// named model and returns the first most uncertain (ties by document id).
// The notes are read and scored readBatch at a time, so memory holds one
// batch and a score per document whatever the set's size; the scoring runs
// at tagging speed and ends with ctx.
func (s *Store) AnnotationQueue(ctx context.Context, corpusName, setName, modelName string, first int) ([]*QueuedDocument, error) {
	open, err := s.queueOpen(ctx, corpusName, setName, first)
	if err != nil {
		return nil, err
	}
	row, err := s.ModelByName(ctx, modelName)
	if err != nil {
		return nil, err
	}
	if row.Kind != model.KindCrf {
		return nil, apperr.New(apperr.Invalid, "annotation queue: model %s is %s; uncertainty needs a built-in (crf) model's marginals", row.Name, row.Kind)
	}
	m, err := tagger.Load(bytes.NewReader(row.Artifact))
	if err != nil {
		return nil, apperr.New(apperr.Internal, "model %s: %v", row.Name, err)
	}
	type scored struct {
		id     int
		status documentprogress.Status
		tagger.Uncertainty
	}
	scores := make([]scored, 0, len(open))
	for part := range slices.Chunk(open, readBatch) {
		ids := make([]int, len(part))
		status := make(map[int]documentprogress.Status, len(part))
		for i, p := range part {
			ids[i], status[p.DocumentID] = p.DocumentID, p.Status
		}
		rows, err := s.Client.Document.Query().Where(document.IDIn(ids...)).All(ctx)
		if err != nil {
			return nil, err
		}
		docs := make([]pipeline.Document, len(rows))
		for i, r := range rows {
			docs[i] = pipeline.Document{ID: r.ExternalID, Text: r.Text}
		}
		u, err := m.Uncertainty(ctx, docs, 0)
		if err != nil {
			return nil, err
		}
		for i, r := range rows {
			scores = append(scores, scored{r.ID, status[r.ID], u[i]})
		}
	}
	slices.SortFunc(scores, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.Entropy, a.Entropy), cmp.Compare(a.id, b.id))
	})
	scores = scores[:min(first, len(scores))]
	ids := make([]int, len(scores))
	for i, sc := range scores {
		ids[i] = sc.id
	}
	rows, err := s.Client.Document.Query().Where(document.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[int]*ent.Document, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	out := make([]*QueuedDocument, 0, len(scores))
	for _, sc := range scores {
		if d := byID[sc.id]; d != nil { // nil: deleted since it was scored
			out = append(out, &QueuedDocument{Document: d, Status: sc.status, Uncertainty: sc.Uncertainty})
		}
	}
	return out, nil
}

// OpenQueue is AnnotationQueue without a model: the first documents of the
// set not done, in document order, with no uncertainty, and without their
// text (which nothing scores).
func (s *Store) OpenQueue(ctx context.Context, corpusName, setName string, first int) ([]*QueuedDocument, error) {
	open, err := s.queueOpen(ctx, corpusName, setName, first)
	if err != nil {
		return nil, err
	}
	open = open[:min(first, len(open))]
	ids := make([]int, len(open))
	for i, o := range open {
		ids[i] = o.DocumentID
	}
	rows, err := s.Client.Document.Query().Where(document.IDIn(ids...)).Order(ent.Asc(document.FieldID)).
		Select(document.FieldID, document.FieldCorpusID, document.FieldPatientID, document.FieldExternalID,
			document.FieldSplit, document.FieldNoteType).All(ctx)
	if err != nil {
		return nil, err
	}
	status := make(map[int]documentprogress.Status, len(open))
	for _, o := range open {
		status[o.DocumentID] = o.Status
	}
	out := make([]*QueuedDocument, len(rows))
	for i, r := range rows {
		out[i] = &QueuedDocument{Document: r, Status: status[r.ID]}
	}
	return out, nil
}

// queueOpen checks a queue's arguments and lists the set's documents not
// done, in document order: those assigned to it, or for a set nobody was
// assigned notes of (gold, as imported) every note of the corpus.
func (s *Store) queueOpen(ctx context.Context, corpusName, setName string, first int) ([]openDocument, error) {
	if err := CheckPage("first", first); err != nil {
		return nil, err
	}
	c, err := s.CorpusByName(ctx, corpusName)
	if err != nil {
		return nil, err
	}
	set, err := s.AnnotationSet(ctx, c, setName)
	if err != nil {
		return nil, err
	}
	var open []openDocument
	if err := s.Client.DocumentProgress.Query().
		Where(documentprogress.AnnotationSetID(set.ID), documentprogress.StatusNEQ(documentprogress.StatusDone)).
		Order(ent.Asc(documentprogress.FieldDocumentID)).
		Select(documentprogress.FieldDocumentID, documentprogress.FieldStatus).Scan(ctx, &open); err != nil {
		return nil, err
	}
	if len(open) == 0 {
		return s.unassignedOpen(ctx, c.ID, set.ID)
	}
	return open, nil
}

// DoneDocuments returns the external ids of the documents marked done in a
// set of corpus c: what has been annotated so far.
func (s *Store) DoneDocuments(ctx context.Context, c *ent.Corpus, setName string) (map[string]bool, error) {
	set, err := s.AnnotationSet(ctx, c, setName)
	if err != nil {
		return nil, err
	}
	ids, err := s.Client.Document.Query().Where(document.HasProgressWith(
		documentprogress.AnnotationSetID(set.ID), documentprogress.StatusEQ(documentprogress.StatusDone))).
		Select(document.FieldExternalID).Strings(ctx)
	if err != nil {
		return nil, err
	}
	done := make(map[string]bool, len(ids))
	for _, id := range ids {
		done[id] = true
	}
	return done, nil
}

// openDocument is a document of an annotation queue and its progress.
type openDocument = struct {
	DocumentID int                     `json:"document_id"`
	Status     documentprogress.Status `json:"status"`
}

// unassignedOpen lists every document of a corpus as open in
// a set that has no progress rows (todo).
func (s *Store) unassignedOpen(ctx context.Context, corpusID, setID int) ([]openDocument, error) {
	assigned, err := s.Client.DocumentProgress.Query().Where(documentprogress.AnnotationSetID(setID)).Exist(ctx)
	if err != nil || assigned {
		return nil, err // every row is done: nothing is open
	}
	ids, err := s.Client.Document.Query().Where(document.CorpusID(corpusID)).Order(ent.Asc(document.FieldID)).IDs(ctx)
	if err != nil {
		return nil, err
	}
	open := make([]openDocument, len(ids))
	for i, id := range ids {
		open[i] = openDocument{DocumentID: id, Status: documentprogress.StatusTodo}
	}
	return open, nil
}
