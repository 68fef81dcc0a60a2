package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent/corpus"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/phi"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestCorpusKind: a corpus is original unless attested surrogate; its kind
// cannot be changed by a later import, a derived corpus inherits it, and
// resynthesis never writes into an original corpus.
func TestCorpusKind(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)

	res, err := st.Import(ctx, store.ImportOptions{Corpus: "plain", TagSet: "i2b2-2014"}, files)
	require.NoError(t, err)
	assert.Equal(t, corpus.KindOriginal, res.Corpus.Kind)
	res, err = st.Import(ctx, store.ImportOptions{Corpus: "deid", TagSet: "i2b2-2014", CorpusKind: "surrogate"}, files)
	require.NoError(t, err)
	assert.Equal(t, corpus.KindSurrogate, res.Corpus.Kind)

	_, err = st.Import(ctx, store.ImportOptions{Corpus: "deid", Set: "more", CorpusKind: "original"}, files)
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.ErrorContains(t, err, `corpus "deid" is surrogate, not original`)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "x", CorpusKind: "scrubbed"}, files)
	assert.ErrorContains(t, err, `unknown corpus kind "scrubbed"`)
	_, err = st.CreateCorpus(ctx, "y", "open", "", "scrubbed")
	assert.ErrorContains(t, err, `unknown corpus kind "scrubbed"`)

	m, err := phi.LoadMapping("i2b2-hipaa")
	require.NoError(t, err)
	for src, want := range map[string]corpus.Kind{"plain": corpus.KindOriginal, "deid": corpus.KindSurrogate} {
		res, err := st.Derive(ctx, src, "gold", m, src+"-hipaa")
		require.NoError(t, err)
		assert.Equal(t, want, res.Corpus.Kind, "derived from %s", src)
	}
}
