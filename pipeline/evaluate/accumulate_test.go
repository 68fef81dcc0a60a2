package evaluate

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/phi"
	"deidcorpus/pipeline/synth"
)

// A stream summed along numpy's plan is numpy's pairwise sum to the bit,
// whatever the length (leaves below 8, up to 128, splits above).
func TestPairwiseStreamIsPairwiseSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lengths := []int{105052, 10007, 4096}
	for n := range 700 {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = rng.Float64() * float64(1+rng.IntN(1000))
		}
		st := newPairwiseStream(pairwisePlan(n))
		for _, x := range xs {
			st.add(x)
		}
		require.Equal(t, pairwiseSum(xs), st.sum(), "n=%d", n)
	}
}

// perturb makes a system output from gold documents: tags dropped,
// shortened, lengthened, relabelled (also across categories) and invented.
func perturb(gold []pipeline.Document, seed uint64) []pipeline.Document {
	rng := rand.New(rand.NewPCG(seed, 11))
	types := phi.I2B2().Types()
	sys := make([]pipeline.Document, len(gold))
	for i, g := range gold {
		d := g
		d.Spans = nil
		n := len([]rune(d.Text))
		for _, s := range g.Spans {
			switch rng.IntN(10) {
			case 0:
				continue
			case 1:
				s.End = max(s.Start+1, s.End-1-rng.IntN(3))
			case 2:
				s.End = min(n, s.End+1+rng.IntN(3))
			case 3:
				s.Type = types[rng.IntN(len(types))]
				s.Category, _ = phi.I2B2().CategoryOf(s.Type)
			}
			s.Text = ""
			d.Spans = append(d.Spans, s)
			if rng.IntN(12) == 0 && s.Start+2 <= n {
				d.Spans = append(d.Spans, pipeline.Span{Start: s.Start, End: s.Start + 2, Category: "OTHER", Type: "OTHER"})
			}
		}
		d.FillText()
		d.SortSpans()
		sys[i] = d
	}
	return sys
}

// accumulate feeds gold and system to an accumulator in batches of size
// documents, the batches in reverse order (any order must do).
func accumulate(t *testing.T, gold, sys []pipeline.Document, size int, opt Options) *Report {
	t.Helper()
	a, err := NewAccumulator(opt)
	require.NoError(t, err)
	for end := len(gold); end > 0; end -= size {
		start := max(0, end-size)
		require.NoError(t, a.Add(gold[start:end], sys[start:end]))
	}
	r, err := a.Report()
	require.NoError(t, err)
	return r
}

// equalInBatches checks that every metric and option gives Evaluate's report
// over batches of several sizes, and the same figures without the lists
// with Summary.
func equalInBatches(t *testing.T, gold, sys []pipeline.Document) {
	options := []Options{{}, {Metric: MetricMeddocan}, {Metric: MetricPhysioNet}, {HIPAAOnly: true, PaperHIPAA: true}}
	for _, opt := range options {
		want, err := Evaluate(gold, sys, opt)
		require.NoError(t, err)
		require.Equal(t, len(gold), want.Documents)
		if opt == (Options{}) {
			require.NotEmpty(t, want.Measures[0].PerDocument)
			require.NotEmpty(t, want.Errors.Errors)
			require.NotZero(t, want.Measures[1].MacroPrecisionSD)
		}
		for _, size := range []int{1, 7, 100, len(gold)} {
			got := accumulate(t, gold, sys, size, opt)
			require.Equal(t, want, got, "metric %q, batches of %d", opt.Metric, size)
		}
		opt.Summary = true
		got := accumulate(t, gold, sys, 13, opt)
		for i := range want.Measures {
			want.Measures[i].PerDocument = nil
		}
		want.Errors.Errors = nil
		require.Equal(t, want, got, "metric %q, summary", opt.Metric)
	}
}

func TestAccumulatorEqualsEvaluateOnMeddocanDev(t *testing.T) {
	files, err := formats.ReadPaths(shared.Path(t, "meddocan/corpus/dev/xml"))
	require.NoError(t, err)
	f, err := formats.Lookup("i2b2")
	require.NoError(t, err)
	gold, err := f.Read(files, formats.ReadOptions{})
	require.NoError(t, err)
	equalInBatches(t, gold, perturb(gold, 1))
}

func TestAccumulatorEqualsEvaluateOnSyntheticNotes(t *testing.T) {
	var gold []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 60, Seed: 5}, func(p synth.Patient) error {
		gold = append(gold, p.Docs...)
		return nil
	}))
	equalInBatches(t, gold, perturb(gold, 2))
}

// What pairing all documents at once refuses is refused across batches too.
func TestAccumulatorRefusesWhatPairingRefuses(t *testing.T) {
	gold, sys := generate(6, 3)
	a, err := NewAccumulator(Options{})
	require.NoError(t, err)
	require.NoError(t, a.Add(gold[:4], sys[:4]))
	require.NoError(t, a.Add(gold[3:], sys[3:]))
	_, err = a.Report()
	require.True(t, errors.Is(err, ErrInput))
	require.ErrorContains(t, err, `gold document id "103-01" occurs twice`)

	a, err = NewAccumulator(Options{})
	require.NoError(t, err)
	require.NoError(t, a.Add(gold[:3], sys[:2]))
	require.NoError(t, a.Add(gold[3:], sys[2:]))
	_, err = a.Report()
	require.ErrorContains(t, err, "document 102-01: its gold and system sides came in different batches")

	_, err = NewAccumulator(Options{Metric: "bleu"})
	require.ErrorContains(t, err, `unknown metric "bleu"`)
}

// Summary keeps the report's size independent of the number of documents.
func TestSummaryDropsTheGrowingLists(t *testing.T) {
	gold, sys := generate(30, 9)
	r, err := Evaluate(gold, sys, Options{Summary: true})
	require.NoError(t, err)
	require.Equal(t, 30, r.Documents)
	require.True(t, slices.IndexFunc(r.Measures, func(m Measure) bool { return m.PerDocument != nil }) < 0)
	require.Nil(t, r.Errors.Errors)
	require.Positive(t, r.Errors.Total.Gold-r.Errors.Total.Correct)
}
