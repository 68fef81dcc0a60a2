package main

import (
	"os"
	"path/filepath"
	"strings"
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
	assert.Contains(t, errs, "strategies: age, city, ", "the strategies and masks beside the JSON, not in it")
	assert.Contains(t, errs, `"placeholder" ("format": brackets [TYPE], mimic [**TYPE**]`)
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

// A policy that masks names and dates writes a corpus whose check passes
// and whose report counts each strategy's spans; a masking option on the
// wrong strategy is refused naming the file, the type and the field.
func TestResynthMasks(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "orig", "--tagset", "i2b2-2014", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	policy := filepath.Join(dir, "masks.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"types": {
		"PATIENT": {"strategy": "placeholder", "scope": "patient", "format": "mimic"},
		"DOCTOR": {"strategy": "hash", "scope": "corpus"},
		"DATE": {"strategy": "redact", "scope": "patient"}}}`), 0o600))
	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "orig", "--out", "masked", "--policy", policy)
	require.Equal(t, 0, code, errs)
	code, out, errs := cli(t, "resynth", "report", "masked", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^check of masked: passed\n.*\nreplaced by strategy: .*hash \d+, .*placeholder \d+, redact \d+`, out)
	exported := filepath.Join(dir, "masked")
	code, _, errs = cli(t, "export", "--db", db, "--corpus", "masked", "--format", "jsonl", "--out", exported)
	require.Equal(t, 0, code, errs)
	var notes strings.Builder
	files, err := os.ReadDir(exported)
	require.NoError(t, err)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(exported, f.Name()))
		require.NoError(t, err)
		notes.Write(data)
	}
	assert.Contains(t, notes.String(), "[**PATIENT**]")
	assert.Regexp(t, `DOCTOR-[0-9a-f]{10}`, notes.String())

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"types": {"DATE": {"strategy": "redact", "scope": "patient", "format": "mimic"}}}`), 0o600))
	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "orig", "--out", "bad", "--policy", bad)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, bad+`: policy: type DATE: format is an option of placeholder, not of strategy "redact"`)
}
