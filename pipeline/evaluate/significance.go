package evaluate

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"deidcorpus/pipeline"
)

// CompareOptions tune Compare. Zero values take the defaults.
type CompareOptions struct {
	Mode       Mode    // matching mode; default Strict
	Shuffles   int     // approximate randomization shuffles; default 9,999
	Bootstrap  int     // bootstrap resamples; default 1,000
	Seed       uint64  // makes both procedures reproducible
	Alpha      float64 // family-wise significance level; default 0.05
	Confidence float64 // bootstrap interval coverage; default 0.95
	PaperHIPAA bool    // HIPAA list of the paper rather than the script (labels only)
}

// MaxShuffles and MaxBootstrap bound the resamples a caller may ask for
// (GraphQL's compareEvaluations, the eval command, experiments): the
// bootstrap keeps three scores per resample and system, and each shuffle or
// resample is a pass over the documents, so an unbounded count is a way to
// take a server's memory or hold its CPU. Ten times the defaults still
// gives p-values and intervals finer than anyone reads.
const (
	MaxShuffles  = 100_000
	MaxBootstrap = 100_000
)

// CheckResamples refuses a count of shuffles or bootstrap resamples over its
// cap, or negative, naming the argument (0 takes the default).
func CheckResamples(shuffles, bootstrap int) error {
	for _, c := range []struct {
		arg    string
		n, max int
	}{{"shuffles", shuffles, MaxShuffles}, {"bootstrap", bootstrap, MaxBootstrap}} {
		if c.n < 0 || c.n > c.max {
			return fmt.Errorf("%s: %d is out of range: at most %d (0 takes the default)", c.arg, c.n, c.max)
		}
	}
	return nil
}

