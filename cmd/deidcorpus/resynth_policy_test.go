package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resynth --print-policy prints the default policy, which reads back as a
// policy file; a strategy misspelt in it is named with the known ones.
func TestPrintPolicy(t *testing.T) {
	code, out, errs := cli(t, "resynth", "--print-policy")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"PATIENT":        {"strategy": "name",         "scope": "patient"}`)
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "orig", "--tagset", "i2b2-2014", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	policy := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policy, []byte(out), 0o600))
	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "orig", "--out", "surr", "--policy", policy)
	assert.Equal(t, 0, code, errs)
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"types": {"PATIENT": {"strategy": "nme", "scope": "patient"}}}`), 0o600))
	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "orig", "--out", "surr2", "--policy", bad)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, `unknown strategy "nme"; did you mean name? (known: age, city, `)
}
