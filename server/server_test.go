package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/formats"
	"deidcorpus/server"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// testServer is a running server with an admin's API token.
type testServer struct {
	*httptest.Server
	Token string
}

// get requests path with the admin's token.
func (s *testServer) get(path string) (*http.Response, error) { return s.request("GET", path) }

// request requests path with method and the admin's token.
func (s *testServer) request(method, path string) (*http.Response, error) {
	req, err := http.NewRequest(method, s.URL+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	return http.DefaultClient.Do(req)
}

// newServer serves a new store; the client and get act as an admin.
func newServer(t *testing.T, b storetest.Backend) (*store.Store, *testServer, *client.Client) {
	t.Helper()
	return newServerConfig(t, b, server.DefaultConfig)
}

// newServerConfig is newServer with cfg.
func newServerConfig(t *testing.T, b storetest.Backend, cfg server.Config) (*store.Store, *testServer, *client.Client) {
	t.Helper()
	var opts []store.Option
	if cfg.Clock != nil { // the store's tokens expire on the server's clock
		opts = append(opts, store.WithClock(cfg.Clock))
	}
	st := storetest.Open(t, b, opts...)
	jm := newJobs(t, st)
	h := server.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), cfg, st, jm)
	ts := &testServer{Server: httptest.NewServer(h), Token: storetest.Token(t, st, "admin", auth.Admin)}
	t.Cleanup(ts.Close)
	return st, ts, client.New(h, client.Path("/graphql"), client.AddHeader("Authorization", "Bearer "+ts.Token))
}

