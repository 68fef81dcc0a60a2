package evaluate

import (
	"fmt"
	"io"
	"slices"
	"unicode"

	"deidcorpus/pipeline"
)

// Score is a pooled (micro) result.
type Score struct {
	Counts
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

func scoreOf(c Counts) Score {
	return Score{Counts: c, Precision: c.Precision(), Recall: c.Recall(), F1: c.F1()}
}

// MeddocanScores are the MEDDOCAN track's measures (Marimon et al., IberLEF
// 2019) as its CODALAB evaluation script computes them, micro-averaged over
// the paired documents. The script's Subtask1 "leak" needs its sentence-split
// copies of the corpus and is not computed.
type MeddocanScores struct {
	// Subtask1: span and type exact. The category is not compared: the
	// script reads only the type from BRAT, and in MEDDOCAN's XML the
	// element (the category) follows from the type; so gold read from XML
	// scores a system's BRAT, or XML of an open tag set, as the script would.
	// The per-label tables and the error analysis are i2b2's and compare
	// the category too: a corpus imported with tag set meddocan gives both
	// sides MEDDOCAN's categories.
	Subtask1 Score `json:"subtask1"`
	// Subtask2Strict: span exact, label ignored.
	Subtask2Strict Score `json:"subtask2_strict"`
	// Subtask2Merged: as Subtask2Strict, but spans separated only by
	// non-alphanumeric characters are also compared joined, and a span
	// inside a matched (joined) span is not an error.
	Subtask2Merged Score `json:"subtask2_merged"`
}

type offsets struct{ start, end int }

func cmpOffsets(a, b offsets) int {
	if a.start != b.start {
		return a.start - b.start
	}
	return a.end - b.end
}

// Meddocan scores pairs by the MEDDOCAN track's rules.
func Meddocan(pairs []Pair) MeddocanScores {
	var c meddocanCounts
	c.add(pairs)
	return c.scores()
}

// meddocanCounts are the pooled counts of the MEDDOCAN measures: subtask 1,
// subtask 2 strict and merged.
type meddocanCounts [3]Counts

func (c *meddocanCounts) add(pairs []Pair) {
	for _, p := range pairs {
		c[0] = c[0].Add(labelledSetCounts(p.Gold.Spans, p.System.Spans))
		gs, ss := spanSet(p.Gold.Spans), spanSet(p.System.Spans)
		c[1] = c[1].Add(offsetSetCounts(gs, ss))
		ix := pipeline.NewIndex(p.text())
		gm, sm := mergedSpans(p.Gold, ix), mergedSpans(p.System, ix)
		c[2] = c[2].Add(mergedCounts(gs, ss, gm, sm))
	}
}

func (c *meddocanCounts) scores() MeddocanScores {
	return MeddocanScores{Subtask1: scoreOf(c[0]), Subtask2Strict: scoreOf(c[1]), Subtask2Merged: scoreOf(c[2])}
}

// labelledSetCounts compares the sets of (type, start, end) of two
// documents.
func labelledSetCounts(gold, sys []pipeline.Span) Counts {
	type key struct {
		typ        string
		start, end int
	}
	set := func(spans []pipeline.Span) map[key]bool {
		m := make(map[key]bool, len(spans))
		for _, s := range spans {
			m[key{s.Type, s.Start, s.End}] = true
		}
		return m
	}
	g, s := set(gold), set(sys)
	var c Counts
	for k := range g {
		if s[k] {
			c.TP++
		} else {
			c.FN++
		}
	}
	c.FP = len(s) - c.TP
	return c
}

// spanSet is the sorted set of a document's offsets.
func spanSet(spans []pipeline.Span) []offsets {
	out := make([]offsets, len(spans))
	for i, s := range spans {
		out[i] = offsets{s.Start, s.End}
	}
	slices.SortFunc(out, cmpOffsets)
	return slices.Compact(out)
}

func offsetSetCounts(g, s []offsets) Counts {
	var c Counts
	for _, x := range g {
		if _, ok := slices.BinarySearchFunc(s, x, cmpOffsets); ok {
			c.TP++
		}
	}
	c.FN, c.FP = len(g)-c.TP, len(s)-c.TP
	return c
}

// mergedSpans joins, in offset order, each span with the previous (joined)
// one when the text between them holds no letter or digit (Python's
// str.isalnum). Like the script it takes the later span's end even when
// that span lies inside the previous one, and an overlap counts as an empty
// gap. ix indexes the note text (the script reads each side's own copy, which
// PairDocuments has checked to be the same).
func mergedSpans(d *pipeline.Document, ix *pipeline.Index) []offsets {
	sorted := make([]offsets, len(d.Spans))
	for i, s := range d.Spans {
		sorted[i] = offsets{s.Start, s.End}
	}
	slices.SortFunc(sorted, cmpOffsets)
	var out []offsets
	for _, y := range sorted {
		if len(out) == 0 {
			out = append(out, y)
			continue
		}
		x := &out[len(out)-1]
		if !hasAlnum(pySlice(ix, x.end, y.start)) {
			x.end = y.end
			continue
		}
		out = append(out, y)
	}
	slices.SortFunc(out, cmpOffsets)
	return slices.Compact(out)
}

// pySlice is Python's text[a:b] on code points: clamped, empty when a >= b.
func pySlice(ix *pipeline.Index, a, b int) string {
	n := ix.Len()
	a, b = max(0, min(a, n)), max(0, min(b, n))
	if a >= b {
		return ""
	}
	return ix.Slice(a, b)
}

func hasAlnum(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}

// mergedCounts: TP are the strict matches plus the merged matches; a strict
// error that lies inside any of them is forgiven.
func mergedCounts(gs, ss, gm, sm []offsets) Counts {
	var inter []offsets
	for _, x := range gs {
		if _, ok := slices.BinarySearchFunc(ss, x, cmpOffsets); ok {
			inter = append(inter, x)
		}
	}
	for _, x := range gm {
		if _, ok := slices.BinarySearchFunc(sm, x, cmpOffsets); ok {
			inter = append(inter, x)
		}
	}
	slices.SortFunc(inter, cmpOffsets)
	inter = slices.Compact(inter)
	contained := func(t offsets) bool {
		for _, e := range inter {
			if t.start >= e.start && t.end <= e.end {
				return true
			}
		}
		return false
	}
	c := Counts{TP: len(inter)}
	for _, x := range ss {
		if _, ok := slices.BinarySearchFunc(gs, x, cmpOffsets); !ok && !contained(x) {
			c.FP++
		}
	}
	for _, x := range gs {
		if _, ok := slices.BinarySearchFunc(ss, x, cmpOffsets); !ok && !contained(x) {
			c.FN++
		}
	}
	return c
}

// RenderMeddocan writes the scores in the layout of the CODALAB script's
// scores.txt (without its leak line).
func RenderMeddocan(w io.Writer, s MeddocanScores) error {
	ew := &errWriter{w: w}
	for _, l := range []struct {
		name string
		s    Score
	}{{"Subtask2Strict", s.Subtask2Strict}, {"Subtask2Merged", s.Subtask2Merged}, {"Subtask1", s.Subtask1}} {
		fmt.Fprintf(ew, "%s_Precision : %s\n", l.name, pyRepr(l.s.Precision))
		fmt.Fprintf(ew, "%s_Recall : %s\n", l.name, pyRepr(l.s.Recall))
		fmt.Fprintf(ew, "%s_F1 : %s\n", l.name, pyRepr(l.s.F1))
	}
	return ew.err
}
