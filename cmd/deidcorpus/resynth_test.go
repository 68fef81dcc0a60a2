package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leakingNote is a note whose patient's surname is also in a date no
// pattern reads, whose words resynthesis keeps for review: the check finds
// the surname there and fails.
const leakingNote = `<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[Mr. Garfunkel was seen on Garfunkel Day 2001.]]></TEXT>
<TAGS>
<NAME id="P0" start="4" end="13" text="Garfunkel" TYPE="PATIENT" comment="" />
<DATE id="P1" start="26" end="44" text="Garfunkel Day 2001" TYPE="DATE" comment="" />
</TAGS>
</deIdi2b2>
`

// TestResynthCheckFailed: a resynthesis whose check fails says that its
// corpus is quarantined and exits with an error; jobs lists it as
// check_failed; a curator's resolve lifts the quarantine and needs a reason.
func TestResynthCheckFailed(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	notes := filepath.Join(dir, "notes")
	require.NoError(t, os.Mkdir(notes, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(notes, "900-01.xml"), []byte(leakingNote), 0o644))
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", notes)
	require.Equal(t, 0, code, errs)

	code, out, errs := cli(t, "resynth", "--db", db, "--corpus", "a", "--out", "a-r")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "failed its check")
	assert.Regexp(t, `job \d+: check failed; "a-r" is quarantined \(1 unresolved findings\)`, out)

	code, out, errs = cli(t, "jobs", "list", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `resynthesize\s+check_failed`, out)

	code, _, errs = cli(t, "release", "create", "--db", db, "--corpus", "a-r", "--name", "r", "--version", "1.0.0")
	assert.Equal(t, 4, code, "a conflict")
	assert.Contains(t, errs, "quarantined")

	code, _, _ = cli(t, "resynth", "resolve", "--db", db, "a-r")
	assert.Equal(t, 2, code, "no reason")
	code, out, errs = cli(t, "resynth", "resolve", "--db", db, "a-r", "--reason", "reviewed: the kept value is an eponym")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `resolved 1 check findings of "a-r"`)
	code, _, errs = cli(t, "release", "create", "--db", db, "--corpus", "a-r", "--name", "r", "--version", "1.0.0")
	assert.Equal(t, 0, code, errs)
}
