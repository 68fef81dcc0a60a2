package store

import (
	"context"
	"strconv"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/document"
	"deidcorpus/ent/documentprogress"
	"deidcorpus/ent/span"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
)

// Adjudication: the spans of several sets over one note, grouped and
// classified by the evaluation's strict rule (evaluate.Disagreements), and
// each pair of sets' agreement by type (evaluate.AgreementByType). The
// adjudicator writes its decisions into gold or a named set with the hand
// edits (AcceptSpan, AddSpan, ChangeSpan, RemoveSpan).

// DisagreementGroup is evaluate.Group with the spans' rows, by set.
type DisagreementGroup struct {
	Kind       string
	Start, End int
	Sets       []SetSpans
}

// SetSpans are one set's spans in a group.
type SetSpans struct {
	Set   string
	Spans []*ent.Span
}

// PairAgreement is two sets' agreement: the scorer's strict F1 of b against
// a over the documents both hold, and per type.
type PairAgreement struct {
	A, B      string
	Documents int
	F1        float64
	ByType    []evaluate.TypeAgreement
}

// Disagreements groups a document's spans in the named sets (two or more)
// and classifies each group; with all false, the groups where the sets agree
// are left out.
func (s *Store) Disagreements(ctx context.Context, corpusName string, setNames []string, docID int, all bool) ([]*DisagreementGroup, error) {
	c, sets, err := s.adjudicatedSets(ctx, corpusName, setNames)
	if err != nil {
		return nil, err
	}
	doc, err := s.Client.Document.Get(ctx, docID)
	if err != nil || doc.CorpusID != c.ID {
		return nil, notFound(err, "no document with id %d in corpus %q", docID, c.Name)
	}
	rows := map[string]*ent.Span{}
	spans := make([][]pipeline.Span, len(sets))
	for i, set := range sets {
		list, err := s.Client.Span.Query().Where(span.AnnotationSetID(set.ID), span.DocumentID(docID)).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range list {
			id := strconv.Itoa(r.ID)
			rows[id] = r
			spans[i] = append(spans[i], pipeline.Span{ID: id, Start: r.Start, End: r.End, Category: r.Category, Type: r.Type})
		}
	}
	var out []*DisagreementGroup
	for _, g := range evaluate.Disagreements(spans) {
		if g.Kind == evaluate.Same && !all {
			continue
		}
		dg := &DisagreementGroup{Kind: string(g.Kind), Start: g.Start, End: g.End, Sets: make([]SetSpans, len(sets))}
		for i, list := range g.Spans {
			dg.Sets[i].Set = sets[i].Name
			for _, sp := range list {
				dg.Sets[i].Spans = append(dg.Sets[i].Spans, rows[sp.ID])
			}
		}
		out = append(out, dg)
	}
	return out, nil
}

// Agreement scores each pair of the named sets against each other, over the
// documents both hold: for a set with assigned documents (an annotator's)
// those, for any other every document.
func (s *Store) Agreement(ctx context.Context, corpusName string, setNames []string) ([]*PairAgreement, error) {
	c, sets, err := s.adjudicatedSets(ctx, corpusName, setNames)
	if err != nil {
		return nil, err
	}
	docs := make([][]pipeline.Document, len(sets))
	held := make([]map[int]bool, len(sets)) // nil: every document
	for i, set := range sets {
		if docs[i], err = s.LoadDocuments(ctx, c, set.Name); err != nil {
			return nil, err
		}
		ids, err := s.Client.DocumentProgress.Query().Where(documentprogress.AnnotationSetID(set.ID)).
			Select(documentprogress.FieldDocumentID).Ints(ctx)
		if err != nil {
			return nil, err
		}
		if len(ids) > 0 {
			held[i] = map[int]bool{}
			for _, id := range ids {
				held[i][id] = true
			}
		}
	}
	rowIDs, err := s.documentRowIDs(ctx, c)
	if err != nil {
		return nil, err
	}
	keep := func(d []pipeline.Document, i, j int) []pipeline.Document {
		var out []pipeline.Document
		for _, doc := range d {
			id := rowIDs[doc.ID]
			if (held[i] == nil || held[i][id]) && (held[j] == nil || held[j][id]) {
				out = append(out, doc)
			}
		}
		return out
	}
	var out []*PairAgreement
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			a, b := keep(docs[i], i, j), keep(docs[j], i, j)
			byType, err := evaluate.AgreementByType(a, b)
			if err != nil {
				return nil, apperr.Wrap(apperr.Invalid, err)
			}
			out = append(out, &PairAgreement{A: sets[i].Name, B: sets[j].Name, Documents: len(a), F1: byType[0].F1, ByType: byType[1:]})
		}
	}
	return out, nil
}

// AcceptSpan copies a span of one set (an annotator's) into another (gold,
// or a named adjudicated set) of the same corpus: the adjudicator's accept.
// version is the target document's version in the target set.
func (s *Store) AcceptSpan(ctx context.Context, spanID, intoSetID, version int) (*AnnotationEdit, error) {
	sp, err := s.Client.Span.Get(ctx, spanID)
	if err != nil {
		return nil, notFoundSpan(err, spanID)
	}
	if sp.AnnotationSetID == intoSetID {
		return nil, apperr.New(apperr.Invalid, "span %d is in that set already", spanID)
	}
	return s.AddSpan(ctx, intoSetID, sp.DocumentID, version, SpanChange{Start: sp.Start, End: sp.End, Category: sp.Category, Type: sp.Type})
}

// adjudicatedSets reads two or more sets of a corpus, none being written.
func (s *Store) adjudicatedSets(ctx context.Context, corpusName string, names []string) (*ent.Corpus, []*ent.AnnotationSet, error) {
	if len(names) < 2 {
		return nil, nil, apperr.New(apperr.Invalid, "name two or more annotation sets to compare")
	}
	c, err := s.CorpusByName(ctx, corpusName)
	if err != nil {
		return nil, nil, err
	}
	sets := make([]*ent.AnnotationSet, len(names))
	for i, n := range names {
		if sets[i], err = s.AnnotationSet(ctx, c, n); err != nil {
			return nil, nil, err
		}
	}
	return c, sets, nil
}

// documentRowIDs maps a corpus's documents' external ids to their row ids.
func (s *Store) documentRowIDs(ctx context.Context, c *ent.Corpus) (map[string]int, error) {
	rows, err := s.Client.Document.Query().Where(document.CorpusID(c.ID)).Select(document.FieldID, document.FieldExternalID).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.ExternalID] = r.ID
	}
	return out, nil
}
