package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/ent/job"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
)

// TestDemoJobsRunOnce: the demo's jobs run once; running the chain again
// (a restart) queues nothing, and a database whose demo corpus was not
// loaded by the demo gets none.
func TestDemoJobsRunOnce(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	defer st.Close()
	created, err := loadDemo(ctx, st)
	require.NoError(t, err)
	require.True(t, created)
	jm, err := openManager(ctx, st, nil, true, 2, 0)
	require.NoError(t, err)
	require.NoError(t, jm.Start(ctx))
	defer jm.Stop(context.Background())

	logger := slog.New(slog.DiscardHandler)
	require.NoError(t, runDemoJobs(ctx, st, jm, logger))
	sys := auth.System(ctx)
	kinds := func() []string {
		js, err := st.Client.Job.Query().Where(job.StatusEQ(job.StatusSucceeded)).All(sys)
		require.NoError(t, err)
		var k []string
		for _, j := range js {
			k = append(k, j.Kind)
		}
		return k
	}
	// The demo corpus is small: its tagging is one part.
	assert.ElementsMatch(t, []string{"resynthesize", "train", "tag", "part"}, kinds())
	require.NoError(t, runDemoJobs(ctx, st, jm, logger))
	n, err := st.Client.Job.Query().Count(sys)
	require.NoError(t, err)
	assert.Equal(t, 4, n, "a restart queues nothing")

	other, err := store.Open(ctx, filepath.Join(t.TempDir(), "o.db"))
	require.NoError(t, err)
	defer other.Close()
	files, err := formats.ReadPaths("../../testdata/i2b2")
	require.NoError(t, err)
	_, err = other.Import(ctx, store.ImportOptions{Corpus: demoCorpus, TagSet: "i2b2-2014"}, files)
	require.NoError(t, err)
	om, err := openManager(ctx, other, nil, false, 0, 0)
	require.NoError(t, err)
	require.NoError(t, runDemoJobs(ctx, other, om, logger))
	n, err = other.Client.Job.Query().Count(auth.System(ctx))
	require.NoError(t, err)
	assert.Zero(t, n, "a demo corpus the demo did not load gets no jobs")
}
