package jobs_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/experiment"
	"deidcorpus/pipeline/tagger"
	"deidcorpus/store/storetest"
)

// A model trained without calibration is refused at the privacy point,
// naming the command that calibrates it; calibrated by a calibrate job (its
// hash unchanged), it tags at the privacy point, finding at least what the
// balanced point finds, and the result counts what the nets added. A plain
// training job calibrates by default.
func TestPrivacyPointJobs(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 12)
	m := newManager(t, st, nil, jobs.Options{})
	cfg := map[string]any{"training": map[string]any{"max_iterations": 10}}
	run := func(p jobs.Params) map[string]any {
		t.Helper()
		j, err := m.Enqueue(ctx, p, "", nil)
		require.NoError(t, err)
		done := wait(t, m, j.ID)[0]
		require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
		return done.Result
	}
	run(jobs.TrainParams{Corpus: "notes", Model: "plain", Config: cfg, NoCalibration: true})
	_, err := m.Enqueue(ctx, jobs.TagParams{Model: "plain", Corpus: "notes", Split: "test", OperatingPoint: "privacy"}, "", nil)
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%v", err)
	assert.ErrorContains(t, err, "deidcorpus models calibrate --model plain")
	_, err = m.Enqueue(ctx, jobs.TagParams{Model: "plain", Corpus: "notes", OperatingPoint: "balanced", TargetRecall: 0.99}, "", nil)
	assert.ErrorContains(t, err, "targetRecall: only with operating point")
	_, err = m.Enqueue(ctx, jobs.TagParams{Model: "plain", Corpus: "notes", OperatingPoint: "privacy", TargetRecall: 1.5}, "", nil)
	assert.ErrorContains(t, err, "target recall 1.5")

	before, err := st.ModelByName(ctx, "plain")
	require.NoError(t, err)
	res := run(jobs.CalibrateParams{Model: "plain", CalibrationParams: jobs.CalibrationParams{Folds: 2, Iterations: 5}})
	assert.Equal(t, "plain", res["model"])
	after, err := st.ModelByName(ctx, "plain")
	require.NoError(t, err)
	assert.Equal(t, before.Hash, after.Hash, "calibration does not change what the model tags at the balanced point")
	tm, err := tagger.Load(bytes.NewReader(after.Artifact))
	require.NoError(t, err)
	risk, ok := tm.HeldOutRisk(tagger.Privacy)
	require.True(t, ok, "the calibrated model holds its privacy figures")
	assert.Greater(t, risk.Documents, 0)

	run(jobs.TagParams{Model: "plain", Corpus: "notes", Split: "test", Set: "bal"})
	priv := run(jobs.TagParams{Model: "plain", Corpus: "notes", Split: "test", Set: "priv", OperatingPoint: "privacy"})
	assert.Contains(t, priv, "nets")
	c, err := st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	load := func(set string) []pipeline.Document {
		docs, err := st.LoadSplit(ctx, c, set, "test")
		require.NoError(t, err)
		return docs
	}
	gold := load("gold")
	balRecall, _, balSpans := experiment.CharRecallPrecision(gold, load("bal"))
	privRecall, _, privSpans := experiment.CharRecallPrecision(gold, load("priv"))
	assert.GreaterOrEqual(t, privRecall, balRecall, "the privacy point covers the PHI characters the balanced one does")
	assert.Greater(t, privSpans, 0)
	t.Logf("test split: balanced %d spans, character recall %.4f; privacy %d spans, %.4f", balSpans, balRecall, privSpans, privRecall)

	run(jobs.TrainParams{Corpus: "notes", Model: "calibrated", Config: cfg, Calibration: jobs.CalibrationParams{Folds: 2}})
	row, err := st.ModelByName(ctx, "calibrated")
	require.NoError(t, err)
	tm, err = tagger.Load(bytes.NewReader(row.Artifact))
	require.NoError(t, err)
	_, ok = tm.HeldOutRisk(tagger.Privacy)
	assert.True(t, ok, "a plain training job calibrates the privacy point")
}
