package evaluate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
)

func sp(start, end int, typ string) pipeline.Span {
	return pipeline.Span{Start: start, End: end, Category: typ, Type: typ}
}

// Each kind of disagreement between two annotators, and three sets at once.
func TestDisagreements(t *testing.T) {
	a := []pipeline.Span{sp(0, 5, "DOCTOR"), sp(10, 15, "DATE"), sp(20, 25, "AGE"), sp(30, 35, "CITY"), sp(40, 45, "ZIP"), sp(60, 62, "AGE"), sp(63, 66, "AGE")}
	b := []pipeline.Span{sp(0, 5, "DOCTOR"), sp(10, 17, "DATE"), sp(20, 25, "DATE"), sp(31, 35, "STATE"), sp(50, 55, "PHONE"), sp(60, 66, "AGE")}
	var got []string
	for _, g := range evaluate.Disagreements([][]pipeline.Span{a, b}) {
		got = append(got, string(g.Kind))
	}
	assert.Equal(t, []string{"same", "boundary", "type", "boundary_and_type", "only_in_some", "only_in_some", "only_in_some"}, got)

	groups := evaluate.Disagreements([][]pipeline.Span{a[:1], b[:1], nil})
	require.Len(t, groups, 1)
	assert.Equal(t, evaluate.OnlyInSome, groups[0].Kind, "a third set without the span")
	assert.Equal(t, [][]pipeline.Span{{a[0]}, {b[0]}, nil}, groups[0].Spans)
}

// Agreement per type is the scorer's strict F1 of one set against the other,
// type by type; over all types it is Agreement's strict micro F1.
func TestAgreementByType(t *testing.T) {
	text := "Dr Smith saw John on 3/4/2020 in Boston, aged 54."
	doc := func(spans ...pipeline.Span) []pipeline.Document {
		d := pipeline.Document{ID: "n1", Patient: "p1", Text: text, Spans: spans}
		d.FillText()
		return []pipeline.Document{d}
	}
	a := doc(sp(3, 8, "DOCTOR"), sp(13, 17, "PATIENT"), sp(21, 29, "DATE"), sp(33, 39, "CITY"), sp(46, 48, "AGE"))
	b := doc(sp(3, 8, "DOCTOR"), sp(13, 17, "DOCTOR"), sp(21, 29, "DATE"), sp(33, 38, "CITY"))
	got, err := evaluate.AgreementByType(a, b)
	require.NoError(t, err)
	f1 := map[string]float64{}
	for _, g := range got {
		f1[g.Type] = g.F1
	}
	assert.Equal(t, map[string]float64{"": 0.444444, "AGE": 0, "CITY": 0, "DATE": 1, "DOCTOR": 0.666667, "PATIENT": 0}, roundAll(f1))
	whole, err := evaluate.Agreement(a, b, false)
	require.NoError(t, err)
	for _, m := range whole.Measures {
		if m.Label == "Strict" {
			assert.InDelta(t, m.MicroF1, got[0].F1, 1e-12)
		}
	}
}

func roundAll(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = float64(int(v*1e6+0.5)) / 1e6
	}
	return out
}
