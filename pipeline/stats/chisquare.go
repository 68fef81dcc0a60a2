package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// ChiSquare is Pearson's chi-square test of homogeneity of two corpora's
// counts over the same groups (a 2 x k contingency table), as Deleger et al.
// 2014 (Table 3) use it to ask whether two corpora distribute their PHI alike.
type ChiSquare struct {
	Statistic float64 `json:"statistic"`
	DOF       int     `json:"dof"` // groups kept - 1
	P         float64 `json:"p"`   // P(chi-square(DOF) >= Statistic); 1 when DOF is 0
	N         int     `json:"n"`   // both corpora's counts together
	Groups    int     `json:"groups"`
	// Dropped names the groups with no count in either corpus: they are
	// left out of the table and the degrees of freedom.
	Dropped []string `json:"dropped"`
	// MinExpected is the smallest expected count; SmallExpected the number of
	// cells expected below 5, where the chi-square approximation is poor
	// (Cochran's rule asks for none below 1 and at most a fifth below 5).
	MinExpected   float64 `json:"minExpected"`
	SmallExpected int     `json:"smallExpected"`
}

// Cell is one group's part in a chi-square test.
type Cell struct {
	ExpectedA, ExpectedB float64
	// Residual is B's adjusted standardized residual (Agresti 2002, 2.4.5):
	// (O - E) / sqrt(E (1 - row share) (1 - column share)), about standard
	// normal when the corpora are alike; positive when B has more than
	// expected. A's is its negative. Its square is the chi-square of this
	// group against all the others together (a 2 x 2 table).
	Residual float64
	// Contribution is the group's two cells' part of the statistic.
	Contribution float64
	// P is the two-sided p-value of Residual: the 2 x 2 test of this group
	// against the rest, one degree of freedom, uncorrected for the number of
	// groups.
	P float64
}

// PearsonChiSquare tests a[i] against b[i] over groups named names[i]. The
// cells of groups with a zero count in both are returned as zero values.
func PearsonChiSquare(names []string, a, b []int) (ChiSquare, []Cell) {
	cs := ChiSquare{Dropped: []string{}}
	cells := make([]Cell, len(names))
	var ra, rb int
	for i := range names {
		if a[i] == 0 && b[i] == 0 {
			cs.Dropped = append(cs.Dropped, names[i])
			continue
		}
		cs.Groups++
		ra += a[i]
		rb += b[i]
	}
	n := ra + rb
	cs.N = n
	cs.P = 1
	if cs.Groups == 0 {
		return cs, cells
	}
	cs.DOF = cs.Groups - 1
	cs.MinExpected = math.Inf(1)
	N := float64(n)
	pa, pb := float64(ra)/N, float64(rb)/N
	for i := range names {
		if a[i] == 0 && b[i] == 0 {
			continue
		}
		col := float64(a[i] + b[i])
		c := &cells[i]
		c.ExpectedA, c.ExpectedB = col*pa, col*pb
		for _, e := range []float64{c.ExpectedA, c.ExpectedB} {
			cs.MinExpected = math.Min(cs.MinExpected, e)
			if e < 5 {
				cs.SmallExpected++
			}
		}
		c.Contribution = term(float64(a[i]), c.ExpectedA) + term(float64(b[i]), c.ExpectedB)
		cs.Statistic += c.Contribution
		c.P = 1
		if v := c.ExpectedB * (1 - pb) * (1 - col/N); v > 0 {
			c.Residual = (float64(b[i]) - c.ExpectedB) / math.Sqrt(v)
			c.P = math.Erfc(math.Abs(c.Residual) / math.Sqrt2)
		}
	}
	if cs.DOF > 0 {
		cs.P = distuv.ChiSquared{K: float64(cs.DOF)}.Survival(cs.Statistic)
	}
	return cs, cells
}

// term is (O - E)^2 / E, zero for an empty row (E = 0 and O = 0).
func term(o, e float64) float64 {
	if e == 0 {
		return 0
	}
	return (o - e) * (o - e) / e
}
