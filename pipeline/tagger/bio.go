package tagger

import (
	"sort"

	"deidcorpus/pipeline"
)

// SpanType is one PHI label of a corpus, as its spans carry it.
type SpanType struct {
	Category string `json:"category"`
	Type     string `json:"type"`
}

// Labels is the CRF's label set: O, then B- and I- for every span type.
// Label 0 is O; type k has B = 1+2k and I = 2+2k.
type Labels struct {
	Types []SpanType
	index map[SpanType]int
}

func newLabels(types []SpanType) *Labels {
	l := &Labels{Types: types, index: make(map[SpanType]int, len(types))}
	for k, t := range types {
		l.index[t] = k
	}
	return l
}

// labelsOf collects the span types of docs in a fixed order (sorted), so that
// the same corpus always yields the same label numbering.
func labelsOf(docs []pipeline.Document) *Labels {
	seen := map[SpanType]bool{}
	var types []SpanType
	for _, d := range docs {
		for _, s := range d.Spans {
			t := SpanType{s.Category, s.Type}
			if !seen[t] {
				seen[t] = true
				types = append(types, t)
			}
		}
	}
	sort.Slice(types, func(i, j int) bool {
		if types[i].Category != types[j].Category {
			return types[i].Category < types[j].Category
		}
		return types[i].Type < types[j].Type
	})
	return newLabels(types)
}

// N is the number of CRF labels.
func (l *Labels) N() int { return 1 + 2*len(l.Types) }

// Name renders label y as CRFsuite would see it (O, B-TYPE, I-TYPE).
func (l *Labels) Name(y int) string {
	if y == 0 {
		return "O"
	}
	t := l.Types[(y-1)/2]
	name := t.Type
	if t.Category != "" && t.Category != t.Type {
		name = t.Category + "/" + t.Type
	}
	if y%2 == 1 {
		return "B-" + name
	}
	return "I-" + name
}

// typeOf returns the type index of a non-O label.
func typeOf(y int) int { return (y - 1) / 2 }

// encode assigns BIO labels to the tokens covered by spans. A token any part
// of which a span covers belongs to it; spans of unknown types and tokens
// already claimed by an earlier span are skipped (overlaps cannot be BIO
// encoded).
func (l *Labels) encode(tk *Tokens, ix *pipeline.Index, spans []pipeline.Span) []int {
	y := make([]int, len(tk.Tokens))
	for _, s := range spans {
		k, ok := l.index[SpanType{s.Category, s.Type}]
		if !ok {
			continue
		}
		bs, be := ix.Byte(s.Start), ix.Byte(s.End)
		first := sort.Search(len(tk.Tokens), func(i int) bool { return tk.Tokens[i].End > bs })
		if first == len(tk.Tokens) || tk.Tokens[first].Start >= be || y[first] != 0 {
			continue
		}
		y[first] = 1 + 2*k
		for i := first + 1; i < len(tk.Tokens) && tk.Tokens[i].Start < be && y[i] == 0; i++ {
			y[i] = 2 + 2*k
		}
	}
	return y
}

// decode turns a BIO label sequence back into spans with code-point offsets.
func (l *Labels) decode(tk *Tokens, ix *pipeline.Index, y []int) []pipeline.Span {
	var out []pipeline.Span
	for _, p := range bioSpans(y) {
		out = append(out, l.span(tk, ix, p.first, p.last, p.typ))
	}
	return out
}

// bioSpans reads the token spans of a BIO label sequence. An I- label that
// does not continue a span of its type starts one, as conlleval reads it.
func bioSpans(y []int) []tokSpan {
	var out []tokSpan
	for i := 0; i < len(y); {
		if y[i] == 0 {
			i++
			continue
		}
		k := typeOf(y[i])
		j := i + 1
		for j < len(y) && y[j] == 2+2*k {
			j++
		}
		out = append(out, tokSpan{i, j, k})
		i = j
	}
	return out
}

// span builds the span of type k over tokens [i, j).
func (l *Labels) span(tk *Tokens, ix *pipeline.Index, i, j, k int) pipeline.Span {
	bs, be := tk.Tokens[i].Start, tk.Tokens[j-1].End
	t := l.Types[k]
	return pipeline.Span{
		Start: ix.CodePoint(bs), End: ix.CodePoint(be),
		Text: tk.Text[bs:be], Category: t.Category, Type: t.Type,
	}
}
