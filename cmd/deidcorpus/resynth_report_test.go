package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
)

// TestResynthReport: a curator prints the check report of a surrogate corpus,
// audited as a read of checkReport; a researcher may not; an original corpus
// has none.
func TestResynthReport(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "orig", "--tagset", "i2b2-2014", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "orig", "--out", "surr")
	require.Equal(t, 0, code, errs)

	code, out, errs := cli(t, "resynth", "report", "surr", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^check of surr: passed\n3 documents, 13 spans, \d+ replaced, \d+ dates checked; 0 misaligned, 0 leaks`, out)
	code, out, errs = cli(t, "resynth", "report", "--json", "surr", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"NamePatterns"`)

	code, _, errs = cli(t, "resynth", "report", "orig", "--db", db)
	assert.Equal(t, 3, code, errs)
	assert.Contains(t, errs, `corpus "orig" was not made by resynthesis`)

	code, _, errs = cli(t, "users", "add", "rita", "--role", "researcher", "--db", db)
	require.Equal(t, 0, code, errs)
	code, token, errs := cli(t, "tokens", "create", "--user", "rita", "--db", db)
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "resynth", "report", "surr", "--db", db, "--token", strings.TrimSpace(token))
	assert.Equal(t, 5, code, errs)

	code, out, errs = cli(t, "audit", "list", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `local:\S+\s+read\s+Query.checkReport\s+corpus=surr\n`, out)
	assert.Regexp(t, `rita\s+denied\s+Query.checkReport`, out)
}

func TestCheckFailedSaysWhatItMeans(t *testing.T) {
	err := checkFailed("notes-r", map[string]any{"ok": false, "leaks": 2.0, "misaligned": 0.0, "inconsistent": 1.0,
		"intervalErrors": 0.0, "equalToOriginal": 0.0}, 42.0)
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.Equal(t, `the surrogate corpus failed its check (2 leaked originals, 1 inconsistent surrogates): corpus "notes-r" was written, `+
		`but it is quarantined (no release or derived corpus takes it) until a rerun into it passes or a curator resolves the findings; `+
		`the review list (PHI, curators only): deidcorpus resynth report notes-r (also artifact 42, /download/artifacts/42); `+
		`once reviewed: deidcorpus resynth resolve notes-r --reason ...`, err.Error())
}
