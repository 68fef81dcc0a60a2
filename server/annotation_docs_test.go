package server_test

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/tagger"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// The GraphQL examples of docs/annotation.md run as printed, in the page's
// order, on a corpus named as they name it: the variables are the ids the
// earlier examples return.
func TestAnnotationDocsExamplesRun(t *testing.T) {
	page, err := os.ReadFile("../docs/annotation.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```graphql\n(.*?)```").FindAllStringSubmatch(string(page), -1)
	require.GreaterOrEqual(t, len(blocks), 11)

	st, _, admin := newServer(t, storetest.SQLite)
	ctx := context.Background()
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014", Split: "train"}, files)
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "notes", Set: "crf-out", Kind: "system", Replace: true}, files)
	require.NoError(t, err)
	for _, name := range []string{"ann", "bob"} {
		storetest.Token(t, st, name, auth.Annotator)
		_, err = st.AssignCorpus(ctx, name, "notes", true)
		require.NoError(t, err)
	}
	c, err := st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	gold, err := st.AnnotationSet(ctx, c, "gold")
	require.NoError(t, err)
	// A built-in model of the corpus, for the annotation queue.
	docs, err := st.LoadDocuments(ctx, c, "gold")
	require.NoError(t, err)
	cfg := tagger.DefaultConfig()
	cfg.Training.MaxIterations = 10
	tm, err := tagger.Train(ctx, docs, cfg, nil)
	require.NoError(t, err)
	var artifact bytes.Buffer
	require.NoError(t, tm.Save(&artifact))
	require.NoError(t, st.Client.Model.Create().SetName("crf-1").SetArtifact(artifact.Bytes()).SetHash(tm.Hash()).
		SetTrainingCorpus(c.Name).SetTrainingCorpusID(c.ID).Exec(ctx))

	vars := map[string]any{"gold": gold.ID}
	find := func(v any, key string) any { // the first value of key, depth first
		var walk func(any) any
		walk = func(v any) any {
			switch x := v.(type) {
			case map[string]any:
				if got, ok := x[key]; ok {
					return got
				}
				for _, y := range x {
					if got := walk(y); got != nil {
						return got
					}
				}
			case []any:
				for _, y := range x {
					if got := walk(y); got != nil {
						return got
					}
				}
			}
			return nil
		}
		return walk(v)
	}
	for i, b := range blocks {
		var opts []client.Option
		for k, v := range vars {
			opts = append(opts, client.Var(k, v))
		}
		resp, err := admin.RawPost(b[1], opts...)
		require.NoError(t, err)
		require.Empty(t, resp.Errors, "example %d:\n%s", i+1, b[1])
		data := resp.Data.(map[string]any)
		switch {
		case data["assignDocuments"] != nil:
			sets := data["assignDocuments"].([]any)
			require.Len(t, sets, 2)
			vars["set"] = sets[0].(map[string]any)["id"]
			vars["doc"] = find(sets[0], "documentID")
			assert.Equal(t, "batch-1:ann", sets[0].(map[string]any)["name"])
		case data["addSpan"] != nil:
			vars["span"] = find(data, "id")
		case data["disagreements"] != nil:
			assert.NotEmpty(t, data["disagreements"], "the tagger's spans against the edited set")
		case data["agreement"] != nil:
			assert.Len(t, data["agreement"], 3, "three pairs of three sets")
		case data["annotationQueue"] != nil:
			queue := data["annotationQueue"].([]any)
			require.NotEmpty(t, queue)
			for _, q := range queue {
				assert.NotEqual(t, vars["doc"], find(q, "id"), "the note marked done is not queued")
				assert.Positive(t, find(q, "uncertainty"))
			}
		}
	}
}
