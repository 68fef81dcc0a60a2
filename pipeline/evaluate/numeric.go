package evaluate

import (
	"math"
	"strconv"
	"strings"
)

// The official scripts compute with Python floats and numpy; the helpers here
// do the same arithmetic in the same order so that figures printed to four
// significant digits never differ in the last digit.

// ratio is the scripts' precision and recall: 0 when the denominator is 0.
func ratio(num, den int) float64 {
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

// fscore is the scripts' F_beta with beta 1: (1+1)*((p*r)/(p+r)), 0 when
// p+r is 0.
func fscore(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * ((p * r) / (p + r))
}

// pairwiseSum is numpy's pairwise summation of float64 (numpy/core/src/umath
// loops: blocks of 8 accumulators below 128 elements, halving above), which
// np.mean and np.std use.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	if n <= 128 {
		return leafSum(a)
	}
	n2 := pairwiseSplit(n)
	return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
}

// pairwiseSplit is where numpy cuts a block of more than 128 elements.
func pairwiseSplit(n int) int {
	n2 := n / 2
	return n2 - n2%8
}

// leafSum is numpy's sum of a block of at most 128 elements.
func leafSum(a []float64) float64 {
	n := len(a)
	if n < 8 {
		res := 0.0
		for _, x := range a {
			res += x
		}
		return res
	}
	var r [8]float64
	copy(r[:], a[:8])
	i := 8
	for ; i < n-n%8; i += 8 {
		for j := range 8 {
			r[j] += a[i+j]
		}
	}
	res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
	for ; i < n; i++ {
		res += a[i]
	}
	return res
}

// pairwisePlan is the shape of numpy's pairwise summation of n values, in
// the order it adds: a positive entry sums the next that many values (a
// leaf), -1 adds the two sums on top of the stack. Summing a stream along
// the plan (pairwiseStream) gives pairwiseSum's result to the bit without
// holding the values.
func pairwisePlan(n int) []int32 {
	var plan []int32
	var walk func(n int)
	walk = func(n int) {
		if n <= 128 {
			plan = append(plan, int32(n))
			return
		}
		n2 := pairwiseSplit(n)
		walk(n2)
		walk(n - n2)
		plan = append(plan, -1)
	}
	if n > 0 {
		walk(n)
	}
	return plan
}

// pairwiseStream sums values fed one at a time along a pairwisePlan: it
// holds one leaf (at most 128 values) and a stack as deep as the plan's
// tree.
type pairwiseStream struct {
	plan  []int32
	pc    int
	leaf  []float64
	stack []float64
}

func newPairwiseStream(plan []int32) *pairwiseStream {
	return &pairwiseStream{plan: plan, leaf: make([]float64, 0, 128)}
}

func (p *pairwiseStream) add(x float64) {
	p.leaf = append(p.leaf, x)
	if len(p.leaf) < int(p.plan[p.pc]) {
		return
	}
	p.stack = append(p.stack, leafSum(p.leaf))
	p.leaf = p.leaf[:0]
	for p.pc++; p.pc < len(p.plan) && p.plan[p.pc] < 0; p.pc++ {
		k := len(p.stack)
		p.stack[k-2] += p.stack[k-1]
		p.stack = p.stack[:k-1]
	}
}

// sum is the total once every value of the plan has been added (0 for an
// empty plan).
func (p *pairwiseStream) sum() float64 {
	if len(p.stack) == 0 {
		return 0
	}
	return p.stack[0]
}

// meanStd is numpy's mean and population standard deviation (ddof 0). An
// empty input gives zeros rather than numpy's NaN, so reports stay JSON.
func meanStd(a []float64) (mean, sd float64) {
	if len(a) == 0 {
		return 0, 0
	}
	n := float64(len(a))
	mean = pairwiseSum(a) / n
	sq := make([]float64, len(a))
	for i, x := range a {
		d := x - mean
		sq[i] = d * d
	}
	return mean, math.Sqrt(pairwiseSum(sq) / n)
}

// pyFormat renders x as Python's "{:.N}".format(x) does: like %g with N
// significant digits, but a fixed-point result keeps at least one digit after
// the point ("1.0", "0.0"), and NaN prints as "nan".
func pyFormat(x float64, digits int) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(x, 'g', digits, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// pyRepr renders x as Python 3's str(float): the shortest representation that
// round-trips, with ".0" on integral values.
func pyRepr(x float64) string {
	if math.IsNaN(x) {
		return "nan"
	}
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if e := strings.IndexByte(s, 'e'); e >= 0 {
		// Both switch to exponent notation below 1e-4 ("1e-05"); above 1e6
		// they differ, but the values printed here are ratios.
		return s
	}
	if !strings.Contains(s, ".") && !math.IsInf(x, 0) {
		s += ".0"
	}
	return s
}