func (o *CompareOptions) defaults() {
	if o.Mode == "" {
		o.Mode = Strict
	}
	if o.Shuffles <= 0 {
		o.Shuffles = 9999
	}
	if o.Bootstrap <= 0 {
		o.Bootstrap = 1000
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.05
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
}

// SignificanceTest is one approximate-randomization test of the difference
// in micro F1 between two systems.
type SignificanceTest struct {
	Scope     string  `json:"scope"` // "ALL" or a category
	F1A       float64 `json:"f1_a"`
	F1B       float64 `json:"f1_b"`
	Diff      float64 `json:"diff"` // F1B - F1A
	P         float64 `json:"p"`
	PAdjusted float64 `json:"p_bonferroni"` // P times the number of tests, at most 1
	// Significant: P below Alpha divided by the number of tests.
	Significant bool `json:"significant"`
}

// Interval is a confidence interval.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// BootstrapCI holds percentile bootstrap intervals of one system's micro
// scores, resampling documents.
type BootstrapCI struct {
	Precision Interval `json:"precision"`
	Recall    Interval `json:"recall"`
	F1        Interval `json:"f1"`
}

// Comparison is the result of Compare.
type Comparison struct {
	Mode       Mode               `json:"mode"`
	Documents  int                `json:"documents"`
	Shuffles   int                `json:"shuffles"`
	Bootstrap  int                `json:"bootstrap"`
	Seed       uint64             `json:"seed"`
	Alpha      float64            `json:"alpha"`
	Threshold  float64            `json:"threshold"` // Alpha / number of tests (Bonferroni)
	Confidence float64            `json:"confidence"`
	Tests      []SignificanceTest `json:"tests"`
	A          BootstrapCI        `json:"a"`
	B          BootstrapCI        `json:"b"`
}

// Compare tests whether systems a and b differ on the same gold, as Deleger
// et al. 2014 did: approximate randomization over documents (each shuffle
// swaps the two systems' output on a random half of the documents; p is
// (shuffles at least as extreme + 1) / (shuffles + 1)), for all tags and per
// category, with a Bonferroni correction across those tests; and percentile
// bootstrap intervals for each system's precision, recall and F1, both
// systems on the same resamples (paired). Only
// documents present in all three sets are used.
func Compare(gold, a, b []pipeline.Document, opt CompareOptions) (*Comparison, error) {
	if err := CheckResamples(opt.Shuffles, opt.Bootstrap); err != nil {
		return nil, err
	}
	opt.defaults()
	pa, _, _, err := PairDocuments(gold, a)
	if err != nil {
		return nil, err
	}
	pb, _, _, err := PairDocuments(gold, b)
	if err != nil {
		return nil, err
	}
	inB := map[string]Pair{}
	for _, p := range pb {
		inB[p.ID] = p
	}
	var pairsA, pairsB []Pair
	for _, p := range pa {
		if q, ok := inB[p.ID]; ok {
			pairsA, pairsB = append(pairsA, p), append(pairsB, q)
		}
	}
	sa, sb := NewScorer(pairsA, opt.PaperHIPAA), NewScorer(pairsB, opt.PaperHIPAA)
	scopes := []string{"ALL"}
	specs := []Spec{{Label: "ALL", Mode: opt.Mode}}
	for _, c := range unionCategories(sa, sb) {
		scopes = append(scopes, c)
		specs = append(specs, Spec{Label: c, Mode: opt.Mode, Category: c})
	}
	ca, err := sa.DocCounts(specs)
	if err != nil {
		return nil, err
	}
	cb, err := sb.DocCounts(specs)
	if err != nil {
		return nil, err
	}
	// Keep the categories either system or the gold has tags of.
	var keep []int
	for i := range specs {
		if i == 0 || total(ca[i]) != (Counts{}) || total(cb[i]) != (Counts{}) {
			keep = append(keep, i)
		}
	}
	cmp := &Comparison{Mode: opt.Mode, Documents: len(pairsA), Shuffles: opt.Shuffles, Bootstrap: opt.Bootstrap,
		Seed: opt.Seed, Alpha: opt.Alpha, Confidence: opt.Confidence}
	cmp.Threshold = opt.Alpha / float64(len(keep))
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	for _, i := range keep {
		t := randomization(ca[i], cb[i], opt.Shuffles, rng)
		t.Scope = scopes[i]
		t.PAdjusted = math.Min(1, t.P*float64(len(keep)))
		t.Significant = t.P < cmp.Threshold
		cmp.Tests = append(cmp.Tests, t)
	}
	cis := bootstrap([][]Counts{ca[0], cb[0]}, opt.Bootstrap, opt.Confidence, rng)
	cmp.A, cmp.B = cis[0], cis[1]
	return cmp, nil
}

func unionCategories(a, b *Scorer) []string {
	out := a.Categories()
	for _, c := range b.Categories() {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func total(cs []Counts) Counts {
	var t Counts
	for _, c := range cs {
		t = t.Add(c)
	}
	return t
}

// randomization runs the shuffles. Only documents where the systems differ
// can change a shuffled total, so only those are visited.
func randomization(a, b []Counts, shuffles int, rng *rand.Rand) SignificanceTest {
	ta, tb := total(a), total(b)
	t := SignificanceTest{F1A: ta.F1(), F1B: tb.F1()}
	t.Diff = t.F1B - t.F1A
	observed := math.Abs(t.Diff)
	type delta struct{ tp, fp, fn int }
	var ds []delta
	for d := range a {
		if a[d] != b[d] {
			ds = append(ds, delta{b[d].TP - a[d].TP, b[d].FP - a[d].FP, b[d].FN - a[d].FN})
		}
	}
	extreme := 0
	for range shuffles {
		xa, xb := ta, tb
		var bits uint64
		for k, d := range ds {
			if k%64 == 0 {
				bits = rng.Uint64()
			}
			if bits&1 == 1 {
				xa.TP, xa.FP, xa.FN = xa.TP+d.tp, xa.FP+d.fp, xa.FN+d.fn
				xb.TP, xb.FP, xb.FN = xb.TP-d.tp, xb.FP-d.fp, xb.FN-d.fn
			}
			bits >>= 1
		}
		// A shuffle as extreme as the observed difference, allowing for
		// rounding when they are equal.
		if math.Abs(xb.F1()-xa.F1()) >= observed-1e-12 {
			extreme++
		}
	}
	t.P = float64(extreme+1) / float64(shuffles+1)
	return t
}

// bootstrap resamples documents with replacement and takes percentile
// intervals of each system's micro precision, recall and F1. The systems
// share every resample (paired), so that their intervals differ only where
// their outputs do: two identical systems get identical intervals.
func bootstrap(systems [][]Counts, samples int, confidence float64, rng *rand.Rand) []BootstrapCI {
	out := make([]BootstrapCI, len(systems))
	n := len(systems[0])
	if n == 0 {
		return out
	}
	type scores struct{ p, r, f []float64 }
	all := make([]scores, len(systems))
	for k := range all {
		all[k] = scores{make([]float64, samples), make([]float64, samples), make([]float64, samples)}
	}
	sums := make([]Counts, len(systems))
	for s := range samples {
		clear(sums)
		for range n {
			d := rng.IntN(n)
			for k, docs := range systems {
				sums[k] = sums[k].Add(docs[d])
			}
		}
		for k, c := range sums {
			all[k].p[s], all[k].r[s], all[k].f[s] = c.Precision(), c.Recall(), c.F1()
		}
	}
	iv := func(x []float64) Interval {
		slices.Sort(x)
		lo := int(math.Floor((1 - confidence) / 2 * float64(len(x))))
		hi := int(math.Ceil((1+confidence)/2*float64(len(x)))) - 1
		return Interval{Low: x[max(lo, 0)], High: x[min(max(hi, 0), len(x)-1)]}
	}
	for k, sc := range all {
		out[k] = BootstrapCI{Precision: iv(sc.p), Recall: iv(sc.r), F1: iv(sc.f)}
	}
	return out
}

// RenderComparison writes a comparison as a table.
func RenderComparison(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	f4 := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	fmt.Fprintf(ew, "Approximate randomization, %s matching, %d documents, %d shuffles (seed %d); Bonferroni over %d tests: significant when p < %s\n",
		c.Mode, c.Documents, c.Shuffles, c.Seed, len(c.Tests), strconv.FormatFloat(c.Threshold, 'g', 4, 64))
	fmt.Fprintf(ew, "%s%s%s%s%s%s\n", pad("Scope", 14), pad("F1 A", 10), pad("F1 B", 10), pad("B-A", 10), pad("p", 10), "p adjusted")
	for _, t := range c.Tests {
		mark := ""
		if t.Significant {
			mark = " *"
		}
		fmt.Fprintf(ew, "%s%s%s%s%s%s%s\n", pad(t.Scope, 14), pad(f4(t.F1A), 10), pad(f4(t.F1B), 10), pad(f4(t.Diff), 10),
			pad(f4(t.P), 10), f4(t.PAdjusted), mark)
	}
	ci := func(name string, b BootstrapCI) {
		fmt.Fprintf(ew, "%s P [%s, %s]  R [%s, %s]  F1 [%s, %s]\n", name, f4(b.Precision.Low), f4(b.Precision.High),
			f4(b.Recall.Low), f4(b.Recall.High), f4(b.F1.Low), f4(b.F1.High))
	}
	fmt.Fprintf(ew, "Bootstrap %g%% intervals over %d resamples of documents:\n", c.Confidence*100, c.Bootstrap)
	ci("A", c.A)
	ci("B", c.B)
	return ew.err
}
