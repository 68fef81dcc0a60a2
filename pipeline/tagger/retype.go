package tagger

import "sort"

// A span a template matches may owe its type to the span just before it in
// its sentence rather than to its own words: MEDDOCAN marks a relative's age
// as it marks the relative, "[Padre] fallecido a los [65 años]" both
// FAMILIARES, where the CRF, which sees three words back, reads an age.
// Retyping learns from the training gold, per template and preceding type,
// how often the match takes the preceding span's type, and applies the
// pairs that do so reliably.

const (
	// retypeReach is the most tokens between the end of the preceding span
	// and the match.
	retypeReach = 8
	// retypeMin is the fewest training cases a pair needs.
	retypeMin = 5
	// retypePrecision is the share of its cases in which the match must be a
	// gold span of the preceding span's type.
	retypePrecision = 0.75
)

// precedingSpan returns the index in spans (sorted by first token) of the
// last span ending at most retypeReach tokens before token first in the
// same sentence, or -1.
func precedingSpan(tk *Tokens, spans []tokSpan, first int) int {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].last > first }) - 1
	if i < 0 || first-spans[i].last > retypeReach {
		return -1
	}
	for t := spans[i].last; t <= first; t++ {
		if tk.Tokens[t].Flags&SentStart != 0 {
			return -1
		}
	}
	return i
}

// tokSpans lists a document's gold spans as tokSpans sorted by first
// token.
func (g goldSpans) tokSpans() []tokSpan {
	var out []tokSpan
	for _, r := range g.sorted() {
		out = append(out, tokSpan{r[0], r[1], g[r]})
	}
	return out
}

// learnRetypes finds the (template, preceding type) pairs whose matches are
// gold spans of the preceding type in at least retypePrecision of at least
// retypeMin training cases. Kind names the template, Type the preceding
// (and resulting) type.
func learnRetypes(toks []*Tokens, gold []goldSpans, types []SpanType) []RuleBinding {
	cases := make([][]int, len(templates))
	hits := make([][]int, len(templates))
	for k := range templates {
		cases[k], hits[k] = make([]int, len(types)), make([]int, len(types))
	}
	for di, tk := range toks {
		spans := gold[di].tokSpans()
		for k, ms := range matchTemplates(tk) {
			for _, r := range ms {
				p := precedingSpan(tk, spans, r[0])
				if p < 0 {
					continue
				}
				b := spans[p].typ
				cases[k][b]++
				if ty, ok := gold[di][r]; ok && ty == b {
					hits[k][b]++
				}
			}
		}
	}
	var out []RuleBinding
	for k, t := range templates {
		for b := range types {
			if n := cases[k][b]; n >= retypeMin && float64(hits[k][b]) >= retypePrecision*float64(n) {
				out = append(out, RuleBinding{Kind: t.Name, Type: b, Precision: float64(hits[k][b]) / float64(n), Matches: n})
			}
		}
	}
	return out
}

// retype gives a span that a retyping template matches exactly the type of
// the span before it, when the pair was learnt.
func (m *Model) retype(td *taggedDoc) {
	if len(m.learnt.Retypes) == 0 {
		return
	}
	sort.Slice(td.pred, func(i, j int) bool { return td.pred[i].first < td.pred[j].first })
	for _, b := range m.learnt.Retypes {
		for k, t := range templates {
			if t.Name != b.Kind {
				continue
			}
			for _, r := range td.matches[k] {
				i := sort.Search(len(td.pred), func(i int) bool { return td.pred[i].first >= r[0] })
				if i == len(td.pred) || td.pred[i].first != r[0] || td.pred[i].last != r[1] || td.pred[i].typ == b.Type {
					continue
				}
				if p := precedingSpan(td.tk, td.pred[:i], r[0]); p >= 0 && td.pred[p].typ == b.Type {
					td.pred[i].typ = b.Type
				}
			}
		}
	}
}
