package evaluate

import (
	"fmt"
	"sort"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
)

// Counts are true positives, false positives and false negatives.
type Counts struct {
	TP int `json:"tp"`
	FP int `json:"fp"`
	FN int `json:"fn"`
}

// Add returns the sum of two counts.
func (c Counts) Add(o Counts) Counts { return Counts{c.TP + o.TP, c.FP + o.FP, c.FN + o.FN} }

// Precision is TP/(TP+FP), 0 without system tags.
func (c Counts) Precision() float64 { return ratio(c.TP, c.TP+c.FP) }

// Recall is TP/(TP+FN), 0 without gold tags.
func (c Counts) Recall() float64 { return ratio(c.TP, c.TP+c.FN) }

// F1 is the harmonic mean of precision and recall, 0 when both are 0.
func (c Counts) F1() float64 { return fscore(c.Recall(), c.Precision()) }

// Spec selects one evaluation: a matching mode over a subset of the tags.
type Spec struct {
	Label    string `json:"label"`              // heading in reports
	Mode     Mode   `json:"mode"`               // token, strict or relaxed
	Category string `json:"category,omitempty"` // only tags of this category
	Type     string `json:"type,omitempty"`     // only tags of this type
	HIPAA    bool   `json:"hipaa,omitempty"`    // only tags of the HIPAA subset
	Binary   bool   `json:"binary,omitempty"`   // ignore labels (offsets only); token and strict modes
}

