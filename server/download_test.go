package server_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// A corpus download is written to the response as it is rendered (no
// length known in advance), and is the archive of the corpus's files; an
// error found before the first byte keeps its status.
func TestCorpusDownloadStreams(t *testing.T) {
	ctx := context.Background()
	st, ts, _ := newServer(t, storetest.SQLite)
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 150, Seed: 2}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, docs)
	require.NoError(t, err)

	for _, format := range []string{"i2b2", "i2b2-2006"} {
		resp, err := ts.get("/download/corpora/c?format=" + format)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.Equal(t, int64(-1), resp.ContentLength, "streamed, not built whole first")
		assert.Equal(t, "application/zip", resp.Header.Get("Content-Type"))
		zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
		require.NoError(t, err)
		want, err := st.Export(ctx, store.ExportOptions{Corpus: "c", Set: "gold", Format: format})
		require.NoError(t, err)
		require.Len(t, zr.File, len(want), format)
		for i, m := range zr.File {
			rc, err := m.Open()
			require.NoError(t, err)
			data, err := io.ReadAll(rc)
			rc.Close()
			require.NoError(t, err)
			assert.Equal(t, want[i].Name, m.Name)
			assert.Equal(t, want[i].Data, data, m.Name)
		}
	}
	c, err := st.CorpusByName(ctx, "c")
	require.NoError(t, err)
	stored, err := st.LoadDocuments(ctx, c, "gold")
	require.NoError(t, err)
	whole, err := formats.WriteI2B22006(stored)
	require.NoError(t, err)
	streamed, err := st.Export(ctx, store.ExportOptions{Corpus: "c", Set: "gold", Format: "i2b2-2006"})
	require.NoError(t, err)
	assert.Equal(t, whole, streamed, "i2b2 2006 written in batches is the file written whole")

	resp, err := ts.get("/download/corpora/c?format=nope")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "unknown format")
}