func newJobs(t *testing.T, st *store.Store) *jobs.Manager {
	t.Helper()
	jm, err := jobs.New(context.Background(), st, jobs.Handlers(), jobs.Options{Work: true, HeartbeatEvery: 100 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, jm.Start(context.Background()))
	t.Cleanup(func() { jm.Stop(context.Background()) })
	return jm
}

func TestGraphQLCorpusAPI(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			st, ts, c := newServer(t, b)
			ctx := context.Background()
			files, err := formats.ReadPaths("../testdata/i2b2")
			require.NoError(t, err)

			// Import through the multipart upload mutation.
			var imp struct {
				ImportDocuments struct {
					Corpus        struct{ ID, Name string }
					CreatedCorpus bool
					Documents     int
					Spans         int
					Format        string
					FromRelease   *string
				}
			}
			uploads := make([]*os.File, len(files))
			for i, f := range files {
				p := t.TempDir() + "/" + f.Name
				require.NoError(t, os.WriteFile(p, f.Data, 0o644))
				uploads[i], err = os.Open(p)
				require.NoError(t, err)
				defer uploads[i].Close()
			}
			c.MustPost(`mutation($files: [Upload!]!) {
				importDocuments(input: {corpus: "demo", tagset: "i2b2-2014", split: train}, files: $files) {
					corpus { id name } createdCorpus documents spans format fromRelease
				}}`, &imp, client.Var("files", uploads), client.WithFiles())
			assert.True(t, imp.ImportDocuments.CreatedCorpus)
			assert.Equal(t, "i2b2", imp.ImportDocuments.Format, "the default, no release.json being given")
			assert.Nil(t, imp.ImportDocuments.FromRelease)
			assert.Equal(t, 3, imp.ImportDocuments.Documents)
			// An uploaded file the format does not read is named, not skipped.
			wrong := t.TempDir() + "/notes.jsonl"
			require.NoError(t, os.WriteFile(wrong, []byte(`{"id":"n1","text":"Seen today."}`+"\n"), 0o644))
			wf, err := os.Open(wrong)
			require.NoError(t, err)
			defer wf.Close()
			err = c.Post(`mutation($files: [Upload!]!) { importDocuments(input: {corpus: "other", format: "i2b2"}, files: $files) { documents } }`,
				&map[string]any{}, client.Var("files", []*os.File{wf}), client.WithFiles())
			require.Error(t, err)
			assert.Contains(t, err.Error(), "notes.jsonl: format i2b2 reads .xml files only (try --format jsonl)")
			assert.Equal(t, 13, imp.ImportDocuments.Spans)
			corpusID := imp.ImportDocuments.Corpus.ID

			// Statistics are grouped and add up.
			var stats struct {
				CorpusStatistics struct {
					Documents, Patients, Spans, UniqueSpans, DocumentsWithPHI int
					PhiPerDocument                                            float64
					Groups                                                    []struct {
						Category, Type string
						Total, Unique  int
					}
				}
			}
			c.MustPost(`query($id: ID!) { corpusStatistics(corpus: $id) {
				documents patients spans uniqueSpans documentsWithPHI phiPerDocument
				groups { category type total unique } } }`, &stats, client.Var("id", corpusID))
			cs := stats.CorpusStatistics
			assert.Equal(t, 3, cs.Documents)
			assert.Equal(t, 2, cs.Patients)
			assert.Equal(t, 13, cs.Spans)
			assert.InDelta(t, 13.0/3, cs.PhiPerDocument, 1e-9)
			sum := 0
			for _, g := range cs.Groups {
				sum += g.Total
				if g.Type == "DOCTOR" {
					assert.Equal(t, 2, g.Total)
					assert.Equal(t, 2, g.Unique) // "Ines Okafor" and "Okafor"
					assert.Equal(t, "NAME", g.Category)
				}
			}
			assert.Equal(t, 13, sum)

			// Notes per note type (Boag Table 1) and the name patterns
			// (Yeniterzi Table 7), whose counts add up to the name spans.
			var more struct {
				CorpusStatistics struct {
					NoteTypes []struct {
						Name                        string
						Documents, DocumentsWithPHI int
						Spans, Tokens               int
						ShareWithPHI                float64
					}
					NamePatterns []struct {
						Pattern       string
						Tokens, Count int
					}
				}
			}
			c.MustPost(`query($id: ID!) { corpusStatistics(corpus: $id) {
				noteTypes { name documents documentsWithPHI spans tokens shareWithPHI } namePatterns { pattern tokens count } } }`,
				&more, client.Var("id", corpusID))
			notes, spans, names := 0, 0, 0
			for _, n := range more.CorpusStatistics.NoteTypes {
				notes += n.Documents
				spans += n.Spans
				assert.InDelta(t, float64(n.DocumentsWithPHI)/float64(n.Documents), n.ShareWithPHI, 1e-12)
			}
			assert.Equal(t, 3, notes)
			assert.Equal(t, 13, spans)
			for _, g := range cs.Groups {
				if g.Category == "NAME" {
					names += g.Total
				}
			}
			pats := 0
			for _, p := range more.CorpusStatistics.NamePatterns {
				pats += p.Count
			}
			assert.Positive(t, names)
			assert.Equal(t, names, pats, "name patterns add up to the name spans")

			// A corpus compared with itself: no difference, nothing out of vocabulary.
			var cmp struct {
				CompareCorpora struct {
					By        string
					ChiSquare struct {
						Statistic, P float64
						Dof, N       int
					}
					Oov    struct{ TokenRate, PhiRate float64 }
					Groups []struct {
						Group string
						A, B  struct{ Total int }
					}
					NamePatterns []struct{ A, B int }
				}
			}
			c.MustPost(`{ compareCorpora(a: "demo", b: "demo", by: CATEGORY) { by chiSquare { statistic p dof n }
				oov { tokenRate phiRate } groups { group a { total } b { total } } namePatterns { a b } } }`, &cmp)
			cc := cmp.CompareCorpora
			assert.Equal(t, "category", cc.By)
			assert.Zero(t, cc.ChiSquare.Statistic)
			assert.Equal(t, 1.0, cc.ChiSquare.P)
			assert.Equal(t, 26, cc.ChiSquare.N)
			assert.Equal(t, len(cc.Groups)-1, cc.ChiSquare.Dof)
			assert.Zero(t, cc.Oov.TokenRate)
			assert.Zero(t, cc.Oov.PhiRate)
			for _, p := range cc.NamePatterns {
				assert.Equal(t, p.A, p.B)
			}
			err = c.Post(`{ compareCorpora(a: "demo", b: "nope") { by } }`, &cmp)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `b: no corpus named \"nope\"`)
			err = c.Post(`{ compareCorpora(a: "demo", b: "demo", by: SPLIT) { by } }`, &cmp)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "by: a comparison groups spans by category or type")

			// Documents are a Relay connection with filters; spans come in text order
			// with code-point offsets.
			var docs struct {
				Documents struct {
					TotalCount int
					Edges      []struct {
						Node struct {
							ID, ExternalID, Text string
							Annotations          []struct {
								Start, End int
								Text, Type string
							}
						}
					}
				}
			}
			c.MustPost(`{ documents(where: {externalID: "102-01"}) { totalCount edges { node {
				id externalID text annotations(set: "gold") { start end text type } } } } }`, &docs)
			require.Equal(t, 1, docs.Documents.TotalCount)
			node := docs.Documents.Edges[0].Node
			runes := []rune(node.Text)
			require.Len(t, node.Annotations, 4)
			for _, a := range node.Annotations {
				assert.Equal(t, a.Text, string(runes[a.Start:a.End]))
			}
			assert.Equal(t, "Núñez Peña", node.Annotations[1].Text)

			// The Node interface resolves the same document by its global id.
			var n struct{ Node struct{ ExternalID string } }
			c.MustPost(`query($id: ID!) { node(id: $id) { ... on Document { externalID } } }`, &n, client.Var("id", node.ID))
			assert.Equal(t, "102-01", n.Node.ExternalID)

			// Errors carry codes.
			var ignored map[string]any
			err = c.Post(`mutation { createCorpus(name: "demo") { id } }`, &ignored)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "conflict")
			err = c.Post(`{ documents(first: 1) { edges { node { annotations(set: "nope") { id } } } } }`, &ignored)
			assert.Contains(t, err.Error(), "not_found")
			assert.Contains(t, err.Error(), `has no annotation set \"nope\"`)
			err = c.Post(`mutation { exportCorpus(corpus: "demo", set: "nope") { url } }`, &ignored)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `corpus \"demo\" has no annotation set \"nope\"`, "worded as the download words it")

			// Export returns a link; the link serves a zip that re-imports to the same corpus.
			var exp struct {
				ExportCorpus struct{ URL, Filename string }
			}
			c.MustPost(`mutation { exportCorpus(corpus: "demo") { url filename } }`, &exp)
			resp, err := ts.get(exp.ExportCorpus.URL)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, "application/zip", resp.Header.Get("Content-Type"))
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			members, err := formats.Unzip("export.zip", body)
			require.NoError(t, err)
			_, err = st.Import(ctx, store.ImportOptions{Corpus: "copy", TagSet: "i2b2-2014", Split: "train"}, members)
			require.NoError(t, err)
			orig, _ := st.CorpusByName(ctx, "demo")
			copied, _ := st.CorpusByName(ctx, "copy")
			a, _ := st.LoadDocuments(ctx, orig, "gold")
			bb, _ := st.LoadDocuments(ctx, copied, "gold")
			assert.Equal(t, a, bb)

			// A split's link serves that split's documents only.
			c.MustPost(`mutation { exportCorpus(corpus: "demo", split: train) { url filename } }`, &exp)
			assert.Equal(t, "demo-gold-i2b2-train.zip", exp.ExportCorpus.Filename)
			assert.Contains(t, exp.ExportCorpus.URL, "split=train")
			resp2, err := ts.get(exp.ExportCorpus.URL)
			require.NoError(t, err)
			defer resp2.Body.Close()
			require.Equal(t, http.StatusOK, resp2.StatusCode)
			body, err = io.ReadAll(resp2.Body)
			require.NoError(t, err)
			members, err = formats.Unzip("export.zip", body)
			require.NoError(t, err)
			train, err := st.CountDocuments(ctx, orig, "train")
			require.NoError(t, err)
			assert.Len(t, members, train)
			c.MustPost(`mutation { exportCorpus(corpus: "demo", split: dev) { url filename } }`, &exp)
			resp3, err := ts.get(exp.ExportCorpus.URL)
			require.NoError(t, err)
			msg, _ := io.ReadAll(resp3.Body)
			resp3.Body.Close()
			assert.Equal(t, http.StatusBadRequest, resp3.StatusCode, "every note of this corpus is in train")
			assert.Contains(t, string(msg), `no documents in split "dev"`)
		})
	}
}

