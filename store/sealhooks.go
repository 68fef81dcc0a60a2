package store

import (
	"context"
	"fmt"

	"deidcorpus/ent"
	"deidcorpus/ent/hook"
)

// installSeals puts the sealing of original corpora (seal.go) under every
// write and read that goes through ent: a new original corpus gets its data
// key, a document or span written into a sealed corpus is sealed, and rows
// read are opened before anyone sees them (GraphQL's generated resolvers
// included).
func (s *Store) installSeals() {
	s.Client.Corpus.Use(hook.On(s.sealNewCorpus, ent.OpCreate))
	s.Client.AnnotationSet.Use(hook.On(s.noteNewSet, ent.OpCreate))
	s.Client.Document.Use(hook.On(s.sealDocument, ent.OpCreate|ent.OpUpdateOne|ent.OpUpdate))
	s.Client.Span.Use(hook.On(s.sealSpan, ent.OpCreate|ent.OpUpdateOne|ent.OpUpdate))
	s.Client.Document.Intercept(ent.InterceptFunc(s.openRows))
	s.Client.Span.Intercept(ent.InterceptFunc(s.openRows))
}

// sealNewCorpus gives a new original corpus its data key, wrapped under the
// ring's current key.
func (s *Store) sealNewCorpus(next ent.Mutator) ent.Mutator {
	return hook.CorpusFunc(func(ctx context.Context, m *ent.CorpusMutation) (ent.Value, error) {
		if !wantsDataKey(m) {
			return next.Mutate(ctx, m)
		}
		r, err := s.KeyRing()
		if err != nil {
			return nil, fmt.Errorf("an original corpus is sealed at rest: %w", err)
		}
		key, wrapped, keyID := newDataKey(r)
		m.SetDataKey(wrapped)
		m.SetDataKeyID(keyID)
		v, err := next.Mutate(ctx, m)
		if err != nil {
			return nil, err
		}
		c := v.(*ent.Corpus)
		seal, err := newCorpusSeal(c.ID, key)
		if err != nil {
			return nil, err
		}
		s.keepSeal(c.ID, seal)
		return v, nil
	})
}

// noteNewSet remembers a new set's corpus: the spans written into it in the
// same transaction are sealed before another connection could look it up.
func (s *Store) noteNewSet(next ent.Mutator) ent.Mutator {
	return hook.AnnotationSetFunc(func(ctx context.Context, m *ent.AnnotationSetMutation) (ent.Value, error) {
		v, err := next.Mutate(ctx, m)
		if err == nil {
			a := v.(*ent.AnnotationSet)
			s.keepSet(a.ID, a.CorpusID)
		}
		return v, err
	})
}

// sealDocument seals a new document's text; a document's text never
// changes after (the schema makes it immutable).
func (s *Store) sealDocument(next ent.Mutator) ent.Mutator {
	return hook.DocumentFunc(func(ctx context.Context, m *ent.DocumentMutation) (ent.Value, error) {
		text, ok := m.Text()
		if !ok {
			return next.Mutate(ctx, m)
		}
		corpusID, _ := m.CorpusID()
		c, err := s.corpusSeal(ctx, corpusID)
		if err != nil {
			return nil, err
		}
		m.SetText(c.seal(fieldDocText, text))
		v, err := next.Mutate(ctx, m)
		if d, ok := v.(*ent.Document); ok && err == nil {
			d.Text = text
		}
		return v, err
	})
}

// sealSpan seals the text, comment and source id a span is written with,
// and gives back the span in clear.
func (s *Store) sealSpan(next ent.Mutator) ent.Mutator {
	return hook.SpanFunc(func(ctx context.Context, m *ent.SpanMutation) (ent.Value, error) {
		text, hasText := m.Text()
		note, hasNote := m.Comment()
		source, hasSource := m.SourceID()
		if !hasText && !hasNote && !hasSource {
			return next.Mutate(ctx, m)
		}
		setID, ok := m.AnnotationSetID()
		if !ok {
			if m.Op() != ent.OpUpdateOne {
				return nil, fmt.Errorf("a span's text, comment or source id is written by a bulk update, which cannot seal it: update one span at a time")
			}
			var err error
			if setID, err = m.OldAnnotationSetID(ctx); err != nil {
				return nil, err
			}
		}
		c, err := s.setSeal(ctx, setID)
		if err != nil {
			return nil, err
		}
		if hasText {
			m.SetText(c.seal(fieldSpanText, text))
		}
		if hasNote {
			m.SetComment(c.seal(fieldSpanNote, note))
		}
		if hasSource {
			m.SetSourceID(c.seal(fieldSpanSource, source))
		}
		v, err := next.Mutate(ctx, m)
		if sp, ok := v.(*ent.Span); ok && err == nil {
			err = c.openSpan(sp)
		}
		return v, err
	})
}

// openRows opens the sealed fields of the documents and spans a query
// read. Other results (counts, ids, selected columns scanned into other
// types) carry no sealed field: the store never selects one that way.
func (s *Store) openRows(next ent.Querier) ent.Querier {
	return ent.QuerierFunc(func(ctx context.Context, q ent.Query) (ent.Value, error) {
		v, err := next.Query(ctx, q)
		if err != nil {
			return v, err
		}
		switch rows := v.(type) {
		case []*ent.Document:
			for _, d := range rows {
				if d.Text == "" {
					continue
				}
				c, err := s.corpusSeal(ctx, d.CorpusID)
				if err != nil {
					return nil, err
				}
				if d.Text, err = c.openString(fieldDocText, d.Text); err != nil {
					return nil, err
				}
			}
		case []*ent.Span:
			for _, sp := range rows {
				if sp.Text == "" && sp.Comment == "" && sp.SourceID == "" {
					continue
				}
				c, err := s.setSeal(ctx, sp.AnnotationSetID)
				if err != nil {
					return nil, err
				}
				if err := c.openSpan(sp); err != nil {
					return nil, err
				}
			}
		}
		return v, nil
	})
}
