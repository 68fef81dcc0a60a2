package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"unicode/utf8"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/document"
	"deidcorpus/ent/predicate"
	"deidcorpus/ent/span"
	"deidcorpus/pipeline"
)

// Splits are the values a document's split can take; "" means unassigned.
var Splits = []string{"train", "dev", "test", "unassigned"}

// normalizeSplit validates a split name.
func normalizeSplit(s string) (document.Split, error) {
	if s == "" {
		return document.SplitUnassigned, nil
	}
	sp := document.Split(strings.ToLower(s))
	if err := document.SplitValidator(sp); err != nil {
		return "", apperr.New(apperr.Invalid, "unknown split %q (known: %s)", s, strings.Join(Splits, ", "))
	}
	return sp, nil
}

// checksum is the hex SHA-256 of a text.
func checksum(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// whitespaceTokens counts whitespace-separated tokens, the unit the papers'
// corpus tables use.
func whitespaceTokens(text string) int { return len(strings.Fields(text)) }

func charCount(text string) int { return utf8.RuneCountInString(text) }

// CorpusByName returns the named corpus or a not_found error.
func (s *Store) CorpusByName(ctx context.Context, name string) (*ent.Corpus, error) {
	c, err := s.Client.Corpus.Query().Where(corpus.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no corpus named %q", name)
	}
	return c, err
}

// AnnotationSet returns a corpus's named annotation set or a not_found error.
func (s *Store) AnnotationSet(ctx context.Context, c *ent.Corpus, name string) (*ent.AnnotationSet, error) {
	set, err := s.Client.AnnotationSet.Query().
		Where(annotationset.CorpusID(c.ID), annotationset.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "corpus %q has no annotation set %q", c.Name, name)
	}
	return set, err
}

// LoadDocuments returns a corpus's documents with the spans of one annotation
// set, ordered by patient and record order. An empty set name loads text only.
func (s *Store) LoadDocuments(ctx context.Context, c *ent.Corpus, setName string) ([]pipeline.Document, error) {
	return s.LoadSplit(ctx, c, setName, "")
}

// LoadSplit is LoadDocuments restricted to one split ("" for every
// document); the database does the restricting.
func (s *Store) LoadSplit(ctx context.Context, c *ent.Corpus, setName, split string) ([]pipeline.Document, error) {
	docWhere := []predicate.Document{document.CorpusID(c.ID)}
	if split != "" {
		sp, err := normalizeSplit(split)
		if err != nil {
			return nil, err
		}
		docWhere = append(docWhere, document.SplitEQ(sp))
	}
	rows, err := s.Client.Document.Query().Where(docWhere...).
		WithPatient().Order(ent.Asc(document.FieldExternalID)).All(ctx)
	if err != nil {
		return nil, err
	}
	docs := make([]pipeline.Document, len(rows))
	index := make(map[int]int, len(rows))
	for i, r := range rows {
		docs[i] = toPipeline(r)
		index[r.ID] = i
	}
	if setName != "" {
		set, err := s.AnnotationSet(ctx, c, setName)
		if err != nil {
			return nil, err
		}
		q := s.Client.Span.Query().Where(span.AnnotationSetID(set.ID))
		if split != "" {
			q.Where(span.HasDocumentWith(docWhere...))
		}
		spans, err := q.Order(ent.Asc(span.FieldDocumentID), ent.Asc(span.FieldStart), ent.Asc(span.FieldEnd)).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, sp := range spans {
			d := &docs[index[sp.DocumentID]]
			d.Spans = append(d.Spans, toPipelineSpan(sp))
		}
	}
	sort.SliceStable(docs, func(i, j int) bool {
		if docs[i].Patient != docs[j].Patient {
			return docs[i].Patient < docs[j].Patient
		}
		return docs[i].RecordOrder < docs[j].RecordOrder
	})
	return docs, nil
}

func toPipeline(r *ent.Document) pipeline.Document {
	d := pipeline.Document{
		ID:          r.ExternalID,
		RecordOrder: r.RecordOrder,
		NoteType:    r.NoteType,
		Text:        r.Text,
	}
	if r.Split != document.SplitUnassigned {
		d.Split = string(r.Split)
	}
	if r.Created != nil {
		d.Created = *r.Created
	}
	if r.Edges.Patient != nil {
		d.Patient = r.Edges.Patient.ExternalID
	}
	return d
}

func toPipelineSpan(sp *ent.Span) pipeline.Span {
	return pipeline.Span{
		ID:       sp.SourceID,
		Start:    sp.Start,
		End:      sp.End,
		Text:     sp.Text,
		Category: sp.Category,
		Type:     sp.Type,
		Comment:  sp.Comment,
	}
}
