package evaluate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
)

// generate makes n notes with PHI of every i2b2 type, and a system output
// that drops, shortens, lengthens, relabels and invents tags.
func generate(n int, seed uint64) (gold, sys []pipeline.Document) {
	rng := rand.New(rand.NewPCG(seed, 7))
	types := phi.I2B2().Types()
	words := []string{"patient", "seen", "by", "Dr.", "on", "at", "the", "clinic", "José", "Smith-Jones", "12/03/2090", "555-1234", "--", "MRN#", "ward", "Ñandú"}
	for d := range n {
		var b strings.Builder
		var gs, ss []pipeline.Span
		cp := 0
		write := func(s string) { b.WriteString(s); cp += len([]rune(s)) }
		for w := range 60 + rng.IntN(60) {
			if w > 0 {
				write(" ")
			}
			start := cp
			k := 1 + rng.IntN(3)
			for i := range k {
				if i > 0 {
					write(" ")
				}
				write(words[rng.IntN(len(words))])
			}
			if rng.IntN(6) != 0 {
				continue
			}
			typ := types[rng.IntN(len(types))]
			cat, _ := phi.I2B2().CategoryOf(typ)
			g := pipeline.Span{Start: start, End: cp, Category: cat, Type: typ}
			gs = append(gs, g)
			s := g
			switch rng.IntN(8) {
			case 0:
				continue // missed
			case 1:
				s.End = max(s.Start+1, s.End-1-rng.IntN(3))
			case 2:
				s.End += 1 + rng.IntN(3) // may reach into the next word
			case 3:
				s.Type = types[rng.IntN(len(types))]
				s.Category, _ = phi.I2B2().CategoryOf(s.Type)
			}
			ss = append(ss, s)
			if rng.IntN(10) == 0 {
				ss = append(ss, pipeline.Span{Start: start, End: start + 1, Category: "OTHER", Type: "OTHER"})
			}
		}
		text := b.String()
		n := len([]rune(text))
		for i := range ss {
			ss[i].End = min(ss[i].End, n)
		}
		id := fmt.Sprintf("%d-01", 100+d)
		gd := pipeline.Document{ID: id, Text: text, Spans: gs}
		sd := pipeline.Document{ID: id, Text: text, Spans: ss}
		gd.SortSpans()
		sd.SortSpans()
		gold, sys = append(gold, gd), append(sys, sd)
	}
	return gold, sys
}

func TestSelfScoresOneEverywhere(t *testing.T) {
	gold, _ := generate(40, 1)
	for _, m := range Metrics() {
		r, err := Evaluate(gold, gold, Options{Metric: m})
		require.NoError(t, err)
		for _, ms := range r.Measures {
			if ms.Counts.TP+ms.Counts.FN == 0 {
				continue // nothing in scope: the script's 0, not a score
			}
			require.Equal(t, 0, ms.Counts.FP+ms.Counts.FN, ms.Label)
			require.Equal(t, [3]float64{1, 1, 1}, [3]float64{ms.MicroPrecision, ms.MicroRecall, ms.MicroF1}, ms.Label)
			for _, d := range ms.PerDocument {
				if d.TP > 0 {
					require.Equal(t, [3]float64{1, 1, 1}, [3]float64{d.Precision, d.Recall, d.F1}, ms.Label+" "+d.ID)
				}
			}
		}
		for _, ts := range r.PerType {
			require.Equal(t, 1.0, ts.Strict.F1, ts.Type)
			require.Equal(t, 1.0, ts.Relaxed.F1, ts.Type)
			require.Equal(t, 1.0, ts.Token.F1, ts.Type)
		}
		if r.Meddocan != nil {
			for _, s := range []Score{r.Meddocan.Subtask1, r.Meddocan.Subtask2Strict, r.Meddocan.Subtask2Merged} {
				require.Equal(t, 1.0, s.F1)
			}
		}
		if r.Overlap != nil {
			require.Equal(t, [2]float64{1, 1}, [2]float64{r.Overlap.Recall, r.Overlap.PPV})
		}
		require.Equal(t, r.Errors.Total.Gold, r.Errors.Total.Correct)
		require.Zero(t, r.Errors.Total.ExposedChars)
		require.Empty(t, r.Errors.Errors)
		require.Equal(t, 1.0, r.Accuracy.Accuracy)
		require.Zero(t, r.Accuracy.Exposure)
		for i, row := range r.Confusion.Cells {
			for j, v := range row {
				if i != j {
					require.Zero(t, v)
				}
			}
		}
	}
	ag, err := Agreement(gold, gold, false)
	require.NoError(t, err)
	for _, m := range ag.Measures {
		require.Equal(t, 1.0, m.MicroF1, m.Label)
		require.Equal(t, 1.0, m.MacroF1, m.Label)
	}
}

