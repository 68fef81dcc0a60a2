package gate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/tagger"
)

func risk(noteLeak float64) *tagger.HeldOutRisk {
	return &tagger.HeldOutRisk{Point: tagger.Privacy, TargetRecall: 0.995, Documents: 200, Values: 4000,
		ValuesLeakedPer1000: 4.2, ValuesLeakedPer1000CI: evaluate.Interval{Low: 2.5, High: 6.1},
		NoteLeakRate: noteLeak, NoteLeakRateCI: evaluate.Interval{Low: noteLeak / 2, High: 2 * noteLeak},
		NoteDirectRate: 0.01, NoteDirectRateCI: evaluate.Interval{Low: 0.002, High: 0.03}, CharRecall: 0.996, SpanPrecision: 0.31}
}

// provenance writes runs as a surrogate corpus's provenance holds them
// (JSON): the first run at the top, later ones under "runs".
func provenance(t *testing.T, first map[string]any, later ...map[string]any) map[string]any {
	t.Helper()
	prov := first
	if len(later) > 0 {
		prov["runs"] = later
	}
	data, err := json.Marshal(prov)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

func TestCheck(t *testing.T) {
	tagged := func(r *tagger.HeldOutRisk, noEstimate string) *Tagger {
		return &Tagger{Set: "deidentify-7", Model: "crf1", Point: tagger.Privacy, Folds: 5, Risk: r, NoEstimate: noEstimate}
	}
	ceiling := map[string]any{"maxNoteLeakRate": 0.02}
	for _, tc := range []struct {
		name string
		prov map[string]any
		err  []string // what the refusal names; none: shared
	}{
		{"gold", map[string]any{"source": "resynthesis", "set": "gold", "policy": ceiling}, nil},
		{"tagger under the ceiling", map[string]any{Key: tagged(risk(0.015), ""), "policy": ceiling}, nil},
		{"tagger without a ceiling", map[string]any{Key: tagged(risk(0.4), "")}, nil},
		{"tagger at the default policy", map[string]any{Key: tagged(risk(0.4), ""), "policy": nil}, nil},
		{"tagger above the ceiling", map[string]any{Key: tagged(risk(0.04), ""), "policy": ceiling},
			[]string{`corpus "c"`, "notes with a leaked value, 0.0400 (95% CI 0.0200 to 0.0800", "model crf1 at its privacy point", "maxNoteLeakRate 0.0200"}},
		{"tagger without an estimate", map[string]any{Key: tagged(nil, "model crf1 is gone")},
			[]string{"without a held-out estimate", "model crf1 is gone", "deidcorpus deidentify"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := Runs(provenance(t, tc.prov))
			require.NoError(t, err)
			err = Check("c", runs)
			if tc.err == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, s := range tc.err {
				assert.ErrorContains(t, err, s)
			}
		})
	}
	// A later run that added notes from a tagger's spans is gated too.
	runs, err := Runs(provenance(t, map[string]any{"set": "gold"}, map[string]any{Key: tagged(risk(0.5), ""), "policy": ceiling}))
	require.NoError(t, err)
	require.Len(t, runs, 2)
	assert.ErrorContains(t, Check("c", runs), "0.5000")
}

func TestWords(t *testing.T) {
	ceiling := 0.02
	r := Run{Tagger: &Tagger{Set: "s", Model: "crf1", Point: tagger.Privacy, TargetRecall: 0.998, Folds: 5, Risk: risk(0.015)},
		Policy: &Policy{MaxNoteLeakRate: &ceiling}}
	w := r.Words()
	for _, s := range []string{"found by a tagger, not by annotators: model crf1 at its privacy point", "5 held-out patient folds",
		"keeps 4.2 of every 1,000 such values (95% CI 2.5 to 6.1)", "1.50% of notes hold at least one (95% CI 0.75% to 3.00%)",
		"1.00% hold a direct identifier", "measured at the calibrated target recall 0.995; these notes were tagged at 0.998",
		"at most 2.00% of notes"} {
		assert.Contains(t, w, s)
	}
	assert.Contains(t, Run{Tagger: &Tagger{Set: "s", NoEstimate: "the set names no model"}}.Words(), "There is no held-out estimate")
	assert.Empty(t, Run{}.Words())
}
