package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deidentify from the command line: a tiny calibrated model's path from
// notes to a surrogate corpus, its risk printed; each mistake exits with
// its code before anything is written.
func TestDeidentifyCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	cfg := filepath.Join(dir, "tagger.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"training": {"max_iterations": 10}}`), 0o644))
	code, _, errs = cli(t, "train", "--db", db, "--corpus", "a", "--model", "m", "--config", cfg, "--calibration-folds", "2")
	require.Equal(t, 0, code, errs)

	code, out, errs := cli(t, "deidentify", "--db", db, "--corpus", "a", "--model", "m", "--out", "a-deid", "--seed", "2")
	// A tiny model's spans may leave values the check finds: exit 1, the
	// corpus saved and quarantined; the risk is printed either way.
	require.Contains(t, []int{0, 1}, code, errs)
	assert.Regexp(t, `tagged 3 documents at the privacy point into set deidentify-\d+ of a\n`, out)
	assert.Contains(t, out, `resynthesized 3 documents into "a-deid"`)
	assert.Regexp(t, `risk left \(the model's held-out estimate, target recall 0\.995\): [\d.]+ values leaked per 1,000`, out)

	code, _, errs = cli(t, "deidentify", "--db", db, "--corpus", "a", "--model", "m", "--out", "a-deid")
	assert.Equal(t, 4, code, errs)
	assert.Contains(t, errs, `corpus "a-deid" exists`)
	code, _, errs = cli(t, "deidentify", "--db", db, "--corpus", "a", "--model", "m", "--out", "b", "--target-recall", "1.5")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "target recall 1.5")
	policy := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"maxNoteLeakRate": -1}`), 0o644))
	code, _, errs = cli(t, "deidentify", "--db", db, "--corpus", "a", "--model", "m", "--out", "b", "--policy", policy)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, policy+": policy: maxNoteLeakRate -1")
	code, out, errs = cli(t, "corpora", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.NotRegexp(t, `(?m)^b\s`, out, "a refused deidentify writes no corpus")
}
