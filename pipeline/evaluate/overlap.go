package evaluate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"deidcorpus/pipeline"
)

// OverlapScores is the PhysioNet deid package's runStat result: per note, a
// gold span is found when any system span overlaps it, and a system span is a
// false positive when it overlaps no gold span. Intervals are closed, so
// spans that only touch count as overlapping, and needing no text, this
// scores offsets-only corpora. Spans are counted as listed (a duplicate
// counts twice), and every note counts, paired or not.
type OverlapScores struct {
	Counts
	GoldSpans   int     `json:"gold_spans"`
	SystemSpans int     `json:"system_spans"`
	Recall      float64 `json:"recall"` // TP/(TP+FN), runStat's sensitivity
	PPV         float64 `json:"ppv"`    // (system spans - FP)/system spans
	// RecallByType splits the gold side by type (FP cannot be), when the
	// gold spans carry types.
	RecallByType []TypeRecall `json:"recall_by_type,omitempty"`
}

// TypeRecall is the overlap recall of one gold type.
type TypeRecall struct {
	Type   string  `json:"type"`
	Found  int     `json:"found"`
	Total  int     `json:"total"`
	Recall float64 `json:"recall"`
}

// Overlap scores documents by runStat's rule. Documents are matched by ID.
func Overlap(gold, system []pipeline.Document) OverlapScores {
	t := newOverlapTally()
	t.add(gold, system)
	return t.scores()
}

// overlapTally pools Overlap's counts over batches of documents, each
// document's gold and system sides in one batch.
type overlapTally struct {
	out          OverlapScores
	found, total map[string]int
}

func newOverlapTally() *overlapTally {
	return &overlapTally{found: map[string]int{}, total: map[string]int{}}
}

func (t *overlapTally) add(gold, system []pipeline.Document) {
	sys := make(map[string][]pipeline.Span, len(system))
	out := &t.out
	for _, d := range system {
		sys[d.ID] = append(sys[d.ID], d.Spans...)
		out.SystemSpans += len(d.Spans)
	}
	goldBy := make(map[string][]pipeline.Span, len(gold))
	for _, d := range gold {
		goldBy[d.ID] = append(goldBy[d.ID], d.Spans...)
		for _, g := range d.Spans {
			out.GoldSpans++
			t.total[g.Type]++
			if overlapsAny(g, sys[d.ID]) {
				out.TP++
				t.found[g.Type]++
			} else {
				out.FN++
			}
		}
	}
	for id, spans := range sys {
		for _, s := range spans {
			if !overlapsAny(s, goldBy[id]) {
				out.FP++
			}
		}
	}
}

func (t *overlapTally) scores() OverlapScores {
	out := t.out
	out.Recall = ratio(out.TP, out.TP+out.FN)
	out.PPV = ratio(out.SystemSpans-out.FP, out.SystemSpans)
	found, total := t.found, t.total
	if len(total) > 1 || len(total) == 1 && total["PHI"] == 0 {
		for t, n := range total {
			out.RecallByType = append(out.RecallByType, TypeRecall{Type: t, Found: found[t], Total: n, Recall: ratio(found[t], n)})
		}
		sort.Slice(out.RecallByType, func(i, j int) bool { return out.RecallByType[i].Type < out.RecallByType[j].Type })
	}
	return out
}

func overlapsAny(x pipeline.Span, others []pipeline.Span) bool {
	for _, y := range others {
		if x.Start <= y.End && y.Start <= x.End {
			return true
		}
	}
	return false
}

// RenderOverlap writes the scores as runStat prints them: counts, then
// sensitivity and PPV rounded to three decimals.
func RenderOverlap(w io.Writer, s OverlapScores) error {
	round3 := func(x float64) string {
		return strconv.FormatFloat(math.Floor(x*1000+0.5)/1000, 'g', 15, 64) // Perl's int($x + .5), printed as %.15g
	}
	_, err := fmt.Fprintf(w, "\n\n==========================\n\nNum of true positives = %d\n\nNum of false positives = %d\n\nNum of false negatives = %d\n\nSensitivity/Recall = %s\n\nPPV/Specificity = %s\n\n==========================\n\n",
		s.TP, s.FP, s.FN, round3(s.Recall), round3(s.PPV))
	return err
}
