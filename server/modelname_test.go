package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestModelNamesTellNothing: a researcher who starts a training gets the same
// answer for a model name whether or not a model it may not see has that
// name: it names its models under its own account, where only its own can
// be, and nobody names one under another's.
func TestModelNamesTellNothing(t *testing.T) {
	st, ts, admin := newServer(t, storetest.SQLite)
	ctx := context.Background()
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	for _, c := range []struct{ name, kind string }{{"orig", "original"}, {"surr", "surrogate"}} {
		_, err = st.Import(ctx, store.ImportOptions{Corpus: c.name, CorpusKind: c.kind, TagSet: "i2b2-2014", Split: "train"}, files)
		require.NoError(t, err)
	}
	orig, err := st.CorpusByName(ctx, "orig")
	require.NoError(t, err)
	// Models trained on the original corpus, which the researcher may not see.
	for _, name := range []string{"hidden", "rita:hidden", "curator:hidden"} {
		_, err = st.Client.Model.Create().SetName(name).SetTrainingCorpus("orig").SetTrainingCorpusID(orig.ID).Save(ctx)
		require.NoError(t, err)
	}
	rita := client.New(ts.Config.Handler, client.Path("/graphql"),
		client.AddHeader("Authorization", "Bearer "+storetest.Token(t, st, "rita", auth.Researcher)))
	train := func(c *client.Client, model string) string {
		t.Helper()
		var out struct{ StartTraining struct{ ID string } }
		err := c.Post(`mutation($m: String!) { startTraining(input: {corpus: "surr", model: $m}) { id } }`, &out, client.Var("m", model))
		if err != nil {
			return strings.ReplaceAll(err.Error(), model, "NAME")
		}
		return "started"
	}
	// Outside its own account's names: refused for the name, alike.
	for _, pair := range [][2]string{{"hidden", "never-made"}, {"curator:hidden", "curator:never-made"}} {
		taken, free := train(rita, pair[0]), train(rita, pair[1])
		assert.Equal(t, free, taken, "%s and %s", pair[0], pair[1])
		assert.Contains(t, taken, `"code":"invalid"`)
	}
	assert.Contains(t, train(rita, "hidden"), "rita:")
	// Under its own: started. (A model of its own that it no longer sees is
	// its own to know of.)
	assert.Equal(t, "started", train(rita, "rita:crf"))
	assert.Contains(t, train(rita, "rita:hidden"), "exists", "its own name, taken")

	// Those who see every model name theirs as they like, but not under
	// another account.
	assert.Contains(t, train(admin, "hidden"), "exists")
	assert.Equal(t, "started", train(admin, "crf-admin"))
	assert.Contains(t, train(admin, "rita:other"), "kept for account rita")
	err = admin.Post(`mutation { registerExternalModel(name: "rita:ext", endpoint: "http://127.0.0.1:9/") { id } }`, &map[string]any{})
	assert.ErrorContains(t, err, "kept for account rita")
}
