package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent/corpus"
	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/phi"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestDeriveMEDDOCAN maps the native MEDDOCAN corpus to i2b2 2014 and checks
// it against the i2b2 rendering of the same documents.
func TestDeriveMEDDOCAN(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	native, err := formats.ReadPaths(shared.Path(t, "meddocan/corpus/dev/brat"))
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "native", Format: "brat", TagSet: "open"}, native)
	require.NoError(t, err)
	i2b2, err := formats.ReadPaths(shared.Path(t, "meddocan-i2b2/dev"))
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "reference", TagSet: "i2b2-2014"}, i2b2)
	require.NoError(t, err)

	m, err := phi.LoadMapping("meddocan-i2b2")
	require.NoError(t, err)
	res, err := st.Derive(ctx, store.DeriveOptions{Source: "native", Set: "gold", Mapping: m, Out: "derived"})
	require.NoError(t, err)
	assert.Equal(t, 250, res.Documents)
	assert.Equal(t, "i2b2-2014", res.Corpus.Tagset)
	assert.Equal(t, "meddocan-i2b2", res.Corpus.Provenance["mapping"])
	assert.Equal(t, m.Hash, res.Corpus.Provenance["mappingHash"])

	by := []store.Dimension{store.ByCategory, store.ByType}
	got, err := st.Statistics(ctx, "derived", "gold", by)
	require.NoError(t, err)
	want, err := st.Statistics(ctx, "reference", "gold", by)
	require.NoError(t, err)
	assert.Equal(t, want.Groups, got.Groups)
	assert.Equal(t, want.Spans, got.Spans)

	_, err = st.Derive(ctx, store.DeriveOptions{Source: "native", Set: "gold", Mapping: m, Out: "derived"})
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))

	// A mapping for another tag set would drop every span: refused, with
	// the corpus's labels and the mapping's tag set named, and no corpus made.
	hipaa, err := phi.LoadMapping("i2b2-hipaa")
	require.NoError(t, err)
	_, err = st.Derive(ctx, store.DeriveOptions{Source: "native", Set: "gold", Mapping: hipaa, Out: "hipaa"})
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.ErrorContains(t, err, "drops every one of the")
	assert.ErrorContains(t, err, "the mapping is for i2b2-2014")
	_, err = st.CorpusByName(ctx, "hipaa")
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err))

	// One that drops some says how many.
	res, err = st.Derive(ctx, store.DeriveOptions{Source: "derived", Set: "gold", Mapping: hipaa, Out: "hipaa"})
	require.NoError(t, err)
	assert.Equal(t, want.Spans-res.Spans, res.Dropped)
	assert.Positive(t, res.Dropped)
}

// TestDeriveInBatches derives a corpus of several read batches: every
// document is written, with progress, and a mapping that fails on any
// document writes nothing.
func TestDeriveInBatches(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	importSynth(t, st, "synth", 400)
	store.SetImportKeep(t, 0) // the write pass reads the source again, as at hospital scale
	src, err := st.Statistics(ctx, "synth", "gold", nil)
	require.NoError(t, err)
	require.Greater(t, src.Documents, 1000, "want several batches of 500")

	hipaa, err := phi.LoadMapping("i2b2-hipaa")
	require.NoError(t, err)
	last, calls := 0, 0
	res, err := st.Derive(ctx, store.DeriveOptions{Source: "synth", Set: "gold", Mapping: hipaa, Out: "synth-hipaa", Progress: func(done, total int) {
		calls++
		assert.Equal(t, src.Documents, total)
		assert.GreaterOrEqual(t, done, last)
		last = done
	}})
	require.NoError(t, err)
	assert.Equal(t, src.Documents, res.Documents)
	assert.Equal(t, src.Documents, last)
	assert.Greater(t, calls, 1)
	got, err := st.Statistics(ctx, "synth-hipaa", "gold", nil)
	require.NoError(t, err)
	assert.Equal(t, src.Documents, got.Documents)
	assert.Equal(t, src.Spans, got.Spans+res.Dropped)

	// Names only, every other label an error: refused before a document
	// is read, every label without a rule named at once, nothing written.
	names, err := phi.ParseMapping("names-only", []byte("@default error\nNAME/* NAME/PATIENT\n"))
	require.NoError(t, err)
	synth, err := st.CorpusByName(ctx, "synth")
	require.NoError(t, err)
	labels, err := st.Labels(ctx, synth, "gold")
	require.NoError(t, err)
	var unnamed []string
	for _, l := range labels {
		if l[0] != "NAME" {
			unnamed = append(unnamed, pipeline.Span{Category: l[0], Type: l[1]}.Label())
		}
	}
	require.Greater(t, len(unnamed), 1)
	_, err = st.Derive(ctx, store.DeriveOptions{Source: "synth", Set: "gold", Mapping: names, Out: "synth-names"})
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.ErrorContains(t, err, fmt.Sprintf("mapping names-only has no rule for %d of the %d labels of \"synth\": ", len(unnamed), len(labels)))
	for _, l := range unnamed {
		assert.ErrorContains(t, err, l)
	}
	assert.NotContains(t, err.Error(), "document ")
	assert.NotContains(t, err.Error(), "does not give valid")
	_, err = st.CorpusByName(ctx, "synth-names")
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err))
}

