package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/model"
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
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
	assert.ErrorContains(t, err, `corpus "deid" is surrogate, not original`)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "x", CorpusKind: "scrubbed"}, files)
	assert.ErrorContains(t, err, `unknown corpus kind "scrubbed"`)
	_, err = st.CreateCorpus(ctx, "y", "open", "", "scrubbed")
	assert.ErrorContains(t, err, `unknown corpus kind "scrubbed"`)

	m, err := phi.LoadMapping("i2b2-hipaa")
	require.NoError(t, err)
	for src, want := range map[string]corpus.Kind{"plain": corpus.KindOriginal, "deid": corpus.KindSurrogate} {
		res, err := st.Derive(ctx, store.DeriveOptions{Source: src, Set: "gold", Mapping: m, Out: src + "-hipaa"})
		require.NoError(t, err)
		assert.Equal(t, want, res.Corpus.Kind, "derived from %s", src)
	}
}

// TestModelsFollowTheirTrainingCorpus: a researcher sees a model trained on
// a surrogate corpus, and not one trained on an original corpus, even after
// that corpus is deleted and its name given to a surrogate corpus.
func TestModelsFollowTheirTrainingCorpus(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	orig, err := st.CreateCorpus(ctx, "tmp", "open", "", corpus.KindOriginal)
	require.NoError(t, err)
	surr, err := st.CreateCorpus(ctx, "deid", "open", "", corpus.KindSurrogate)
	require.NoError(t, err)
	for name, c := range map[string]*ent.Corpus{"on-original": orig, "on-surrogate": surr} {
		_, err := st.Client.Model.Create().SetName(name).SetTrainingCorpus(c.Name).SetTrainingCorpusID(c.ID).Save(ctx)
		require.NoError(t, err)
	}
	_, err = st.Client.Model.Create().SetName("external").SetKind(model.KindExternal).SetEndpoint("http://127.0.0.1:9/").Save(ctx)
	require.NoError(t, err)
	seen := func() []string {
		rctx := auth.NewContext(ctx, auth.NewViewer(1, "rita", auth.Researcher))
		names, err := st.Client.Model.Query().Order(ent.Asc(model.FieldName)).Select(model.FieldName).Strings(rctx)
		require.NoError(t, err)
		return names
	}
	assert.Equal(t, []string{"external", "on-surrogate"}, seen())
	require.NoError(t, st.DeleteCorpus(ctx, "tmp"))
	_, err = st.CreateCorpus(ctx, "tmp", "open", "", corpus.KindSurrogate)
	require.NoError(t, err)
	assert.Equal(t, []string{"external", "on-surrogate"}, seen(), "a reused name does not uncover the model")
}

// TestOnlyCuratorsAddTextToSurrogateCorpora: an annotator assigned to a
// surrogate corpus may not import notes into it (researchers would read
// them as de-identified); a curator may.
func TestOnlyCuratorsAddTextToSurrogateCorpora(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	for name, kind := range map[string]corpus.Kind{"notes": corpus.KindOriginal, "deid": corpus.KindSurrogate} {
		_, err := st.CreateCorpus(ctx, name, "open", "", kind)
		require.NoError(t, err)
	}
	u, err := st.CreateUser(ctx, "ann", auth.Annotator)
	require.NoError(t, err)
	for _, name := range []string{"notes", "deid"} {
		_, err = st.AssignCorpus(ctx, "ann", name, true)
		require.NoError(t, err)
	}
	into := func(v *auth.Viewer, name string) error {
		return auth.Check(auth.NewContext(ctx, v), st.Client, "Mutation.importDocuments",
			map[string]any{"input": map[string]any{"corpus": name}})
	}
	ann := auth.NewViewer(u.ID, "ann", auth.Annotator)
	assert.NoError(t, into(ann, "notes"))
	err = into(auth.NewViewer(u.ID, "ann", auth.Annotator), "deid")
	assert.Equal(t, apperr.Forbidden, apperr.CodeOf(err))
	assert.ErrorContains(t, err, "only curators and admins add text to a surrogate corpus")
	assert.NoError(t, into(auth.NewViewer(0, "cur", auth.Curator), "deid"))
}
