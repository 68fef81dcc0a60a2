package tagger

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomProblem builds a small CRF over L BIO labels (L odd) whose every
// attribute has features for a random subset of labels, and random valid
// sequences over it.
func randomProblem(r *rand.Rand, L, A, nseq int) (*crf, []sequence) {
	c := &crf{L: L, attrStart: []int32{0}}
	for a := 0; a < A; a++ {
		for y := 0; y < L; y++ {
			if y == 0 || r.IntN(2) == 0 {
				c.featLabel = append(c.featLabel, uint16(y))
			}
		}
		c.attrStart = append(c.attrStart, int32(len(c.featLabel)))
	}
	c.w = make([]float64, len(c.featLabel)+L*L)
	var seqs []sequence
	for k := 0; k < nseq; k++ {
		T := 1 + r.IntN(7)
		s := sequence{off: []int32{0}}
		for t := 0; t < T; t++ {
			for n := 1 + r.IntN(4); n > 0; n-- {
				s.attrs = append(s.attrs, int32(r.IntN(A)))
			}
			s.off = append(s.off, int32(len(s.attrs)))
			y := r.IntN(L)
			for t > 0 && !validTransition(s.y[t-1], y) || t == 0 && y > 0 && y%2 == 0 {
				y = r.IntN(L)
			}
			s.y = append(s.y, y)
		}
		seqs = append(seqs, s)
	}
	return c, seqs
}

// pathScore is the score of label path y: its state scores (score[t*L+y]) and
// transition weights.
func (c *crf) pathScore(score []float64, y []int) float64 {
	v := 0.0
	for t := range y {
		v += score[t*c.L+y[t]]
		if t > 0 {
			v += c.w[c.nState()+y[t-1]*c.L+y[t]]
		}
	}
	return v
}

// validPaths calls fn with every valid BIO path of T labels out of L (fn must
// not keep y).
func validPaths(T, L int, fn func(y []int)) {
	y := make([]int, T)
	for {
		ok := y[0] == 0 || y[0]%2 == 1
		for t := 1; t < T && ok; t++ {
			ok = validTransition(y[t-1], y[t])
		}
		if ok {
			fn(y)
		}
		k := 0
		for k < T && y[k] == L-1 {
			y[k] = 0
			k++
		}
		if k == T {
			return
		}
		y[k]++
	}
}

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c, seqs := randomProblem(r, 5, 12, 9)
	for _, run := range []struct {
		workers int
		cost    *marginCost
	}{{1, nil}, {3, nil}, {1, &marginCost{wrong: 0.7, missed: 1.9}}, {3, &marginCost{wrong: 0.7, missed: 1.9}}} {
		workers := run.workers
		obj := newObjective(c, seqs, 0.3, workers)
		obj.cost = run.cost
		x := make([]float64, len(c.w))
		for i := range x {
			x[i] = r.NormFloat64()
		}
		obj.evaluate(x)
		grad := append([]float64(nil), obj.lastGrad...)
		const h = 1e-5
		for i := range x {
			xp := append([]float64(nil), x...)
			xp[i] += h
			obj.evaluate(xp)
			fp := obj.lastF
			xp[i] -= 2 * h
			obj.evaluate(xp)
			fm := obj.lastF
			num := (fp - fm) / (2 * h)
			if math.Abs(num-grad[i]) > 1e-6*math.Max(1, math.Abs(num)) {
				t.Errorf("workers %d, cost %v: d/dw[%d]: analytic %.8f, numeric %.8f", workers, run.cost, i, grad[i], num)
			}
		}
	}
}