func TestEmptySystemHasRecallZero(t *testing.T) {
	gold, _ := generate(20, 2)
	empty := make([]pipeline.Document, len(gold))
	for i, d := range gold {
		empty[i] = pipeline.Document{ID: d.ID, Text: d.Text}
	}
	for _, m := range Metrics() {
		r, err := Evaluate(gold, empty, Options{Metric: m})
		require.NoError(t, err)
		for _, ms := range r.Measures {
			require.Zero(t, ms.MicroRecall, ms.Label)
			require.Zero(t, ms.MacroRecall, ms.Label)
			require.Zero(t, ms.MicroPrecision, ms.Label) // no system tags: the script's 0
		}
		if r.Meddocan != nil {
			require.Zero(t, r.Meddocan.Subtask1.Recall)
			require.Zero(t, r.Meddocan.Subtask2Merged.Recall)
		}
		if r.Overlap != nil {
			require.Zero(t, r.Overlap.Recall)
		}
		require.Equal(t, r.Errors.Total.Gold, r.Errors.Total.Missed)
		require.Equal(t, r.Errors.Total.Gold, r.Errors.Total.Exposed)
		require.Equal(t, 1.0, r.Accuracy.Exposure)
	}
}

func TestRelaxedNeverBelowStrict(t *testing.T) {
	for seed := range uint64(5) {
		gold, sys := generate(30, seed)
		pairs, _, _, err := PairDocuments(gold, sys)
		require.NoError(t, err)
		sc := NewScorer(pairs, false)
		ms, err := sc.Run([]Spec{{Label: "s", Mode: Strict}, {Label: "r", Mode: Relaxed},
			{Label: "hs", Mode: Strict, HIPAA: true}, {Label: "hr", Mode: Relaxed, HIPAA: true}})
		require.NoError(t, err)
		for k := 0; k < len(ms); k += 2 {
			strict, relaxed := ms[k], ms[k+1]
			require.GreaterOrEqual(t, relaxed.MicroF1, strict.MicroF1)
			require.GreaterOrEqual(t, relaxed.MicroRecall, strict.MicroRecall)
			for d := range strict.PerDocument {
				require.GreaterOrEqual(t, relaxed.PerDocument[d].TP, strict.PerDocument[d].TP)
				require.GreaterOrEqual(t, relaxed.PerDocument[d].Recall, strict.PerDocument[d].Recall)
			}
		}
	}
}

// Token matching worked by hand: tags split on ASCII letter and digit runs.
func TestTokenHandWorked(t *testing.T) {
	text := "Seen by Dr. John A. Smith-Jones (José), -- on 12/03/2090."
	//       0         1         2         3         4         5
	//       0123456789012345678901234567890123456789012345678901234567
	doc := func(spans ...pipeline.Span) pipeline.Document {
		return pipeline.Document{ID: "1-01", Text: text, Spans: spans}
	}
	name := func(s, e int) pipeline.Span { return pipeline.Span{Start: s, End: e, Category: "NAME", Type: "DOCTOR"} }
	date := pipeline.Span{Start: 46, End: 56, Category: "DATE", Type: "DATE"}
	cases := []struct {
		name     string
		gold     pipeline.Document
		sys      pipeline.Document
		tp, fp   int
		fn       int
		binaryTP int
	}{
		// John, A, Smith, Jones against John, A, Smith.
		{"shorter name", doc(name(12, 31)), doc(name(12, 25)), 3, 0, 1, 3},
		// "Dr. John" adds the token Dr.
		{"longer name", doc(name(12, 31)), doc(name(8, 31)), 4, 1, 0, 4},
		// 12, 03, 2090 as DATE against the same tokens as a NAME.
		{"wrong label", doc(date), doc(name(46, 56)), 0, 3, 3, 3},
		// José: é is not ASCII, so the token is "Jos" [33:36].
		{"non-ASCII", doc(name(33, 37)), doc(name(33, 36)), 1, 0, 0, 1},
		// A tag without letters or digits is one empty token at its end.
		{"no alphanumerics", doc(name(40, 42)), doc(name(40, 42)), 1, 0, 0, 1},
		{"empty token moves with the end", doc(name(40, 42)), doc(name(39, 42)), 1, 0, 0, 1},
		{"empty token at another end", doc(name(40, 42)), doc(name(40, 43)), 0, 1, 1, 0},
		// Duplicate tags count once (sets).
		{"duplicates", doc(date, date), doc(date), 3, 0, 0, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pairs, _, _, err := PairDocuments([]pipeline.Document{c.gold}, []pipeline.Document{c.sys})
			require.NoError(t, err)
			ms, err := NewScorer(pairs, false).Run([]Spec{{Label: "t", Mode: Token}, {Label: "b", Mode: Token, Binary: true}})
			require.NoError(t, err)
			require.Equal(t, Counts{TP: c.tp, FP: c.fp, FN: c.fn}, ms[0].Counts)
			require.Equal(t, c.binaryTP, ms[1].Counts.TP)
		})
	}
}

