package server_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/internal/zipbomb"
	"deidcorpus/server"
	"deidcorpus/store/storetest"
)

// hostileNotes writes, in a temporary directory, issue 60's upload: a zip of
// a few megabytes holding notes brat notes of size bytes each.
func hostileNotes(t *testing.T, notes int, size int64) []byte {
	t.Helper()
	names := make([]string, notes)
	for i := range names {
		names[i] = fmt.Sprintf("notes/%04d-01.txt", i)
	}
	path := filepath.Join(t.TempDir(), "notes.zip")
	f, err := os.Create(path)
	require.NoError(t, err)
	unit := bytes.Repeat([]byte("Seen in clinic today, no complaints. "), 30_000)[:1<<20]
	require.NoError(t, zipbomb.Members(f, names, size, unit))
	require.NoError(t, f.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// TestImportBudgetRefusesHostileZip: issue 60's 3,000 brat notes of 3 MiB
// each (9 GiB of text in a zip of about 9 MB; the per-note limit lets every
// note through) uploaded to importDocuments or startImport is refused by the
// import budget before any note is read, naming the budget and how to raise
// it, and leaves nothing in the store: no corpus (unfinished or not),
// document, job or chunk of a stored upload. Under a lower budget the same
// holds of a smaller upload, which a budget above it imports.
func TestImportBudgetRefusesHostileZip(t *testing.T) {
	hostile := hostileNotes(t, 3000, 3<<20)
	t.Logf("hostile zip: %d bytes", len(hostile))
	st, ts, _ := newServer(t, storetest.SQLite)
	before := stored(t, st)
	for _, mutation := range []string{"importDocuments", "startImport"} {
		resp := postFiles(t, ts, brat(mutation, "hostile"), false, upload{"notes.zip", hostile})
		require.Len(t, resp.Errors, 1, mutation)
		assert.Contains(t, resp.Errors[0].Message, "the 3000 files given hold 9", mutation)
		assert.Contains(t, resp.Errors[0].Message, "more than the 2048 MiB an import may take: import them in parts, or raise the budget with --max-import-size")
		assert.Equal(t, "invalid", resp.Errors[0].Extensions.Code)
	}
	assert.Equal(t, before, stored(t, st), "nothing written")

	small := hostileNotes(t, 6, 1<<20)
	cfg := server.DefaultConfig
	cfg.MaxImportBytes = 5 << 20
	st, ts, _ = newServerConfig(t, storetest.SQLite, cfg)
	before = stored(t, st)
	resp := postFiles(t, ts, brat("startImport", "small"), false, upload{"notes.zip", small})
	require.Len(t, resp.Errors, 1)
	assert.Contains(t, resp.Errors[0].Message, "the 6 files given hold 6 MiB once decompressed, more than the 5 MiB an import may take")
	assert.Equal(t, before, stored(t, st), "nothing written")
	cfg.MaxImportBytes = 6 << 20
	st, ts, _ = newServerConfig(t, storetest.SQLite, cfg)
	resp = postFiles(t, ts, brat("importDocuments", "small"), false, upload{"notes.zip", small})
	require.Empty(t, resp.Errors)
	assert.Equal(t, 6, stored(t, st)[1], "every note imported")
}

// brat is an import mutation of brat files into a new corpus.
func brat(mutation, corpus string) string {
	return `mutation($files: [Upload!]!) { ` + mutation + `(input: {corpus: "` + corpus + `", format: "brat"}, files: $files) { __typename } }`
}
