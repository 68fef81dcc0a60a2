package experiment

import (
	"fmt"
	"sort"
	"unicode"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/surrogate"
)

// Carried is a gold span of a source document carried into the text that
// resynthesis of a system annotation set released: where the string now
// stands, and whether some of the original is still there.
type Carried struct {
	pipeline.Span // in the released text; Text is the released string
	// Leaked: a letter or digit of the gold span lay outside every
	// replaced place (the system's spans and the propagated occurrences),
	// so it stands in the released text as it was.
	Leaked bool
	// Partial: leaked, but part of the span was replaced (a boundary the
	// system got wrong).
	Partial bool
	// Original is the gold span's text in the source.
	Original string
	// Kept: the policy leaves this value as it is (an age below 90, a type
	// it keeps), so it is no leak when the system misses it. Still a
	// PHI-like string to the parrot attacker.
	Kept bool
}

// replaced is one place resynthesis rewrote: code points in the source and
// in the released text.
type replaced struct{ src0, src1, out0, out1 int }

// CarryGold places the gold spans of a source document in the document
// resynthesis made of its system annotation: system holds the source's text
// with the system's spans, released what resynthesis returned for it (its
// spans are the system's, one for one, re-aligned) and props the unannotated
// occurrences it replaced in that document. Text outside those places is
// copied as it was, so a gold span moves by the length changes before it; a
// gold edge inside a replaced place moves to that place's edge.
func CarryGold(gold, system, released pipeline.Document, props []surrogate.Propagation) ([]Carried, error) {
	if gold.Text != system.Text {
		return nil, fmt.Errorf("experiment: document %s: the system annotation's text is not the gold one's", gold.ID)
	}
	if len(system.Spans) != len(released.Spans) {
		return nil, fmt.Errorf("experiment: document %s: %d system spans but %d released ones", gold.ID, len(system.Spans), len(released.Spans))
	}
	places := make([]replaced, 0, len(system.Spans)+len(props))
	for i, s := range system.Spans {
		r := released.Spans[i]
		places = append(places, replaced{s.Start, s.End, r.Start, r.End})
	}
	for _, p := range props {
		places = append(places, replaced{p.SourceStart, p.SourceEnd, p.Start, p.End})
	}
	sort.Slice(places, func(i, j int) bool { return places[i].src0 < places[j].src0 })
	src, out := []rune(gold.Text), []rune(released.Text)
	carried := make([]Carried, 0, len(gold.Spans))
	for _, g := range gold.Spans {
		if g.Start < 0 || g.End > len(src) || g.Start >= g.End {
			return nil, fmt.Errorf("experiment: document %s: gold span [%d:%d] is outside its text", gold.ID, g.Start, g.End)
		}
		c := Carried{Span: g, Original: string(src[g.Start:g.End])}
		c.Start, c.End = carry(places, g.Start, false), carry(places, g.End, true)
		if c.End > len(out) || c.Start > c.End {
			return nil, fmt.Errorf("experiment: document %s: gold span [%d:%d] carried to [%d:%d], outside the released text", gold.ID, g.Start, g.End, c.Start, c.End)
		}
		c.Text = string(out[c.Start:c.End])
		var kept, rewritten bool
		for p := g.Start; p < g.End; p++ {
			if within(places, p) {
				rewritten = true
			} else if unicode.IsLetter(src[p]) || unicode.IsDigit(src[p]) {
				kept = true
			}
		}
		c.Leaked, c.Partial = kept, kept && rewritten
		carried = append(carried, c)
	}
	return carried, nil
}

// carry maps a source position to the released text: a start inside a
// replaced place (or at its start) goes to the place's start, an end inside
// one (or at its end) to its end, any other position moves with the length
// changes of the places before it.
func carry(places []replaced, p int, end bool) int {
	shift := 0
	for _, r := range places {
		switch {
		case r.src0 < p && p < r.src1, !end && p == r.src0 && r.src0 < r.src1:
			if end {
				return r.out1
			}
			return r.out0
		case end && p == r.src1 && r.src0 < r.src1:
			return r.out1
		case r.src1 <= p:
			shift = r.out1 - r.src1
		default:
			return p + shift
		}
	}
	return p + shift
}

// within tells whether source position p lies in a replaced place.
func within(places []replaced, p int) bool {
	for _, r := range places {
		if r.src0 <= p && p < r.src1 {
			return true
		}
		if r.src0 > p {
			return false
		}
	}
	return false
}