// A derivation killed after a batch has committed is finished by its retry
// (Resume), which ends with what an uninterrupted one gives. Without Resume,
// or with another mapping, the unfinished corpus is a conflict.
func TestDeriveResumesAfterCrash(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	importSynth(t, st, "synth", 400)
	hipaa, err := phi.LoadMapping("i2b2-hipaa")
	require.NoError(t, err)
	full, err := st.Derive(ctx, store.DeriveOptions{Source: "synth", Set: "gold", Mapping: hipaa, Out: "whole"})
	require.NoError(t, err)

	committed := 0
	opt := store.DeriveOptions{Source: "synth", Set: "gold", Mapping: hipaa, Out: "resumed", Job: 7, Progress: func(done, total int) {
		committed = done
		panic(crash{})
	}}
	require.PanicsWithValue(t, crash{}, func() { st.Derive(ctx, opt) })
	require.Greater(t, committed, 0)
	require.Less(t, committed, full.Documents)
	assert.Len(t, imported(t, st, "resumed"), committed, "the first batch stays committed")

	opt.Progress = nil
	_, err = st.Derive(ctx, opt)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
	assert.ErrorContains(t, err, "unfinished import or derivation")
	other := opt
	other.Resume, other.Job = true, 8
	_, err = st.Derive(ctx, other)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "another job's retry does not write into job 7's corpus")
	dates, err := phi.ParseMapping("dates", []byte("@from i2b2-2014\n@to i2b2-2014\n@default drop\nDATE =\n"))
	require.NoError(t, err)
	other = opt
	other.Mapping, other.Resume = dates, true
	_, err = st.Derive(ctx, other)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "a retry with another mapping")

	opt.Resume = true
	res, err := st.Derive(ctx, opt)
	require.NoError(t, err)
	assert.Equal(t, full.Documents, res.Documents)
	assert.Equal(t, full.Spans, res.Spans)
	assert.Equal(t, full.Dropped, res.Dropped)
	assert.Equal(t, imported(t, st, "whole"), imported(t, st, "resumed"))
	c, err := st.CorpusByName(ctx, "resumed")
	require.NoError(t, err)
	assert.Equal(t, corpus.StateReady, c.State, "finished")
	assert.Equal(t, hipaa.Hash, c.Provenance["mappingHash"])

	// Its job's worker may die after the last batch, before the job records
	// its success: the next retry finds the corpus finished and says so. A
	// retry of another job does not take it for its own.
	again, err := st.Derive(ctx, opt)
	require.NoError(t, err)
	assert.Equal(t, full.Documents, again.Documents)
	assert.Equal(t, imported(t, st, "whole"), imported(t, st, "resumed"))
	after, err := st.CorpusByName(ctx, "resumed")
	require.NoError(t, err)
	assert.Equal(t, c.ContentVersion, after.ContentVersion, "nothing written, the cached statistics stay valid")
	other = opt
	other.Job = 8
	_, err = st.Derive(ctx, other)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "another job's retry")
}

// Derivations of one name at once, as several clients may ask: one makes
// the corpus, whole; the others are conflicts naming it, and write nothing
// into it.
func TestConcurrentDerivesOfOneName(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b)
			importSynth(t, st, "synth", 200)
			hipaa, err := phi.LoadMapping("i2b2-hipaa")
			require.NoError(t, err)
			whole, err := st.Derive(ctx, store.DeriveOptions{Source: "synth", Set: "gold", Mapping: hipaa, Out: "whole"})
			require.NoError(t, err)
			errs := make([]error, 4)
			var wg sync.WaitGroup
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = st.Derive(ctx, store.DeriveOptions{Source: "synth", Set: "gold", Mapping: hipaa, Out: "raced"})
				}()
			}
			wg.Wait()
			succeeded := 0
			for _, err := range errs {
				if err == nil {
					succeeded++
					continue
				}
				assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), err)
				assert.ErrorContains(t, err, `"raced"`)
			}
			assert.Equal(t, 1, succeeded)
			assert.Len(t, imported(t, st, "raced"), whole.Documents)
			assert.Equal(t, imported(t, st, "whole"), imported(t, st, "raced"))
		})
	}
}
