package server_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestMissingRowsAreNotFound asks the API and the downloads for rows that do
// not exist (a corpus, a release, an artifact whose id is of the artifacts'
// range): every answer has the code not_found, never an internal error.
func TestMissingRowsAreNotFound(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			st, ts, c := newServer(t, b)
			a, err := st.SaveArtifact(context.Background(), store.ArtifactSpec{Name: "x.txt", CreatedBy: "admin"}, []byte("x"))
			require.NoError(t, err)
			missingArtifact := strconv.Itoa(a.ID + 1000)

			for _, q := range []string{
				`{ corpusStatistics(corpus: "` + missingArtifact + `") { documents } }`,
				`{ node(id: "` + missingArtifact + `") { id } }`,
				`mutation { cancelJob(id: "` + missingArtifact + `") { id } }`,
			} {
				err := c.Post(q, &map[string]any{})
				require.Error(t, err, q)
				assert.Contains(t, err.Error(), `"code":"not_found"`, q)
			}
			for _, path := range []string{
				"/download/corpora/missing",
				"/download/releases/missing@1.0.0",
				"/download/artifacts/" + missingArtifact,
			} {
				resp, err := ts.get(path)
				require.NoError(t, err)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
				assert.Regexp(t, `^not_found: `, string(body), path)
			}
		})
	}
}

// A name where the schema wants an ID is told what an ID is, not strconv's
// parse error.
func TestANameIsNotAnID(t *testing.T) {
	_, _, c := newServer(t, storetest.SQLite)
	err := c.Post(`{ corpusStatistics(corpus: "demo") { documents } }`, &map[string]any{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `\"demo\" is not an ID`)
	assert.NotContains(t, err.Error(), "strconv")
	err = c.Post(`{ corpusStatistics(name: "demo") { documents } }`, &map[string]any{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no corpus named \"demo\"`, "a name goes in name")
	err = c.Post(`{ corpusStatistics { documents } }`, &map[string]any{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "one of the two")
}

// A request body that is not JSON gets the reason and the code invalid,
// never the body back: it may hold a note's text.
func TestUndecodableBodyIsNotEchoed(t *testing.T) {
	_, ts, _ := newServer(t, storetest.SQLite)
	req, err := http.NewRequest("POST", ts.URL+"/graphql", strings.NewReader(`{"query": "mutation { importDocuments(text: \"Juan Pérez, NHC 123`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+ts.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "json request body could not be decoded")
	assert.Contains(t, string(body), `"code":"invalid"`)
	assert.NotContains(t, string(body), "Pérez")
}