// The log-partition must equal brute-force enumeration of all valid BIO
// label paths; with softmax-margin, of every path's score plus its cost
// against the gold labels.
func TestLossMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	c, seqs := randomProblem(r, 5, 6, 4)
	for i := range c.w {
		c.w[i] = r.NormFloat64()
	}
	for _, cost := range []*marginCost{nil, {wrong: 0.5, missed: 2}} {
		obj := newObjective(c, seqs, 0, 1)
		obj.cost = cost
		obj.evaluate(c.w)
		want := 0.0
		score := make([]float64, 64)
		for si := range seqs {
			s := &seqs[si]
			T, L := s.len(), c.L
			c.stateScores(s, score)
			z := 0.0
			validPaths(T, L, func(y []int) {
				v := c.pathScore(score, y)
				for t, g := range s.y {
					switch {
					case cost == nil || y[t] == g:
					case y[t] == 0:
						v += cost.missed
					default:
						v += cost.wrong
					}
				}
				z += math.Exp(v)
			})
			want += math.Log(z) - c.pathScore(score, s.y)
		}
		if math.Abs(obj.lastF-want) > 1e-9 {
			t.Errorf("cost %v: loss %.12f, brute force %.12f", cost, obj.lastF, want)
		}
	}
}

// Viterbi, with and without a bias, returns the best of all valid BIO label
// paths found by enumerating them.
func TestViterbiMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const L = 7
	c, seqs := randomProblem(r, L, 10, 30)
	for i := range c.w {
		c.w[i] = 2 * r.NormFloat64()
	}
	bias := make([]float64, L)
	for j := 1; j < L; j++ {
		bias[j] = r.NormFloat64()
	}
	score, back := make([]float64, 8*L), make([]int32, 8*L)
	for si := range seqs {
		s := &seqs[si]
		T := s.len()
		for _, b := range [][]float64{nil, bias} {
			got := c.viterbi(s, b, score, back) // it leaves the biased state scores in score
			var want []int
			best := math.Inf(-1)
			validPaths(T, L, func(y []int) {
				if v := c.pathScore(score, y); v > best {
					best, want = v, slices.Clone(y)
				}
			})
			if !slices.Equal(got, want) {
				t.Fatalf("sequence %d (bias %v): viterbi %v (%.6f), best path %v (%.6f)", si, b != nil, got, c.pathScore(score, got), want, best)
			}
		}
	}
}

// Viterbi's pruned search over predecessors returns exactly the path of the
// exhaustive dynamic programme (ties to the lowest label): with as many
// labels as MEDDOCAN's on long sequences, with integer weights so that ties
// are frequent, and with real-valued weights on many short sequences. Scores
// that are not numbers do not make it panic.
func TestViterbiPrunedEqualsExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	check := func(c *crf, T, A int, what string) {
		t.Helper()
		s := sequence{off: []int32{0}}
		for range T {
			for n := 1 + r.IntN(6); n > 0; n-- {
				s.attrs = append(s.attrs, int32(r.IntN(A)))
			}
			s.off = append(s.off, int32(len(s.attrs)))
		}
		score, back := make([]float64, T*c.L), make([]int32, T*c.L)
		got := c.viterbi(&s, nil, score, back)
		if want := exhaustiveViterbi(c, score, T); !slices.Equal(got, want) {
			t.Fatalf("%s (L %d, T %d): pruned %v, exhaustive %v", what, c.L, T, got, want)
		}
	}
	c, _ := randomProblem(r, 45, 40, 0)
	for _, scale := range []float64{0.5, 3, 20} {
		for i := range c.w {
			c.w[i] = math.Round(scale * r.NormFloat64())
		}
		for range 20 {
			check(c, 1+r.IntN(300), 40, fmt.Sprintf("integer weights, scale %v", scale))
		}
	}
	for _, L := range []int{3, 5, 7} {
		c, _ := randomProblem(r, L, 6, 0)
		for range 3000 {
			for i := range c.w {
				c.w[i] = r.NormFloat64()
			}
			check(c, 2+r.IntN(7), 6, "real weights")
		}
	}
	bias := make([]float64, c.L)
	bias[0] = math.NaN()
	s := sequence{off: []int32{0, 1, 2, 3}, attrs: []int32{0, 1, 2}}
	c.viterbi(&s, bias, make([]float64, 3*c.L), make([]int32, 3*c.L))
}

