package tagger

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"deidcorpus/pipeline"
)

// Each token's marginals sum to 1 and equal brute-force enumeration of
// every valid BIO path's probability.
func TestMarginalsMatchBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	c, seqs := randomProblem(r, 5, 6, 6)
	for i := range c.w {
		c.w[i] = r.NormFloat64()
	}
	tr := newTransitions(c.w[c.nState():], c.L)
	ws := newWorkspace(0, c.L)
	score := make([]float64, 64)
	for si := range seqs {
		s := &seqs[si]
		T, L := s.len(), c.L
		p := c.marginals(s, tr, ws)
		c.stateScores(s, score)
		want := make([]float64, T*L)
		z := 0.0
		validPaths(T, L, func(y []int) {
			v := math.Exp(c.pathScore(score, y))
			z += v
			for tt, l := range y {
				want[tt*L+l] += v
			}
		})
		for tt := 0; tt < T; tt++ {
			sum := 0.0
			for j := 0; j < L; j++ {
				sum += p[tt*L+j]
				if w := want[tt*L+j] / z; math.Abs(p[tt*L+j]-w) > 1e-12 {
					t.Errorf("sequence %d token %d label %d: marginal %.15f, brute force %.15f", si, tt, j, p[tt*L+j], w)
				}
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("sequence %d token %d: marginals sum to %.15f", si, tt, sum)
			}
		}
	}
}

// A model trained on MEDDOCAN notes is surer of plain clinical prose it has
// seen than of a short note whose PHI slots hold words it never met, even
// though the prose is the longer (total token entropy grows with length).
func TestUncertaintyRanksTheUnfamiliarFirst(t *testing.T) {
	train := readMeddocan(t, "train")[:30]
	m, err := Train(context.Background(), train, smallConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	easy := strings.Repeat("El paciente refiere dolor abdominal. ", 6)
	hard := "Nombre: Qzwvx Blorftk.\nMédico: Drqelm Vxuñak.\nFecha: 7 de Zorbu de 2391.\n"
	docs := []pipeline.Document{{ID: "easy", Text: easy}, {ID: "hard", Text: hard}, {ID: "empty"}}
	u, err := m.Uncertainty(context.Background(), docs, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("easy %+v, hard %+v", u[0], u[1])
	if u[0].Tokens <= u[1].Tokens {
		t.Fatalf("the easy note has %d tokens, the hard one %d: the test wants the easy one longer", u[0].Tokens, u[1].Tokens)
	}
	if !(u[1].Entropy > u[0].Entropy) {
		t.Errorf("hard note's uncertainty %.4f is not above the easy note's %.4f", u[1].Entropy, u[0].Entropy)
	}
	if u[2] != (Uncertainty{}) {
		t.Errorf("an empty note scores %+v, want zero", u[2])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Uncertainty(ctx, docs, 1); err == nil {
		t.Error("a cancelled context scored the documents")
	}
}
