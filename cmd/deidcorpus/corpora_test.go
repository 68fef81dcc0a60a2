package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCorpora: the list names each corpus with how it was made, its check
// and its counts; a researcher sees only surrogate corpora.
func TestCorpora(t *testing.T) {
	db := resynthesizedDB(t)
	code, out, errs := cli(t, "corpora", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^CORPUS\s+TAG SET\s+KIND\s+MADE BY\s+CHECK\s+DOCUMENTS\s+SETS\s+CREATED\n`+
		`orig\s+i2b2-2014\s+original\s+import\s+none\s+3\s+gold\s+\d{4}-\d\d-\d\d \d\d:\d\d\n`+
		`surr\s+i2b2-2014\s+surrogate\s+resynthesis\s+passed\s+3\s+gold\s+`, out)

	code, out, errs = cli(t, "corpora", "--db", db, "--json")
	require.Equal(t, 0, code, errs)
	var list []struct {
		Name, Source string
		Documents    int
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	require.Len(t, list, 2)
	assert.Equal(t, "surr", list[1].Name)
	assert.Equal(t, 3, list[1].Documents)

	code, out, errs = cli(t, "corpora", "--db", db, "--token", researcherToken(t, db))
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "\nsurr ")
	assert.NotContains(t, out, "orig")

	code, _, errs = cli(t, "corpora", "extra", "--db", db)
	assert.Equal(t, 2, code, errs)
}

// models alone lists the models, as corpora alone lists the corpora.
func TestModelsAloneLists(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "orig", "--tagset", "i2b2-2014", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	code, alone, errs := cli(t, "models", "--db", db)
	require.Equal(t, 0, code, errs)
	_, list, _ := cli(t, "models", "list", "--db", db)
	assert.Equal(t, list, alone)
}