// The script's relaxed sets: a tag within 2 of an earlier one with the same
// start and label collapses into it, and TP counts the smaller set's
// matched elements.
func TestRelaxedSetQuirks(t *testing.T) {
	tag := func(s, e int) pipeline.Span { return pipeline.Span{Start: s, End: e, Category: "DATE", Type: "DATE"} }
	text := strings.Repeat("x", 40)
	cases := []struct {
		name      string
		gold, sys []pipeline.Span
		want      Counts
	}{
		{"end +2 matches", []pipeline.Span{tag(0, 10)}, []pipeline.Span{tag(0, 12)}, Counts{TP: 1}},
		{"end +3 does not", []pipeline.Span{tag(0, 10)}, []pipeline.Span{tag(0, 13)}, Counts{FP: 1, FN: 1}},
		{"end -2 matches", []pipeline.Span{tag(0, 10)}, []pipeline.Span{tag(0, 8)}, Counts{TP: 1}},
		{"start must agree", []pipeline.Span{tag(0, 10)}, []pipeline.Span{tag(1, 10)}, Counts{FP: 1, FN: 1}},
		// Gold 10 and 14 stay apart; system 12 matches both, and with the
		// smaller system set iterated TP is 1 while no gold tag is missed.
		{"one matches two", []pipeline.Span{tag(0, 10), tag(0, 14)}, []pipeline.Span{tag(0, 12)}, Counts{TP: 1}},
		// Gold 10 and 12 collapse into one set element.
		{"collapse", []pipeline.Span{tag(0, 10), tag(0, 12)}, []pipeline.Span{tag(0, 10)}, Counts{TP: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pairs, _, _, err := PairDocuments([]pipeline.Document{{ID: "a", Text: text, Spans: c.gold}}, []pipeline.Document{{ID: "a", Text: text, Spans: c.sys}})
			require.NoError(t, err)
			ms, err := NewScorer(pairs, false).Run([]Spec{{Label: "r", Mode: Relaxed}})
			require.NoError(t, err)
			require.Equal(t, c.want, ms[0].Counts)
		})
	}
}

func TestSignificanceOfSystemAgainstItselfIsOne(t *testing.T) {
	gold, sys := generate(50, 3)
	c, err := Compare(gold, sys, sys, CompareOptions{Shuffles: 999, Bootstrap: 200, Seed: 9})
	require.NoError(t, err)
	require.NotEmpty(t, c.Tests)
	for _, tt := range c.Tests {
		require.Equal(t, 1.0, tt.P, tt.Scope)
		require.Equal(t, 1.0, tt.PAdjusted, tt.Scope)
		require.False(t, tt.Significant)
	}
	// A and B share every resample (paired): equal systems get the same
	// intervals.
	require.Equal(t, c.A, c.B)
	require.Less(t, c.A.F1.Low, c.A.F1.High)
}

func TestSignificanceFindsARealDifference(t *testing.T) {
	gold, sys := generate(200, 4)
	c, err := Compare(gold, sys, gold, CompareOptions{Shuffles: 999, Bootstrap: 200, Seed: 1})
	require.NoError(t, err)
	require.Equal(t, "ALL", c.Tests[0].Scope)
	require.Less(t, c.Tests[0].P, c.Threshold)
	require.True(t, c.Tests[0].Significant)
	require.Equal(t, 1.0, c.B.F1.Low) // the gold itself: every resample scores 1
	require.Less(t, c.A.F1.High, 1.0)
	require.LessOrEqual(t, c.A.F1.Low, c.Tests[0].F1A)
	require.GreaterOrEqual(t, c.A.F1.High, c.Tests[0].F1A)
}

func TestPythonFormatting(t *testing.T) {
	for _, c := range []struct {
		x      float64
		digits int
		want   string
	}{{1, 4, "1.0"}, {0, 4, "0.0"}, {0.6, 4, "0.6"}, {0.053021, 4, "0.05302"}, {0.0913, 4, "0.0913"},
		{0.0000123456, 4, "1.235e-05"}, {0.99996, 4, "1.0"}, {0.04412, 2, "0.044"}, {0.1, 2, "0.1"}} {
		require.Equal(t, c.want, pyFormat(c.x, c.digits), "%v", c.x)
	}
	require.Equal(t, "0.24444444444444444", pyRepr(11.0/45))
	require.Equal(t, "1.0", pyRepr(1))
}