func TestHTTPSurface(t *testing.T) {
	_, ts, _ := newServer(t, storetest.SQLite)
	for path, want := range map[string]string{
		"/healthz":                  "ok",
		"/graphiql/":                "graphiql.min.js",
		"/graphiql/graphiql.min.js": "",
	} {
		resp, err := ts.get(path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Contains(t, string(body), want, path)
	}
	resp, err := ts.get("/download/corpora/missing")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	// The API and downloads need a valid token; the IDE and health checks
	// do not.
	for _, path := range []string{"/graphql?query={corpora{totalCount}}", "/download/corpora/missing"} {
		// A valid token without the Bearer scheme, or with another, is refused too.
		for _, header := range []string{"", "Bearer dct_notatoken", "Bearer " + ts.Token + "x", ts.Token, "Basic " + ts.Token, "Bearer"} {
			req, _ := http.NewRequest("GET", ts.URL+path, nil)
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s with %q", path, header)
			assert.Contains(t, string(body), "unauthorized")
			assert.NotContains(t, string(body), ts.Token, "a refusal does not echo the token")
		}
	}

	// The scheme's name is case-insensitive (RFC 7235).
	req, _ := http.NewRequest("GET", ts.URL+"/graphql?query={corpora{totalCount}}", nil)
	req.Header.Set("Authorization", "bearer "+ts.Token)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// An oversized upload is refused with a clear error, not a crash.
	small := server.DefaultConfig
	small.MaxUploadBytes = 1 << 10
	st := storetest.Open(t, storetest.SQLite)
	token := storetest.Token(t, st, "admin", auth.Admin)
	h := server.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), small, st, newJobs(t, st))
	var body bytes.Buffer
	body.WriteString("--x\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n{}\r\n--x\r\nContent-Disposition: form-data; name=\"0\"; filename=\"a.xml\"\r\n\r\n")
	body.Write(bytes.Repeat([]byte("a"), 4<<10))
	body.WriteString("\r\n--x--\r\n")
	req = httptest.NewRequest("POST", "/graphql", &body)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Length", strconv.Itoa(body.Len()))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Contains(t, rec.Body.String(), "too large")
}
