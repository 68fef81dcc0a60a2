package store_test

import (
	"context"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mathext"

	"deidcorpus/apperr"
	"deidcorpus/internal/shared"
	"deidcorpus/pipeline/stats"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// meddocanSide is one split of MEDDOCAN (i2b2 form) counted straight from
// its XML files, independently of the readers, the store and package stats:
// whitespace tokens by strings.Fields, case-folded by upper- then
// lower-casing, span texts as the tags' text attributes.
type meddocanSide struct {
	tokens    map[string]int // folded token -> occurrences
	spanTexts map[string]int // folded span text -> occurrences
	perType   map[string]int
	names     int // spans of the NAME category
}

func countMeddocan(t *testing.T, dir string) meddocanSide {
	t.Helper()
	var x struct {
		Text string `xml:"TEXT"`
		Tags struct {
			Items []struct {
				XMLName xml.Name
				Text    string `xml:"text,attr"`
				Type    string `xml:"TYPE,attr"`
			} `xml:",any"`
		} `xml:"TAGS"`
	}
	s := meddocanSide{tokens: map[string]int{}, spanTexts: map[string]int{}, perType: map[string]int{}}
	fold := func(w string) string { return strings.ToLower(strings.ToUpper(w)) }
	paths, err := filepath.Glob(filepath.Join(dir, "*.xml"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		x.Text, x.Tags.Items = "", nil
		require.NoError(t, xml.Unmarshal(data, &x), p)
		for _, w := range strings.Fields(x.Text) {
			s.tokens[fold(w)]++
		}
		for _, it := range x.Tags.Items {
			s.spanTexts[fold(it.Text)]++
			s.perType[it.Type]++
			if it.XMLName.Local == "NAME" {
				s.names++
			}
		}
	}
	return s
}

// TestCompareMEDDOCANTrainDev: dev compared with train, by type. The
// statistic, degrees of freedom, p-value and both OOV rates equal the count
// made here from the files (to 1e-6); the name patterns add up to the name
// spans.
func TestCompareMEDDOCANTrainDev(t *testing.T) {
	shared.NotUnderRace(t, "single-threaded tests")
	trainDir := shared.Path(t, "meddocan-i2b2/train")
	devDir := shared.Path(t, "meddocan-i2b2/dev")
	train, dev := countMeddocan(t, trainDir), countMeddocan(t, devDir)

	// Pearson's chi-square over the 2 x k table of spans per type.
	types := map[string]bool{}
	var na, nb int
	for typ, n := range train.perType {
		types[typ] = true
		na += n
	}
	for typ, n := range dev.perType {
		types[typ] = true
		nb += n
	}
	n := float64(na + nb)
	var chi float64
	for typ := range types {
		col := float64(train.perType[typ] + dev.perType[typ])
		ea, eb := col*float64(na)/n, col*float64(nb)/n
		chi += math.Pow(float64(train.perType[typ])-ea, 2)/ea + math.Pow(float64(dev.perType[typ])-eb, 2)/eb
	}
	dof := len(types) - 1
	p := mathext.GammaIncRegComp(float64(dof)/2, chi/2)

	var devTokens, oovTokens, oovSpans int
	for w, c := range dev.tokens {
		devTokens += c
		if train.tokens[w] == 0 {
			oovTokens += c
		}
	}
	for w, c := range dev.spanTexts {
		if train.spanTexts[w] == 0 {
			oovSpans += c
		}
	}
	tokenRate, phiRate := float64(oovTokens)/float64(devTokens), float64(oovSpans)/float64(nb)
	require.Equal(t, 110601, devTokens, "data/README.md's whitespace tokens of dev")
	require.Equal(t, 5801, nb)

	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, b)
			importDir(t, s, "meddocan-train", "train", trainDir)
			importDir(t, s, "meddocan-dev", "dev", devDir)
			c, err := s.CompareCorpora(ctx, store.CompareOptions{A: "meddocan-train", SetA: "gold", B: "meddocan-dev", SetB: "gold", By: store.ByType})
			require.NoError(t, err)
			assert.InDelta(t, chi, c.ChiSquare.Statistic, 1e-6, "chi-square")
			assert.Equal(t, dof, c.ChiSquare.DOF, "degrees of freedom")
			assert.InDelta(t, p, c.ChiSquare.P, 1e-6, "p")
			assert.InDelta(t, tokenRate, c.OOV.TokenRate, 1e-6, "token OOV rate")
			assert.InDelta(t, phiRate, c.OOV.PHIRate, 1e-6, "PHI OOV rate")
			assert.Equal(t, devTokens, c.OOV.Tokens)
			assert.Equal(t, 11333, c.A.Spans)
			assert.Equal(t, 5801, c.B.Spans)
			assert.Equal(t, 500, c.A.Documents)
			assert.Equal(t, 250, c.B.Documents)
			assert.Len(t, c.Groups, len(types))
			t.Logf("MEDDOCAN train vs dev by type: chi-square %.4f, dof %d, p %.4g; token OOV %.4f, PHI OOV %.4f",
				c.ChiSquare.Statistic, c.ChiSquare.DOF, c.ChiSquare.P, c.OOV.TokenRate, c.OOV.PHIRate)

			for _, side := range []struct {
				got   int
				pats  int
				names int
			}{
				{c.A.NameSpans, sumPatterns(c.A.NamePatterns), train.names},
				{c.B.NameSpans, sumPatterns(c.B.NamePatterns), dev.names},
			} {
				assert.Equal(t, side.names, side.got, "name spans")
				assert.Equal(t, side.names, side.pats, "the name patterns add up to the name spans")
			}
			corpus, err := s.CorpusByName(ctx, "meddocan-dev")
			require.NoError(t, err)
			restore := store.SetNamesHeld(5) // patterns worked out every 5 distinct names
			pats, err := s.NamePatterns(ctx, corpus, "gold")
			restore()
			require.NoError(t, err)
			assert.Equal(t, c.B.NamePatterns, pats, "the one-corpus table is the comparison's")
			pa, pb := 0, 0
			for _, pp := range c.NamePatterns {
				pa += pp.A
				pb += pp.B
			}
			assert.Equal(t, train.names, pa)
			assert.Equal(t, dev.names, pb)

			// Grouped by category, the same spans in fewer groups.
			byCat, err := s.CompareCorpora(ctx, store.CompareOptions{A: "meddocan-train", SetA: "gold", B: "meddocan-dev", SetB: "gold", By: store.ByCategory})
			require.NoError(t, err)
			assert.Less(t, byCat.ChiSquare.DOF, c.ChiSquare.DOF)
			assert.Equal(t, c.OOV, byCat.OOV)

			// A corpus compared with itself: nothing differs.
			same, err := s.CompareCorpora(ctx, store.CompareOptions{A: "meddocan-dev", SetA: "gold", B: "meddocan-dev", SetB: "gold", By: store.ByType})
			require.NoError(t, err)
			assert.Zero(t, same.ChiSquare.Statistic)
			assert.Equal(t, 1.0, same.ChiSquare.P)
			assert.Zero(t, same.OOV.TokenRate)
			assert.Zero(t, same.OOV.PHIRate)

			// Bad input names the field it is about.
			for _, tc := range []struct {
				opt  store.CompareOptions
				code apperr.Code
				msg  string
			}{
				{store.CompareOptions{A: "nope", SetA: "gold", B: "meddocan-dev", SetB: "gold", By: store.ByType}, apperr.NotFound, `a: no corpus named "nope"`},
				{store.CompareOptions{A: "meddocan-train", SetA: "gold", B: "meddocan-dev", SetB: "silver", By: store.ByType}, apperr.NotFound, `setB: corpus "meddocan-dev" has no annotation set "silver"`},
				{store.CompareOptions{A: "meddocan-train", SetA: "gold", B: "meddocan-dev", SetB: "gold", By: store.BySplit}, apperr.Invalid, `by: a comparison groups spans by category or type, not "split"`},
				{store.CompareOptions{A: "meddocan-train", SetA: "gold", B: "x", SetB: "gold", By: store.ByType,
					Fields: store.CompareFields{A: "--corpus", SetA: "--set", B: "--compare", SetB: "--compare-set", By: "--by"}}, apperr.NotFound, `--compare: no corpus named "x"`},
			} {
				_, err := s.CompareCorpora(ctx, tc.opt)
				assert.Equal(t, tc.code, apperr.CodeOf(err), "%v", err)
				assert.EqualError(t, err, tc.msg)
			}
		})
	}
}

func sumPatterns(pats []stats.PatternCount) int {
	n := 0
	for _, p := range pats {
		n += p.Count
	}
	return n
}
