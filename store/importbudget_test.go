package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/internal/zipbomb"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// An import's batches are cut by the bytes of their notes, not only by
// their count, even within one patient: 40 notes of 1 MiB are written in
// batches of at most 16 MiB (issue 60: batches of 500 notes of 3 MiB held
// 1.5 GiB each).
func TestImportBatchesByBytes(t *testing.T) {
	st := storetest.Open(t, storetest.SQLite)
	text := strings.Repeat("Seen in clinic today, no complaints. ", 30_000)[:1<<20]
	docs := make([]pipeline.Document, 40)
	for i := range docs {
		docs[i] = pipeline.Document{ID: fmt.Sprintf("100-%02d", i), Patient: "100", RecordOrder: i, Text: text}
	}
	var done []int
	res, err := st.ImportDocuments(context.Background(), store.ImportOptions{Corpus: "big", Progress: func(d, total int) {
		done = append(done, d)
	}}, docs)
	require.NoError(t, err)
	assert.Equal(t, 40, res.Documents)
	require.Greater(t, len(done), 2, "more than two batches: %v", done)
	prev := 0
	for _, d := range done {
		assert.LessOrEqual(t, d-prev, 16, "a batch of at most 16 MiB of notes: %v", done)
		prev = d
	}
	assert.Equal(t, 40, prev)
}

// Files over the import budget are refused before any is read, by the
// import the command line runs (files on the disk) as by the server's, and
// leave no corpus.
func TestImportBudget(t *testing.T) {
	st := storetest.Open(t, storetest.SQLite)
	path := filepath.Join(t.TempDir(), "notes.zip")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, zipbomb.Members(f, []string{"a/100-01.txt", "a/100-02.txt", "a/101-01.txt"}, 2<<20, make([]byte, 1<<20)))
	require.NoError(t, f.Close())
	ctx := context.Background()
	_, err = st.ImportFrom(ctx, store.ImportOptions{Corpus: "notes", Format: "brat", MaxImport: 5 << 20}, formats.Paths(path))
	require.Error(t, err)
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.ErrorIs(t, err, formats.ErrOverBudget)
	assert.Contains(t, err.Error(), "the 3 files given hold 6 MiB once decompressed, more than the 5 MiB an import may take")
	n, err := st.Client.Corpus.Query().Count(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n, "no corpus made")
}