// DocScore is one document's result under one Spec.
type DocScore struct {
	ID string `json:"id"`
	Counts
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// Measure is the result of one Spec over all paired documents: pooled
// (micro) counts and scores, the per-document (macro) mean with its
// population standard deviation, and every document's figures.
//
// MacroF1 is F of the macro precision and recall. When both are 0 the
// official script prints "nan" (numpy's 0/0); the value stored here is 0 so
// that the report stays valid JSON, and Render prints "nan".
type Measure struct {
	Spec
	Documents        int        `json:"documents"`
	Counts           Counts     `json:"counts"`
	MicroPrecision   float64    `json:"micro_precision"`
	MicroRecall      float64    `json:"micro_recall"`
	MicroF1          float64    `json:"micro_f1"`
	MacroPrecision   float64    `json:"macro_precision"`
	MacroPrecisionSD float64    `json:"macro_precision_sd"`
	MacroRecall      float64    `json:"macro_recall"`
	MacroRecallSD    float64    `json:"macro_recall_sd"`
	MacroF1          float64    `json:"macro_f1"`
	PerDocument      []DocScore `json:"per_document"`
}

// Scorer scores a fixed set of document pairs under any number of Specs. It
// interns labels and tokenizes once, so running many Specs costs little more
// than running one.
type Scorer struct {
	pairs  []Pair
	labels *labelSet
	hipaa  map[string]bool
	spans  [][2][]item // per pair: gold, system
	tokens [][2][]item // built on first use
}

// NewScorer prepares pairs for scoring. paperHIPAA selects the HIPAA list of
// Stubbs & Uzuner section 8 (with IDNUM) instead of the official script's.
func NewScorer(pairs []Pair, paperHIPAA bool) *Scorer {
	s := &Scorer{pairs: pairs, hipaa: hipaaSet(paperHIPAA)}
	s.labels = newLabelSet(pairs, s.hipaa)
	s.spans = make([][2][]item, len(pairs))
	for i, p := range pairs {
		s.spans[i] = [2][]item{s.labels.spanItems(p.Gold), s.labels.spanItems(p.System)}
	}
	return s
}

// Pairs returns the scored pairs, in ID order.
func (s *Scorer) Pairs() []Pair { return s.pairs }

func (s *Scorer) ensureTokens() error {
	if s.tokens != nil {
		return nil
	}
	tokens := make([][2][]item, len(s.pairs))
	for i, p := range s.pairs {
		var err error
		if tokens[i], err = s.labels.pairTokens(p); err != nil {
			return err
		}
	}
	s.tokens = tokens
	return nil
}

// pairTokens is a pair's gold and system token items.
func (ls *labelSet) pairTokens(p Pair) ([2][]item, error) {
	var ix *pipeline.Index // one index for both sides: building it is the costly part
	if text := p.text(); text != "" {
		ix = pipeline.NewIndex(text)
	}
	g, err := ls.tokenItems(p.Gold, ix)
	if err != nil {
		return [2][]item{}, err
	}
	sy, err := ls.tokenItems(p.System, ix)
	return [2][]item{g, sy}, err
}

// Categories lists the categories to report on: the i2b2 2014 ones in the
// script's order, then any other category found in the documents.
func (s *Scorer) Categories() []string { return s.labels.categories() }

func (ls *labelSet) categories() []string {
	var out []string
	known := map[string]bool{}
	for _, c := range phi.I2B2().Categories {
		out = append(out, c.Name)
		known[c.Name] = true
	}
	var extra []string
	for _, g := range ls.groups {
		if !known[g.Category] {
			known[g.Category] = true
			extra = append(extra, g.Category)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// Groups lists the (category, type) labels found, i2b2 types first in tag-set
// order, then the others sorted.
func (s *Scorer) Groups() []Label { return s.labels.sorted() }

func (ls *labelSet) sorted() []Label {
	order := map[string]int{}
	for i, t := range phi.I2B2().Types() {
		order[t] = i
	}
	gs := append([]Label(nil), ls.groups...)
	sort.Slice(gs, func(i, j int) bool {
		oi, iok := order[gs[i].Type]
		oj, jok := order[gs[j].Type]
		switch {
		case iok && jok && oi != oj:
			return oi < oj
		case iok != jok:
			return iok
		case gs[i].Category != gs[j].Category:
			return gs[i].Category < gs[j].Category
		}
		return gs[i].Type < gs[j].Type
	})
	return gs
}

// scope marks the label groups a Spec keeps.
func (s *Scorer) scope(sp Spec) []bool { return s.labels.scope(sp) }

func (ls *labelSet) scope(sp Spec) []bool {
	in := make([]bool, len(ls.groups))
	for i, g := range ls.groups {
		in[i] = (sp.Category == "" || g.Category == sp.Category) &&
			(sp.Type == "" || g.Type == sp.Type) &&
			(!sp.HIPAA || g.HIPAA)
	}
	return in
}

// DocCounts returns every pair's counts under each spec: out[spec][pair].
func (s *Scorer) DocCounts(specs []Spec) ([][]Counts, error) {
	var needTokens, needStrict, needRelaxed bool
	scopes := make([][]bool, len(specs))
	for i, sp := range specs {
		switch sp.Mode {
		case Token:
			needTokens = true
		case Strict:
			needStrict = true
		case Relaxed:
			if sp.Binary {
				return nil, fmt.Errorf("evaluate: spec %q: binary matching is defined for token and strict modes only", sp.Label)
			}
			needRelaxed = true
		default:
			return nil, fmt.Errorf("evaluate: spec %q: unknown mode %q", sp.Label, sp.Mode)
		}
		scopes[i] = s.scope(sp)
	}
	if needTokens {
		if err := s.ensureTokens(); err != nil {
			return nil, err
		}
	}
	out := make([][]Counts, len(specs))
	for i := range out {
		out[i] = make([]Counts, len(s.pairs))
	}
	var cs cellScratch
	var bufG2, bufS2 []item
	for d := range s.pairs {
		spans := s.spans[d]
		var tokens [2][]item
		if needTokens {
			tokens = s.tokens[d]
		}
		cs.fill(len(s.labels.groups), spans, tokens, needTokens, needStrict, needRelaxed)
		for i, sp := range specs {
			in := scopes[i]
			if sp.Binary {
				items := spans
				if sp.Mode == Token {
					items = tokens
				}
				out[i][d] = binaryCounts(items[0], items[1], in, bufG2, bufS2)
				continue
			}
			cells := cs.strict
			switch sp.Mode {
			case Token:
				cells = cs.tok
			case Relaxed:
				cells = cs.rel
			}
			var sum cell
			for g, c := range cells {
				if in[g] {
					sum = sum.add(c)
				}
			}
			out[i][d] = sum.counts(sp.Mode)
		}
	}
	return out, nil
}

// cellScratch holds one pair's cells per label group in each mode, and the
// buffers matching consumes.
type cellScratch struct {
	tok, strict, rel []cell
	bufG, bufS       []item
}

// fill computes the cells of the modes asked for one pair's span and token
// items (left unchanged) over n label groups.
func (cs *cellScratch) fill(n int, spans, tokens [2][]item, tok, strict, relaxed bool) {
	grow := func(c []cell) []cell {
		if cap(c) < n {
			return make([]cell, n)
		}
		c = c[:n]
		clear(c)
		return c
	}
	cs.tok, cs.strict, cs.rel = grow(cs.tok), grow(cs.strict), grow(cs.rel)
	scratch := func(dst, src []item) []item { return append(dst[:0], src...) }
	if strict {
		cs.bufG, cs.bufS = scratch(cs.bufG, spans[0]), scratch(cs.bufS, spans[1])
		exactCells(cs.strict, cs.bufG, cs.bufS)
	}
	if relaxed {
		cs.bufG, cs.bufS = scratch(cs.bufG, spans[0]), scratch(cs.bufS, spans[1])
		relaxedCells(cs.rel, cs.bufG, cs.bufS)
	}
	if tok {
		cs.bufG, cs.bufS = scratch(cs.bufG, tokens[0]), scratch(cs.bufS, tokens[1])
		exactCells(cs.tok, cs.bufG, cs.bufS)
	}
}

// Run scores every spec.
func (s *Scorer) Run(specs []Spec) ([]Measure, error) {
	counts, err := s.DocCounts(specs)
	if err != nil {
		return nil, err
	}
	out := make([]Measure, len(specs))
	for i, sp := range specs {
		out[i] = s.measure(sp, counts[i])
	}
	return out, nil
}

func (s *Scorer) measure(sp Spec, docs []Counts) Measure {
	m := Measure{Spec: sp, Documents: len(docs), PerDocument: make([]DocScore, len(docs))}
	ps, rs := make([]float64, len(docs)), make([]float64, len(docs))
	for d, c := range docs {
		p, r := c.Precision(), c.Recall()
		ps[d], rs[d] = p, r
		m.PerDocument[d] = DocScore{ID: s.pairs[d].ID, Counts: c, Precision: p, Recall: r, F1: fscore(p, r)}
		m.Counts = m.Counts.Add(c)
	}
	mp, mpsd := meanStd(ps)
	mr, mrsd := meanStd(rs)
	m.finish(mp, mpsd, mr, mrsd)
	return m
}

// I2B2Specs lists the evaluations the official i2b2 2014 script prints, in
// its order and with its headings (its "HIPPA" typos included, so that the
// text report diffs cleanly against the script's): token, strict and relaxed
// over all tags and over the HIPAA subset, label-blind token and strict over
// both, then per category token, strict, and both again over the category's
// HIPAA tags.
func I2B2Specs(categories []string) []Spec {
	specs := []Spec{
		{Label: "Token", Mode: Token},
		{Label: "Strict", Mode: Strict},
		{Label: "Relaxed", Mode: Relaxed},
		{Label: "HIPPA Token", Mode: Token, HIPAA: true},
		{Label: "HIPAA Strict", Mode: Strict, HIPAA: true},
		{Label: "HIPAA Relaxed", Mode: Relaxed, HIPAA: true},
		{Label: "Binary Token", Mode: Token, Binary: true},
		{Label: "Binary Strict", Mode: Strict, Binary: true},
		{Label: "Binary HIPPA Token", Mode: Token, HIPAA: true, Binary: true},
		{Label: "Binary HIPAA Strict", Mode: Strict, HIPAA: true, Binary: true},
	}
	for _, c := range categories {
		specs = append(specs,
			Spec{Label: c + " Token", Mode: Token, Category: c},
			Spec{Label: c + " Strict", Mode: Strict, Category: c},
			Spec{Label: c + " HIPPA Token", Mode: Token, Category: c, HIPAA: true},
			// The script labels this one "Binary" but by then it has restored
			// label-aware keys: it is strict matching of the category's HIPAA
			// tags.
			Spec{Label: c + " Binary HIPAA Strict", Mode: Strict, Category: c, HIPAA: true},
		)
	}
	return specs
}
