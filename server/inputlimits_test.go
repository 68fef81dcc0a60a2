package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/internal/zipbomb"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/synth"
	"deidcorpus/server"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// stored counts what an import could have left in the store.
func stored(t *testing.T, st *store.Store) [4]int {
	t.Helper()
	ctx := context.Background()
	var n [4]int
	var err error
	n[0], err = st.Client.Corpus.Query().Count(ctx)
	require.NoError(t, err)
	n[1], err = st.Client.Document.Query().Count(ctx)
	require.NoError(t, err)
	n[2], err = st.Client.Job.Query().Count(ctx)
	require.NoError(t, err)
	n[3], err = st.Client.Chunk.Query().Count(ctx)
	require.NoError(t, err)
	return n
}

func importMutation(mutation, corpus string) string {
	return `mutation($files: [Upload!]!) { ` + mutation + `(input: {corpus: "` + corpus + `", tagset: "i2b2-2014"}, files: $files) { __typename } }`
}

// TestZipBombUploadRefused: a 1 MB zip holding a 1 GiB member, uploaded to
// importDocuments or startImport, is refused naming the member, the
// per-note limit and how to raise it, and leaves nothing in the store: no
// corpus, document, job or chunk of a stored upload.
func TestZipBombUploadRefused(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, zipbomb.Write(&b, "100-01.xml", 1<<30))
	st, ts, _ := newServer(t, storetest.SQLite)
	before := stored(t, st)
	for _, mutation := range []string{"importDocuments", "startImport"} {
		for _, chunked := range []bool{false, true} {
			resp := postFiles(t, ts, importMutation(mutation, "bombed"), chunked, upload{"bomb.zip", b.Bytes()})
			require.Len(t, resp.Errors, 1, mutation)
			assert.Equal(t, "bomb.zip:100-01.xml: larger than the limit of 4 MiB per note (raise it with --max-note-size if the note is real)",
				resp.Errors[0].Message, mutation)
			assert.Equal(t, "invalid", resp.Errors[0].Extensions.Code)
		}
	}
	assert.Equal(t, before, stored(t, st), "nothing written")
}

// TestOversizeNoteWritesNothing: one note over the server's per-note limit
// among good ones fails the whole import (imports are all or nothing),
// named; a JSON line over it, which startImport cannot see as it packs the
// upload, fails the job under the limit of the server that took the upload.
func TestOversizeNoteWritesNothing(t *testing.T) {
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 6, Seed: 3}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	big := docs[0]
	big.ID, big.Patient, big.Spans = "900-01", "900", nil
	big.Text = strings.Repeat("Seen in clinic today. ", 4000) // 88 KB
	files, err := formats.WriteI2B2(append(docs, big))
	require.NoError(t, err)
	cfg := server.DefaultConfig
	cfg.MaxNoteBytes = 64 << 10
	st, ts, _ := newServerConfig(t, storetest.SQLite, cfg)
	before := stored(t, st)
	notes := upload{"notes.zip", zipped(t, 8, files...)}
	for _, mutation := range []string{"importDocuments", "startImport"} {
		resp := postFiles(t, ts, importMutation(mutation, "notes"), false, notes)
		require.Len(t, resp.Errors, 1, mutation)
		assert.Equal(t, "notes.zip:900-01.xml: larger than the limit of 65536 bytes per note (raise it with --max-note-size if the note is real)",
			resp.Errors[0].Message, mutation)
	}
	assert.Equal(t, before, stored(t, st), "nothing written")

	line, err := json.Marshal(map[string]string{"id": "900-01", "text": big.Text})
	require.NoError(t, err)
	resp := postFiles(t, ts, `mutation($files: [Upload!]!) { startImport(input: {corpus: "lines", format: "jsonl"}, files: $files) { id } }`,
		false, upload{"notes.jsonl", append(line, '\n')})
	require.Empty(t, resp.Errors)
	var j struct{ ID string }
	require.NoError(t, json.Unmarshal(resp.Data["startImport"], &j))
	states := follow(t, ts.Config.Handler, ts.Token, j.ID)
	got := states[len(states)-1]
	assert.Equal(t, "failed", got.Status)
	assert.Contains(t, got.Error, "notes.jsonl:1: line larger than the limit of 65536 bytes per note")
	_, err = st.CorpusByName(context.Background(), "lines")
	assert.Error(t, err, "no corpus made")
}

// TestUploadsInFlightBounded: with one upload slot, an upload that arrives
// while another is being received waits, then is refused with 429 and the
// code too_many_requests; once the first ends, uploads are taken again.
func TestUploadsInFlightBounded(t *testing.T) {
	cfg := server.DefaultConfig
	cfg.MaxUploads, cfg.UploadWait = 1, 10*time.Millisecond
	_, ts, _ := newServerConfig(t, storetest.SQLite, cfg)
	query := importMutation("importDocuments", "c")
	send := func(body io.Reader, contentType string) (int, gqlResponse) {
		req, err := http.NewRequest("POST", ts.URL+"/graphql", body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", "Bearer "+ts.Token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out gqlResponse
		raw, _ := io.ReadAll(resp.Body)
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
		return resp.StatusCode, out
	}
	// An upload whose files the client has not finished sending holds the slot.
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	first := make(chan int)
	go func() {
		code, _ := send(pr, mw.FormDataContentType())
		first <- code
	}()
	ops, err := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"files": []any{nil}}})
	require.NoError(t, err)
	require.NoError(t, mw.WriteField("operations", string(ops)))
	other := func() (int, gqlResponse) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		w.WriteField("operations", string(ops))
		w.WriteField("map", `{"0": ["variables.files.0"]}`)
		f, _ := w.CreateFormFile("0", "notes.pdf") // a file no format reads: the request ends quickly
		f.Write([]byte("x"))
		w.Close()
		return send(&b, w.FormDataContentType())
	}
	var code int
	var resp gqlResponse
	for range 200 { // until the first has taken the slot
		if code, resp = other(); code == http.StatusTooManyRequests {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, http.StatusTooManyRequests, code)
	require.Len(t, resp.Errors, 1)
	assert.Equal(t, "too_many_requests", resp.Errors[0].Extensions.Code)
	assert.Contains(t, resp.Errors[0].Message, "busy with 1 uploads")

	require.NoError(t, mw.WriteField("map", `{"0": ["variables.files.0"]}`))
	f, err := mw.CreateFormFile("0", "notes.pdf")
	require.NoError(t, err)
	_, err = f.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	require.NoError(t, pw.Close())
	assert.Equal(t, http.StatusOK, <-first)
	code, resp = other()
	assert.Equal(t, http.StatusOK, code, fmt.Sprint(resp.Errors))
	require.Len(t, resp.Errors, 1)
	assert.Contains(t, resp.Errors[0].Message, "format i2b2 reads .xml files only")
}
