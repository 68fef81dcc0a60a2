package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent/document"
	"deidcorpus/ent/span"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
)

// TestSplit: split cuts an imported corpus by patient, its spans' copies
// with it; the same seed again changes nothing, another is refused without
// --force and says what it would move; --dry-run writes nothing; parts that
// add up to nothing sensible are refused.
func TestSplit(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(ctx, db)
	require.NoError(t, err)
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 10, Seed: 5}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"}, docs)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	// places reads each document's split, and checks that every span of it
	// carries the same.
	places := func() map[string]string {
		t.Helper()
		st, err := store.Open(ctx, db)
		require.NoError(t, err)
		defer st.Close()
		c, err := st.CorpusByName(ctx, "notes")
		require.NoError(t, err)
		got, err := st.DocumentPlaces(ctx, c)
		require.NoError(t, err)
		split := map[string]string{}
		for _, d := range got {
			split[d.ID] = d.Split
		}
		var rows []struct {
			DocumentID int    `json:"document_id"`
			Split      string `json:"split"`
		}
		require.NoError(t, st.Client.Span.Query().Select(span.FieldDocumentID, span.FieldSplit).Scan(ctx, &rows))
		require.NotEmpty(t, rows)
		docSplit := map[int]string{}
		for _, d := range st.Client.Document.Query().Select(document.FieldID, document.FieldSplit).AllX(ctx) {
			docSplit[d.ID] = string(d.Split)
		}
		for _, r := range rows {
			require.Equal(t, docSplit[r.DocumentID], r.Split, "a span of document %d carries its split", r.DocumentID)
		}
		return split
	}
	run := func(args ...string) (int, string, string) {
		return cli(t, append(args, "--db", db)...)
	}

	code, _, errs := run("split", "--corpus", "notes", "--train", "0.7", "--dev", "0.1", "--test", "0.1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--train, --dev, --test: the shares 0.7, 0.1 and 0.1 add up to 0.9, not 1 (or give numbers of patients that add up to the corpus's 10)")
	code, _, errs = run("split", "--corpus", "notes")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "split needs --train, --dev and --test")
	code, _, errs = run("split", "--corpus", "note", "--train", "1")
	assert.Equal(t, 3, code)
	assert.Contains(t, errs, `no corpus named "note"`)

	code, out, errs := run("split", "--corpus", "notes", "--train", "0.7", "--dev", "0.1", "--test", "0.2", "--dry-run")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `would cut corpus "notes" by patient (seed 1), moving`)
	for _, s := range places() {
		assert.Equal(t, "unassigned", s, "a dry run writes nothing")
	}

	code, out, errs = run("split", "--corpus", "notes", "--train", "0.7", "--dev", "0.1", "--test", "0.2")
	require.Equal(t, 0, code, errs)
	t.Log(out)
	assert.Regexp(t, `SPLIT\s+PATIENTS\s+DOCUMENTS\s+SHARE\ntrain\s+\d+`, out)
	first := places()
	patientOf := map[string]string{}
	for _, d := range docs {
		patientOf[d.ID] = d.Patient
	}
	bySplit := map[string]int{}
	patientSplit := map[string]string{}
	for id, s := range first {
		if was, ok := patientSplit[patientOf[id]]; ok {
			assert.Equal(t, was, s, "all of patient %s's notes in one split", patientOf[id])
		}
		patientSplit[patientOf[id]] = s
		bySplit[s]++
	}
	assert.InDelta(t, 0.7*float64(len(docs)), bySplit["train"], float64(len(docs))/10, "%v", bySplit)
	assert.NotZero(t, bySplit["dev"])
	assert.NotZero(t, bySplit["test"])

	code, out, errs = run("split", "--corpus", "notes", "--train", "0.7", "--dev", "0.1", "--test", "0.2")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `corpus "notes" is cut so already: nothing to change`)

	code, out, errs = run("split", "--corpus", "notes", "--train", "6", "--dev", "2", "--test", "2", "--seed", "9")
	assert.Equal(t, 4, code)
	assert.Contains(t, out, `corpus "notes" is split already:`)
	assert.Contains(t, out, "this cut would move")
	assert.Contains(t, errs, "--force cuts it again")
	assert.Equal(t, first, places(), "refused: nothing moved")

	code, _, errs = run("split", "--corpus", "notes", "--train", "6", "--dev", "2", "--test", "2", "--seed", "9", "--force")
	require.Equal(t, 0, code, errs)
	patients := map[string]map[string]bool{}
	for id, s := range places() {
		if patients[s] == nil {
			patients[s] = map[string]bool{}
		}
		patients[s][patientOf[id]] = true
	}
	assert.Len(t, patients["train"], 6)
	assert.Len(t, patients["dev"], 2)
	assert.Len(t, patients["test"], 2)
}
