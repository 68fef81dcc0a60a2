package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/pipeline"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// A set written a batch at a time is refused to readers until finished;
// its provenance says which patients are written, one range while batches
// come in order; a retry by the same job gets it back, anyone else a conflict.
func TestAnnotationsWrittenInBatches(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	importSynth(t, st, "c", 6)
	c, err := st.CorpusByName(ctx, "c")
	require.NoError(t, err)
	var batches [][]pipeline.Document
	require.NoError(t, st.EachBatch(ctx, c, "gold", "", 4, func(b []pipeline.Document) error {
		batches = append(batches, b)
		return nil
	}))
	require.GreaterOrEqual(t, len(batches), 3)
	last := func(b []pipeline.Document) string { return b[len(b)-1].Patient }

	set, err := st.BeginAnnotations(ctx, c, "sys", "system", map[string]any{"job": 7}, 7)
	require.NoError(t, err)
	require.NoError(t, st.AppendAnnotations(ctx, c, set, "", batches[0]))
	require.NoError(t, st.AppendAnnotations(ctx, c, set, last(batches[0]), batches[1]))
	_, err = st.AnnotationSet(ctx, c, "sys")
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
	assert.ErrorContains(t, err, `annotation set "sys" of corpus "c" is being written by job 7`)

	again, err := st.BeginAnnotations(ctx, c, "sys", "system", map[string]any{"job": 7}, 7)
	require.NoError(t, err, "the same job resumes its set")
	assert.Len(t, again.Provenance["written"], 1, "batches in order make one range")
	written := store.Written(again)
	for i, b := range batches {
		for _, d := range b {
			assert.Equal(t, i < 2, written(d.Patient), "patient %s of batch %d", d.Patient, i)
		}
	}
	got, err := st.SetSpans(ctx, again, batches[1])
	require.NoError(t, err)
	assert.Equal(t, batches[1], got, "what was written reads back")
	_, err = st.BeginAnnotations(ctx, c, "sys", "system", map[string]any{"job": 8}, 8)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))

	require.NoError(t, st.AppendAnnotations(ctx, c, again, last(batches[1]), nil))
	for _, b := range batches[2:] {
		require.NoError(t, st.AppendAnnotations(ctx, c, again, "", b)) // as if out of order: a range each
	}
	done, err := st.FinishAnnotations(ctx, again)
	require.NoError(t, err)
	assert.NotContains(t, done.Provenance, "writing")
	assert.NotContains(t, done.Provenance, "written")
	assert.Equal(t, float64(7), done.Provenance["job"])
	read, err := st.AnnotationSet(ctx, c, "sys")
	require.NoError(t, err)
	gold, err := st.LoadDocuments(ctx, c, "gold")
	require.NoError(t, err)
	sys, err := st.LoadDocuments(ctx, c, read.Name)
	require.NoError(t, err)
	assert.Equal(t, gold, sys)
	err = st.AppendAnnotations(ctx, c, done, "", batches[0])
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
}
