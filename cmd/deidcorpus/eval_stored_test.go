package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
)

// eval list and eval show print the stored evaluations, for the people who
// may see their corpus: a researcher sees none of an original corpus's.
func TestStoredEvaluations(t *testing.T) {
	dir := t.TempDir()
	notes := spanishNote(t, dir)
	db := filepath.Join(dir, "c.db")
	code, out, errs := cli(t, "eval", "list", "--db", db)
	assert.Equal(t, 3, code, "no database yet: %s %s", out, errs)
	for _, set := range []string{"gold", "crf"} {
		code, _, errs := cli(t, "import", "--db", db, "--corpus", "med", "--tagset", "meddocan", "--format", "brat", "--set", set, notes)
		require.Equal(t, 0, code, errs)
	}
	code, out, errs = cli(t, "eval", "list", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "no stored evaluations")

	ctx := context.Background()
	st, err := store.Open(ctx, db)
	require.NoError(t, err)
	c, err := st.CorpusByName(ctx, "med")
	require.NoError(t, err)
	f, err := formats.Lookup("brat")
	require.NoError(t, err)
	docs, err := readDocuments(f, notes)
	require.NoError(t, err)
	report, err := evaluate.Evaluate(docs, docs, evaluate.Options{Metric: evaluate.MetricFor(c.Tagset), Summary: true})
	require.NoError(t, err)
	ev, err := st.SaveEvaluation(ctx, store.EvaluationInput{CorpusID: c.ID, Gold: "gold", System: "crf", Report: report})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	id := strconv.Itoa(ev.ID)

	code, out, errs = cli(t, "eval", "list", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `(?m)^`+id+`\s+med\s+crf\s+gold\s+meddocan\s+1\.0000\s+1\.0000\s+1\.0000\s+-\s`, out)
	code, out, errs = cli(t, "eval", "show", id, "--db", db)
	require.Equal(t, 0, code, errs)
	assert.True(t, strings.HasPrefix(out, "evaluation "+id+": crf against gold on corpus med (metric meddocan), 1 document"), out)
	assert.Contains(t, out, "Subtask1_F1 : 1.0")
	assert.Contains(t, out, "Confusion matrix")
	code, out, errs = cli(t, "eval", "show", id, "--json", "--db", db)
	require.Equal(t, 0, code, errs)
	var got storedEvaluation
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, "med", got.Corpus)
	require.NotNil(t, got.Report)
	assert.Equal(t, evaluate.MetricMeddocan, got.Report.Metric)

	code, _, errs = cli(t, "eval", "show", "99", "--db", db)
	assert.Equal(t, 3, code)
	assert.Contains(t, errs, "no evaluation 99")
	code, _, errs = cli(t, "eval", "list", "--corpus", "mde", "--db", db)
	assert.Equal(t, 3, code)
	assert.Contains(t, errs, "did you mean med?")

	// A researcher sees neither the original corpus's evaluations nor that
	// one exists.
	token := researcherToken(t, db)
	code, out, errs = cli(t, "eval", "list", "--db", db, "--token", token)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "no stored evaluations")
	code, _, errs = cli(t, "eval", "show", id, "--db", db, "--token", token)
	assert.Equal(t, 3, code, errs)
	assert.Contains(t, errs, "no evaluation "+id)
}
