package experiment

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/surrogate"
)

func TestCarryGoldFollowsReplacements(t *testing.T) {
	text := "Ana Ruiz vio a Pepe en Reus el lunes."
	gold := pipeline.Document{ID: "d", Text: text, Spans: []pipeline.Span{
		{Start: 0, End: 8, Type: "PAT"}, {Start: 15, End: 19, Type: "PAT"}, {Start: 23, End: 27, Type: "CITY"}}}
	gold.FillText()
	// The system found "Ana" (not "Ruiz") and "Pepe"; "Reus" was propagated.
	system := gold
	system.Spans = []pipeline.Span{{Start: 0, End: 3, Type: "PAT"}, {Start: 15, End: 19, Type: "PAT"}}
	released := pipeline.Document{ID: "d", Text: "Josefina Ruiz vio a Al en Madrid el lunes.",
		Spans: []pipeline.Span{{Start: 0, End: 8, Type: "PAT"}, {Start: 20, End: 22, Type: "PAT"}}}
	props := []surrogate.Propagation{{Doc: "d", Type: "CITY", Start: 26, End: 32, SourceStart: 23, SourceEnd: 27}}
	got, err := CarryGold(gold, system, released, props)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, "Josefina Ruiz", got[0].Text)
	require.True(t, got[0].Leaked && got[0].Partial, "Ruiz stands as it was")
	require.Equal(t, "Al", got[1].Text)
	require.False(t, got[1].Leaked)
	require.Equal(t, "Madrid", got[2].Text)
	require.False(t, got[2].Leaked)

	_, err = CarryGold(gold, system, pipeline.Document{ID: "d", Text: released.Text}, nil)
	require.ErrorContains(t, err, "2 system spans but 0 released")
}

func TestResidualRiskCountsWhatTheSystemMissed(t *testing.T) {
	docs := longitudinal(t, 30)
	trainings := 0
	system, err := TagHeldOut(context.Background(), docs, 5, 1, oracle(t, docs, "LOCATION", &trainings), nil)
	require.NoError(t, err)
	require.Equal(t, 5, trainings)
	res, err := surrogate.New(nil, nil, 3).Run(system, surrogate.Store{})
	require.NoError(t, err)
	// The parrot attacker's tagger tags nothing: every string is a hypothesized leak.
	blind := func(ctx context.Context, train []pipeline.Document) (TagFunc, error) {
		return func(ctx context.Context, docs []pipeline.Document) ([]pipeline.Document, error) { return docs, nil }, nil
	}
	out, err := ResidualRisk(context.Background(), RiskInput{Gold: docs, System: system, Released: res.Docs, Propagated: res.Propagated},
		blind, RiskOptions{Seed: 1, Bootstrap: 200})
	require.NoError(t, err)
	all, locations := countSpans(docs, "LOCATION")
	r := out.Residual
	require.Equal(t, all, r.GoldSpans)
	// Propagation may hide a missed location that another note annotates:
	// none is annotated, so every location leaks.
	require.Equal(t, locations, r.Leaked)
	require.InDelta(t, float64(locations)/float64(all), r.LeakRate, 1e-12)
	require.True(t, r.LeakCI.Low <= r.LeakRate && r.LeakRate <= r.LeakCI.High, "%+v", r.LeakCI)
	for _, c := range r.ByCategory {
		if c.Label == "LOCATION" {
			require.Equal(t, 1.0, c.Rate)
		} else {
			require.Zero(t, c.Leaked, c.Label)
		}
	}
	// A policy that keeps every value leaks nothing, whatever the system missed.
	kept, err := ResidualRisk(context.Background(), RiskInput{Gold: docs, System: system, Released: res.Docs, Propagated: res.Propagated,
		GoldReleased: docs}, blind, RiskOptions{Seed: 1, Bootstrap: 10})
	require.NoError(t, err)
	require.Equal(t, all, kept.Residual.KeptByPolicy)
	require.Zero(t, kept.Residual.Leaked)
	require.Zero(t, kept.Parrot.Leaks)

	p := out.Parrot
	require.Equal(t, locations, p.Leaks)
	require.Equal(t, all, p.Hypothesized)
	require.Equal(t, 1.0, p.Recall)
	require.InDelta(t, float64(locations)/float64(all), p.Precision, 1e-12)
	d := out.Distinguishability
	// Every original, the leaked and the replaced, but those of which
	// propagation replaced a part (a word of another patient's name in a
	// missed location): the classifier reads whole values.
	require.Equal(t, all-r.Partial, d.Originals, "every original: the leaked and the replaced")
	require.Equal(t, all-locations, d.Surrogates)
	require.Equal(t, 5, d.Folds)
	require.NotEmpty(t, d.Features)
	for _, f := range d.Features {
		require.False(t, strings.ContainsAny(f.Label, " "), "feature groups are names, not strings: %q", f.Label)
	}
}

// The classifier tells strings apart by what they look like: surrogates of
// another shape are found, surrogates equal to their originals are not.
func TestDistinguishability(t *testing.T) {
	docs := longitudinal(t, 30)
	carry := func(sur func(string) string) ([]pipeline.Document, [][]Carried) {
		var released []pipeline.Document
		var carried [][]Carried
		for _, d := range docs {
			var cs []Carried
			for _, s := range d.Spans {
				c := Carried{Span: s, Original: s.Text}
				c.Text = sur(s.Text)
				cs = append(cs, c)
			}
			released, carried = append(released, d), append(carried, cs)
		}
		return released, carried
	}
	released, carried := carry(func(s string) string { return strings.Repeat("x", len(s)) })
	d, err := distinguish(context.Background(), released, carried, 1)
	require.NoError(t, err)
	require.Greater(t, d.AUC, 0.95)
	released, carried = carry(func(s string) string { return s })
	d, err = distinguish(context.Background(), released, carried, 1)
	require.NoError(t, err)
	require.InDelta(t, 0.5, d.AUC, 0.05)
}

func TestAUC(t *testing.T) {
	items := []item{{label: true}, {label: false}, {label: true}, {label: false}}
	require.Equal(t, 1.0, auc(items, []float64{2, 1, 3, 0}, func(item) bool { return true }))
	require.Equal(t, 0.0, auc(items, []float64{0, 1, 0, 3}, func(item) bool { return true }))
	require.Equal(t, 0.5, auc(items, []float64{1, 1, 1, 1}, func(item) bool { return true }))
}

// Character recall counts the gold spans' letters and digits inside a
// system span; precision the system spans touching gold.
func TestCharRecallPrecision(t *testing.T) {
	gold := []pipeline.Document{{ID: "a", Text: "Ana vive en Soria.", Spans: []pipeline.Span{{Start: 0, End: 3, Type: "NAME"}, {Start: 12, End: 17, Type: "CITY"}}}}
	sys := []pipeline.Document{{ID: "a", Text: gold[0].Text, Spans: []pipeline.Span{{Start: 0, End: 2}, {Start: 4, End: 8}}}}
	r, p, n := CharRecallPrecision(gold, sys)
	if n != 2 || p != 0.5 || r != 2.0/8 {
		t.Errorf("recall %g precision %g spans %d, want 0.25, 0.5, 2", r, p, n)
	}
	if !DirectIdentifier("NAME", "x") || !DirectIdentifier("LOCATION", "CALLE") || DirectIdentifier("LOCATION", "TERRITORIO") || DirectIdentifier("AGE", "AGE") {
		t.Error("direct identifiers: names, ids, contacts, dates and streets only")
	}
}
