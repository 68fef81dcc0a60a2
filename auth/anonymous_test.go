package auth_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/store/storetest"
)

// TestAnonymousRequestIsNobody: inside an HTTP request, no viewer is
// nobody: the rules, the row filters and writes refuse it as unauthorized,
// and records name it as such, never as the process. Outside a request (a
// worker, the CLI's process) and in the store's deliberate System lookups,
// no viewer keeps meaning the process.
func TestAnonymousRequestIsNobody(t *testing.T) {
	st := storetest.Open(t, storetest.SQLite)
	process := context.Background()
	_, err := st.CreateCorpus(process, "orig", "open", "", "original")
	require.NoError(t, err)

	req := auth.MarkRequest(context.Background())
	assert.True(t, auth.Anonymous(req))
	assert.Equal(t, auth.AnonymousName, auth.Name(req))
	unauthorized := func(err error, what string) {
		t.Helper()
		assert.Equal(t, apperr.Unauthorized, apperr.CodeOf(err), "%s: %v", what, err)
	}
	unauthorized(st.Authorize(req, "download.corpus", map[string]any{"name": "orig"}), "a rule")
	unauthorized(st.Authorize(req, "Query.me", nil), "a rule without arguments")
	_, err = st.Client.Corpus.Query().All(req)
	unauthorized(err, "a read")
	_, err = st.Client.Corpus.Create().SetName("new").Save(req)
	unauthorized(err, "a write")
	_, err = st.CorpusByName(req, "orig")
	unauthorized(err, "a store lookup")

	// The store's own lookups inside a request, and a request with a viewer.
	n, err := st.Client.Corpus.Query().Count(auth.System(req))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, auth.SystemName, auth.Name(auth.System(req)))
	viewer := auth.NewContext(req, auth.NewViewer(1, "rita", auth.Researcher))
	assert.False(t, auth.Anonymous(viewer))
	_, err = st.Client.Corpus.Query().All(viewer)
	require.NoError(t, err)

	// The process.
	require.NoError(t, st.Authorize(process, "download.corpus", map[string]any{"name": "orig"}))
	assert.Equal(t, auth.SystemName, auth.Name(process))
}
