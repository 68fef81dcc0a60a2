package store

import (
	"context"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/documentprogress"
)

// AnnotatorProgress is one annotator's set with its assigned documents
// counted by status.
type AnnotatorProgress struct {
	Set        string `json:"set"`
	Annotator  string `json:"annotator"`
	Open       bool   `json:"open"`
	Todo       int    `json:"todo"`
	InProgress int    `json:"in_progress"`
	Done       int    `json:"done"`
	Total      int    `json:"total"`
}

// AnnotatorsProgress counts the documents of each annotator's set of a
// corpus by status, sets in name order: every such set the viewer sees (an
// annotator without open sets, its own), or with batch those of that
// assignment only (named batch:ACCOUNT), which must exist.
func (s *Store) AnnotatorsProgress(ctx context.Context, corpusName, batch string) ([]AnnotatorProgress, error) {
	c, err := s.CorpusByName(ctx, corpusName)
	if err != nil {
		return nil, err
	}
	q := s.Client.AnnotationSet.Query().Where(annotationset.CorpusID(c.ID), annotationset.KindEQ(annotationset.KindAnnotator))
	if batch != "" {
		if strings.Contains(batch, ":") {
			return nil, apperr.New(apperr.Invalid, "batch %q: give the assignment's name, without ':ACCOUNT'", batch)
		}
		q.Where(annotationset.NameHasPrefix(batch + ":"))
	}
	sets, err := q.Order(ent.Asc(annotationset.FieldName)).All(ctx)
	if err != nil {
		return nil, err
	}
	if batch != "" && len(sets) == 0 {
		return nil, apperr.New(apperr.NotFound, "corpus %q has no assignment %q (no set %s:ACCOUNT)", c.Name, batch, batch)
	}
	out := make([]AnnotatorProgress, len(sets))
	index := make(map[int]int, len(sets))
	ids := make([]int, len(sets))
	for i, set := range sets {
		out[i] = AnnotatorProgress{Set: set.Name, Annotator: set.Annotator, Open: set.Open}
		index[set.ID], ids[i] = i, set.ID
	}
	var counts []struct {
		SetID  int                     `json:"annotation_set_id"`
		Status documentprogress.Status `json:"status"`
		Count  int                     `json:"count"`
	}
	if err := s.Client.DocumentProgress.Query().Where(documentprogress.AnnotationSetIDIn(ids...)).
		GroupBy(documentprogress.FieldAnnotationSetID, documentprogress.FieldStatus).
		Aggregate(ent.Count()).Scan(ctx, &counts); err != nil {
		return nil, err
	}
	for _, n := range counts {
		p := &out[index[n.SetID]]
		switch n.Status {
		case documentprogress.StatusTodo:
			p.Todo += n.Count
		case documentprogress.StatusInProgress:
			p.InProgress += n.Count
		case documentprogress.StatusDone:
			p.Done += n.Count
		}
		p.Total += n.Count
	}
	return out, nil
}
