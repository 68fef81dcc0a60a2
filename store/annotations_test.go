package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent/job"
	"deidcorpus/pipeline"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// A set written a batch at a time is refused to readers until finished;
// its provenance says which patients are written, one range while batches
// come in order; a retry by the same job gets it back, another job a
// conflict while the writer runs, and a set anew once the writer has ended
// without finishing it. AnnotationSetFree, which a job asks when it is
// queued, says what BeginAnnotations would say to a new job.
func TestAnnotationsWrittenInBatches(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	importSynth(t, st, "c", 6)
	newJob := func() int {
		j, err := st.Client.Job.Create().SetKind("tag").SetStatus(job.StatusRunning).Save(ctx)
		require.NoError(t, err)
		return j.ID
	}
	writer, other := newJob(), newJob()
	c, err := st.CorpusByName(ctx, "c")
	require.NoError(t, err)
	var batches [][]pipeline.Document
	require.NoError(t, st.EachBatch(ctx, c, "gold", "", 4, func(b []pipeline.Document) error {
		batches = append(batches, b)
		return nil
	}))
	require.GreaterOrEqual(t, len(batches), 3)
	last := func(b []pipeline.Document) string { return b[len(b)-1].Patient }

	require.NoError(t, st.AnnotationSetFree(ctx, c, "sys"))
	set, err := st.BeginAnnotations(ctx, c, "sys", "system", map[string]any{"job": writer}, writer)
	require.NoError(t, err)
	require.NoError(t, st.AppendAnnotations(ctx, c, set, "", batches[0]))
	require.NoError(t, st.AppendAnnotations(ctx, c, set, last(batches[0]), batches[1]))
	_, err = st.AnnotationSet(ctx, c, "sys")
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
	assert.ErrorContains(t, err, fmt.Sprintf(`annotation set "sys" of corpus "c" is being written by job %d`, writer))

	again, err := st.BeginAnnotations(ctx, c, "sys", "system", map[string]any{"job": writer}, writer)
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
	_, err = st.BeginAnnotations(ctx, c, "sys", "system", map[string]any{"job": other}, other)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
	assert.ErrorContains(t, err, fmt.Sprintf(`annotation set "sys" of corpus "c" is being written by tag job %d (running)`, writer))
	assert.EqualError(t, st.AnnotationSetFree(ctx, c, "sys"), err.Error())

	require.NoError(t, st.AppendAnnotations(ctx, c, again, last(batches[1]), nil))
	for _, b := range batches[2:] {
		require.NoError(t, st.AppendAnnotations(ctx, c, again, "", b)) // as if out of order: a range each
	}
	done, err := st.FinishAnnotations(ctx, again)
	require.NoError(t, err)
	assert.NotContains(t, done.Provenance, "writing")
	assert.NotContains(t, done.Provenance, "written")
	assert.Equal(t, float64(writer), done.Provenance["job"])
	read, err := st.AnnotationSet(ctx, c, "sys")
	require.NoError(t, err)
	gold, err := st.LoadDocuments(ctx, c, "gold")
	require.NoError(t, err)
	sys, err := st.LoadDocuments(ctx, c, read.Name)
	require.NoError(t, err)
	assert.Equal(t, gold, sys)
	err = st.AppendAnnotations(ctx, c, done, "", batches[0])
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
	_, err = st.BeginAnnotations(ctx, c, "sys", "system", map[string]any{"job": other}, other)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "a finished set is nobody's to take over")
	assert.EqualError(t, st.AnnotationSetFree(ctx, c, "sys"), `corpus "c" already has an annotation set "sys"`)

	// A writer that failed for good left its set half written: the next job
	// gets a set of its own under the name.
	half, err := st.BeginAnnotations(ctx, c, "half", "system", map[string]any{"job": writer}, writer)
	require.NoError(t, err)
	require.NoError(t, st.AppendAnnotations(ctx, c, half, "", batches[0]))
	_, err = st.Client.Job.UpdateOneID(writer).SetStatus(job.StatusFailed).Save(ctx)
	require.NoError(t, err)
	require.NoError(t, st.AnnotationSetFree(ctx, c, "half"))
	fresh, err := st.BeginAnnotations(ctx, c, "half", "system", map[string]any{"job": other}, other)
	require.NoError(t, err)
	assert.NotEqual(t, half.ID, fresh.ID)
	assert.EqualValues(t, other, fresh.Provenance["writing"])
	assert.Empty(t, fresh.Provenance["written"])
	for _, d := range batches[0] {
		assert.False(t, store.Written(fresh)(d.Patient), "patient %s of the abandoned set", d.Patient)
	}
}
