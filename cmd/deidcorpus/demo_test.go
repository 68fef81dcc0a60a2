package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent/annotationset"
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

// TestDemoAnnotation: the demo ships two annotators' sets over a few dev
// notes that disagree in a type, a boundary and a missed span, so that
// Adjudicate has something on first start; each annotator, blind, reads its
// own set only. A second load (the corpus deleted since) takes the accounts
// again.
func TestDemoAnnotation(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "d.db"))
	require.NoError(t, err)
	defer st.Close()
	start := time.Now()
	_, err = loadDemo(ctx, st)
	require.NoError(t, err)
	t.Logf("demo loaded with its annotation in %v", time.Since(start))

	progress, err := st.AnnotatorsProgress(ctx, demoCorpus, demoBatch)
	require.NoError(t, err)
	require.Len(t, progress, 2)
	assert.Equal(t, store.AnnotatorProgress{Set: "demo-batch:demo-ann", Annotator: "demo-ann", Todo: 1, InProgress: 1, Done: 2, Total: 4}, progress[0])
	assert.Equal(t, store.AnnotatorProgress{Set: "demo-batch:demo-bob", Annotator: "demo-bob", Todo: 1, Done: 3, Total: 4}, progress[1])

	sets := []string{progress[0].Set, progress[1].Set}
	c, err := st.CorpusByName(ctx, demoCorpus)
	require.NoError(t, err)
	bob, err := st.AnnotationSet(ctx, c, sets[1])
	require.NoError(t, err)
	states, err := st.SetProgress(ctx, bob)
	require.NoError(t, err)
	var kinds []string
	for _, s := range states {
		groups, err := st.Disagreements(ctx, demoCorpus, sets, s.DocumentID, false)
		require.NoError(t, err)
		for _, g := range groups {
			kinds = append(kinds, g.Kind)
		}
	}
	assert.ElementsMatch(t, []string{"type", "boundary", "only_in_some"}, kinds, "one mistake in each of bob's first three notes")
	pairs, err := st.Agreement(ctx, demoCorpus, sets)
	require.NoError(t, err)
	require.Len(t, pairs, 1)
	assert.Equal(t, 4, pairs[0].Documents)
	assert.Less(t, pairs[0].F1, 1.0)
	assert.Greater(t, pairs[0].F1, 0.8, "a few mistakes among many spans")

	// Blind: demo-ann reads her set, not bob's nor gold.
	u, err := st.UserByName(ctx, "demo-ann")
	require.NoError(t, err)
	ann := auth.NewContext(ctx, auth.NewViewer(u.ID, u.Name, auth.Annotator))
	seen, err := st.Client.AnnotationSet.Query().Where(annotationset.CorpusID(c.ID)).Select(annotationset.FieldName).Strings(ann)
	require.NoError(t, err)
	assert.Equal(t, []string{"demo-batch:demo-ann"}, seen)
	_, err = st.Agreement(ann, demoCorpus, sets)
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "nor their agreement, which reads bob's set")

	require.NoError(t, st.DeleteCorpus(ctx, demoCorpus))
	created, err := loadDemo(ctx, st)
	require.NoError(t, err)
	assert.True(t, created, "the demo loads again with the accounts it made before")
}
