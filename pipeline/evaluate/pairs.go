package evaluate

import (
	"errors"
	"fmt"
	"sort"

	"deidcorpus/pipeline"
)

// Pair is one document as the gold standard and as the system saw it.
type Pair struct {
	ID     string
	Gold   *pipeline.Document
	System *pipeline.Document
}

// ErrInput marks problems with the documents handed to a scorer (duplicate
// ids, different texts under one id, spans that cannot be scored); callers
// map it to an "invalid input" error.
var ErrInput = errors.New("invalid evaluation input")

func inputErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, args...))
}

// PairDocuments matches gold and system documents by ID, in ID order. Like
// the official scripts it scores only documents present on both sides; the
// others are returned so that a report can say what was left out. Two
// documents with one id on a side, or a gold and a system text that differ
// (when both are present), are errors.
func PairDocuments(gold, system []pipeline.Document) (pairs []Pair, goldOnly, systemOnly []string, err error) {
	byID := func(docs []pipeline.Document, side string) (map[string]*pipeline.Document, error) {
		m := make(map[string]*pipeline.Document, len(docs))
		for i := range docs {
			d := &docs[i]
			if _, dup := m[d.ID]; dup {
				return nil, inputErrorf("%s document id %q occurs twice", side, d.ID)
			}
			m[d.ID] = d
		}
		return m, nil
	}
	g, err := byID(gold, "gold")
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := byID(system, "system")
	if err != nil {
		return nil, nil, nil, err
	}
	for id, gd := range g {
		sd, ok := s[id]
		if !ok {
			goldOnly = append(goldOnly, id)
			continue
		}
		if gd.Text != "" && sd.Text != "" && gd.Text != sd.Text {
			return nil, nil, nil, inputErrorf("document %s: gold and system texts differ", id)
		}
		pairs = append(pairs, Pair{ID: id, Gold: gd, System: sd})
	}
	for id := range s {
		if _, ok := g[id]; !ok {
			systemOnly = append(systemOnly, id)
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].ID < pairs[j].ID })
	sort.Strings(goldOnly)
	sort.Strings(systemOnly)
	return pairs, goldOnly, systemOnly, nil
}

// text is the pair's note text: the gold one, or the system's when the gold
// set carries offsets only.
func (p Pair) text() string {
	if p.Gold.Text != "" {
		return p.Gold.Text
	}
	return p.System.Text
}