// exhaustiveViterbi is the textbook dynamic programme over every valid
// predecessor, ties to the lowest label, over the state scores in score.
func exhaustiveViterbi(c *crf, score []float64, T int) []int {
	L := c.L
	tr := c.w[c.nState():]
	delta := make([]float64, T*L)
	back := make([]int, T*L)
	for j := 0; j < L; j++ {
		delta[j] = score[j]
		if j > 0 && j%2 == 0 {
			delta[j] = math.Inf(-1)
		}
	}
	for t := 1; t < T; t++ {
		for j := 0; j < L; j++ {
			best, arg := math.Inf(-1), -1
			for i := 0; i < L; i++ {
				if !validTransition(i, j) {
					continue
				}
				if v := delta[(t-1)*L+i] + tr[i*L+j]; arg < 0 || v > best {
					best, arg = v, i
				}
			}
			delta[t*L+j], back[t*L+j] = best+score[t*L+j], arg
		}
	}
	y := make([]int, T)
	for j := 1; j < L; j++ {
		if delta[(T-1)*L+j] > delta[(T-1)*L+y[T-1]] {
			y[T-1] = j
		}
	}
	for t := T - 1; t > 0; t-- {
		y[t-1] = back[t*L+y[t]]
	}
	return y
}

// Training fits a separable toy problem (labels O, B, I) and Viterbi
// recovers its labels.
func TestFitAndViterbi(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	c, seqs := randomProblem(r, 3, 3, 30)
	// One attribute per token, and the label is a function of it.
	for si := range seqs {
		s := &seqs[si]
		var attrs []int32
		off := []int32{0}
		for tt := 0; tt < s.len(); tt++ {
			a := s.attrs[s.off[tt]]
			if a == 2 && (tt == 0 || s.y[tt-1] == 0) {
				a = 1 // keep to valid BIO: I (2) only after B (1) or I
			}
			attrs = append(attrs, a)
			off = append(off, int32(len(attrs)))
			s.y[tt] = int(a)
		}
		s.attrs, s.off = attrs, off
	}
	c.featLabel = c.featLabel[:0]
	c.attrStart = []int32{0}
	for a := 0; a < 3; a++ {
		for y := 0; y < 3; y++ {
			c.featLabel = append(c.featLabel, uint16(y))
		}
		c.attrStart = append(c.attrStart, int32(len(c.featLabel)))
	}
	c.w = make([]float64, len(c.featLabel)+9)
	opt := DefaultTraining()
	opt.L2 = 0.01
	if _, _, err := c.fit(context.Background(), seqs, opt, nil); err != nil {
		t.Fatal(err)
	}
	score := make([]float64, 64*3)
	back := make([]int32, 64*3)
	for si := range seqs {
		got := c.viterbi(&seqs[si], nil, score, back)
		for tt := range got {
			if got[tt] != seqs[si].y[tt] {
				t.Fatalf("sequence %d token %d: label %d, want %d", si, tt, got[tt], seqs[si].y[tt])
			}
		}
	}
}

// BenchmarkGradient measures one evaluation of the objective and its
// gradient (forward-backward over every sequence, both cores) on 100
// MEDDOCAN train documents, in tokens per second.
func BenchmarkGradient(b *testing.B) {
	docs := readMeddocan(b, "train")[:100]
	m := &Model{Config: DefaultConfig()}
	ts, err := m.prepareTraining(docs)
	if err != nil {
		b.Fatal(err)
	}
	seqs, _, err := m.trainingSequences(context.Background(), ts, func(Progress) {})
	if err != nil {
		b.Fatal(err)
	}
	tokens := 0
	for i := range seqs {
		tokens += seqs[i].len()
	}
	c := buildCRF(seqs, len(m.attrs), m.labels.N())
	obj := newObjective(c, seqs, 1, 2)
	x := make([]float64, len(c.w))
	b.ResetTimer()
	for b.Loop() {
		x[0] += 1e-9 // defeat the cache of the last point
		obj.evaluate(x)
	}
	b.ReportMetric(float64(tokens*b.N)/b.Elapsed().Seconds(), "tokens/s")
}
