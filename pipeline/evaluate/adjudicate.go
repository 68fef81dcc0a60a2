package evaluate

import (
	"maps"
	"slices"

	"deidcorpus/pipeline"
)

// DisagreementKind says how the sets' spans over one stretch of a note
// differ, in the strict rule's terms (offsets and label).
type DisagreementKind string

const (
	// Same: every set has the span, with the same offsets and label (a
	// strict match between each pair).
	Same DisagreementKind = "same"
	// BoundaryOnly: every set has one span there, all of one label, their
	// offsets differ.
	BoundaryOnly DisagreementKind = "boundary"
	// TypeOnly: every set has one span there, all with the same offsets,
	// their labels differ.
	TypeOnly DisagreementKind = "type"
	// BoundaryAndType: every set has one span there; offsets and labels
	// both differ.
	BoundaryAndType DisagreementKind = "boundary_and_type"
	// OnlyInSome: some sets have nothing there, or one set has several spans
	// where another has one.
	OnlyInSome DisagreementKind = "only_in_some"
)

// Group is the spans of several sets over one stretch of a note: spans that
// overlap, directly or through others, fall into one group. Spans[i] are set
// i's, in offset order.
type Group struct {
	Kind       DisagreementKind
	Start, End int
	Spans      [][]pipeline.Span
}

// Disagreements groups the spans of one note in several annotation sets
// (sets[i] is set i's spans) and classifies each group; groups come in text
// order, agreements (Same) included, so that a caller shows progress.
func Disagreements(sets [][]pipeline.Span) []Group {
	type tagged struct {
		set int
		sp  pipeline.Span
	}
	var all []tagged
	for i, spans := range sets {
		for _, sp := range spans {
			all = append(all, tagged{i, sp})
		}
	}
	slices.SortStableFunc(all, func(a, b tagged) int {
		if a.sp.Start != b.sp.Start {
			return a.sp.Start - b.sp.Start
		}
		return a.sp.End - b.sp.End
	})
	var out []Group
	for i := 0; i < len(all); {
		g := Group{Start: all[i].sp.Start, End: all[i].sp.End, Spans: make([][]pipeline.Span, len(sets))}
		j := i
		for ; j < len(all) && all[j].sp.Start < g.End; j++ {
			g.End = max(g.End, all[j].sp.End)
			g.Spans[all[j].set] = append(g.Spans[all[j].set], all[j].sp)
		}
		g.Kind = classify(g.Spans)
		out = append(out, g)
		i = j
	}
	return out
}

func classify(spans [][]pipeline.Span) DisagreementKind {
	for _, s := range spans {
		if len(s) != 1 {
			return OnlyInSome
		}
	}
	first := spans[0][0]
	sameOffsets, sameLabel := true, true
	for _, s := range spans[1:] {
		sp := s[0]
		sameOffsets = sameOffsets && sp.Start == first.Start && sp.End == first.End
		sameLabel = sameLabel && sp.Category == first.Category && sp.Type == first.Type
	}
	switch {
	case sameOffsets && sameLabel:
		return Same
	case sameLabel:
		return BoundaryOnly
	case sameOffsets:
		return TypeOnly
	}
	return BoundaryAndType
}

// TypeAgreement is two sets' agreement on one type: the scorer's strict F1
// over the tags of that type, a taken as the reference.
type TypeAgreement struct {
	Type   string  `json:"type"`
	Counts Counts  `json:"counts"`
	F1     float64 `json:"f1"`
}

// AgreementByType is Agreement's strict micro F1 for each type either set
// uses, in type order, after the F1 over all types (Type ""): the figures
// `deidcorpus eval` gives for one set scored against the other.
func AgreementByType(a, b []pipeline.Document) ([]TypeAgreement, error) {
	pairs, _, _, err := PairDocuments(a, b)
	if err != nil {
		return nil, err
	}
	types := map[string]bool{}
	for _, p := range pairs {
		for _, d := range []*pipeline.Document{p.Gold, p.System} {
			for _, sp := range d.Spans {
				types[sp.Type] = true
			}
		}
	}
	specs := []Spec{{Label: "Strict", Mode: Strict}}
	for _, t := range slices.Sorted(maps.Keys(types)) {
		specs = append(specs, Spec{Label: "Strict " + t, Mode: Strict, Type: t})
	}
	ms, err := NewScorer(pairs, false).Run(specs)
	if err != nil {
		return nil, err
	}
	out := make([]TypeAgreement, len(ms))
	for i, m := range ms {
		out[i] = TypeAgreement{Type: m.Type, Counts: m.Counts, F1: m.MicroF1}
	}
	return out, nil
}
