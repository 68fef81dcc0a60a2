package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSurrogateIDsArePseudonyms: a surrogate corpus names its notes by
// pseudonyms of its source's ids; a curator reads the pairs and exports the
// surrogate under its source's ids, a researcher may do neither.
func TestSurrogateIDsArePseudonyms(t *testing.T) {
	db := resynthesizedDB(t)
	source, err := filepath.Glob("../../testdata/i2b2/*.xml")
	require.NoError(t, err)
	var sourceIDs []string
	for _, f := range source {
		sourceIDs = append(sourceIDs, strings.TrimSuffix(filepath.Base(f), ".xml"))
	}
	require.NotEmpty(t, sourceIDs)

	out := t.TempDir()
	code, _, errs := cli(t, "export", "--db", db, "--corpus", "surr", "--out", filepath.Join(out, "plain"))
	require.Equal(t, 0, code, errs)
	names := fileNames(t, filepath.Join(out, "plain"))
	for _, id := range sourceIDs {
		assert.NotContains(t, names, id+".xml", "the surrogate corpus names a note by its source's id")
	}

	code, stdout, errs := cli(t, "resynth", "ids", "surr", "--json", "--db", db)
	require.Equal(t, 0, code, errs)
	var pairs []struct{ Kind, Source, Surrogate string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &pairs), stdout)
	docs := map[string]string{}
	for _, p := range pairs {
		assert.Regexp(t, `^[1-9]\d{17}$`, p.Surrogate)
		if p.Kind == "document" {
			docs[p.Source] = p.Surrogate
			assert.Contains(t, names, p.Surrogate+".xml", "a curator's export keeps the corpus's ids")
		}
	}
	assert.Len(t, docs, len(sourceIDs))
	code, stdout, errs = cli(t, "resynth", "ids", "surr", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, regexp.MustCompile(`KIND\s+SOURCE ID\s+SURROGATE ID\ndocument\s+`+regexp.QuoteMeta(sourceIDs[0])+`\s+`+docs[sourceIDs[0]]), stdout)

	code, _, errs = cli(t, "export", "--db", db, "--corpus", "surr", "--source-ids", "--out", filepath.Join(out, "as-source"))
	require.Equal(t, 0, code, errs)
	back := fileNames(t, filepath.Join(out, "as-source"))
	for _, id := range sourceIDs {
		assert.Contains(t, back, id+".xml")
	}

	// The same ids on a second run: the pseudonyms are stable.
	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "orig", "--out", "surr2", "--seed", "9")
	require.Equal(t, 0, code, errs)
	code, stdout, errs = cli(t, "resynth", "ids", "surr2", "--json", "--db", db)
	require.Equal(t, 0, code, errs)
	var again []struct{ Kind, Source, Surrogate string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &again))
	assert.Equal(t, pairs, again)

	code, _, errs = cli(t, "resynth", "ids", "orig", "--db", db)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, `corpus "orig" was not made by resynthesis`)

	token := researcherToken(t, db)
	code, stdout, errs = cli(t, "resynth", "ids", "surr", "--db", db, "--token", token)
	assert.Equal(t, 5, code, errs)
	assert.Empty(t, stdout)
	code, _, errs = cli(t, "export", "--db", db, "--corpus", "surr", "--source-ids", "--out", filepath.Join(out, "rita"), "--token", token)
	assert.Equal(t, 5, code, errs)
	code, _, errs = cli(t, "export", "--db", db, "--corpus", "surr", "--out", filepath.Join(out, "rita"), "--token", token)
	assert.Equal(t, 0, code, errs, "a researcher exports the surrogate corpus as it is")
}

// A researcher's export of a shared surrogate corpus re-imports with its
// patients, in every format: 3 notes of 2 patients, not of 3.
func TestResearchersExportKeepsThePatients(t *testing.T) {
	db := resynthesizedDB(t)
	token := researcherToken(t, db)
	out := t.TempDir()
	for _, format := range []string{"brat", "i2b2", "conll", "i2b2-2006", "jsonl", "csv", "omop"} {
		dir := filepath.Join(out, format)
		code, _, errs := cli(t, "export", "--db", db, "--corpus", "surr", "--format", format, "--out", dir, "--token", token)
		require.Equal(t, 0, code, errs)
		code, _, errs = cli(t, "import", "--db", db, "--corpus", "back-"+format, "--format", format, dir)
		require.Equal(t, 0, code, errs)
		code, stdout, errs := cli(t, "stats", "--db", db, "--corpus", "back-"+format)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, stdout, "3 documents, 2 patients", format)
	}
}

func fileNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}
