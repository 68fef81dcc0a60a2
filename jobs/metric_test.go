package jobs_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// An evaluation of a MEDDOCAN corpus asked for no metric is scored with
// MEDDOCAN's: under the i2b2 script's, whose rows have none of its labels,
// a perfect system would read 0.
func TestEvaluationMetricFollowsTheTagSet(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	files := []formats.File{
		{Name: "a.txt", Data: []byte("Ingresa en Hospital Sur, calle Mayor 3.")},
		{Name: "a.ann", Data: []byte("T1\tHOSPITAL 11 23\tHospital Sur\nT2\tCALLE 25 38\tcalle Mayor 3\n")},
	}
	for _, set := range []string{"gold", "run1"} {
		_, err := st.Import(ctx, store.ImportOptions{Corpus: "med", TagSet: "meddocan", Format: "brat", Set: set}, files)
		require.NoError(t, err)
	}
	m := newManager(t, st, nil, jobs.Options{})
	asked, err := m.Enqueue(ctx, jobs.EvaluateParams{Corpus: "med", Gold: "gold", System: "run1"}, "", nil)
	require.NoError(t, err)
	forced, err := m.Enqueue(ctx, jobs.EvaluateParams{Corpus: "med", Gold: "gold", System: "run1", Metric: "i2b2"}, "", nil)
	require.NoError(t, err)
	js := wait(t, m, asked.ID, forced.ID)
	for _, j := range js {
		require.Equal(t, job.StatusSucceeded, j.Status, j.Error)
	}
	byJob := map[int]string{}
	for _, j := range js {
		e, err := st.Client.Evaluation.Get(ctx, int(j.Result["evaluation"].(float64)))
		require.NoError(t, err)
		byJob[j.ID] = e.Metric
		if j.ID == asked.ID {
			assert.InDelta(t, 1.0, e.F1, 1e-9, "MEDDOCAN's subtask 1 of a system equal to gold")
		}
	}
	assert.Equal(t, "meddocan", byJob[asked.ID])
	assert.Equal(t, "i2b2", byJob[forced.ID], "a metric asked for is kept")
}
