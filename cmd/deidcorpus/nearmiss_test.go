package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A misspelt flag, tag set or corpus name is answered with the name it was
// probably meant to be; a name near nothing gets no guess.
func TestDidYouMean(t *testing.T) {
	dir := t.TempDir()
	notes := spanishNote(t, dir)
	db := filepath.Join(dir, "c.db")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"import", "--corpus", "c", "--tag-set", "meddocan", notes}, "flag provided but not defined: -tag-set; did you mean --tagset?"},
		{[]string{"import", "--corpus", "c", "--tagset", "medocan", notes}, `tagset: unknown tag set "medocan"; did you mean meddocan?`},
		{[]string{"import", "--corpus", "c", "--tagset", "spanish", notes}, `unknown tag set "spanish" (known: i2b2-2014, meddocan, open)`},
		{[]string{"eval", "--gld", notes}, "flag provided but not defined: -gld; did you mean --gold?"},
	} {
		code, _, errs := cli(t, append(c.args, "--db", db)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errs)
		assert.Contains(t, errs, c.says, c.args)
	}
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "meddocan-dev", "--format", "brat", "--tagset", "meddocan", notes)
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "stats", "--db", db, "--corpus", "medocan-dev")
	assert.Equal(t, 3, code, errs)
	assert.Contains(t, errs, `no corpus named "medocan-dev"; did you mean meddocan-dev?`)
	code, _, errs = cli(t, "stats", "--db", db, "--corpus", "other")
	assert.Equal(t, 3, code, errs)
	assert.Contains(t, errs, `no corpus named "other"`)
	assert.NotContains(t, errs, "did you mean")
}

// Files of another tag set make one line of error, not one a file: the
// types found, how many files and the first of them.
func TestWrongTagSetGrouped(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	require.NoError(t, os.Mkdir(notes, 0o755))
	for i := range 25 {
		name := filepath.Join(notes, fmt.Sprintf("n%02d", i))
		require.NoError(t, os.WriteFile(name+".txt", []byte("Ingresa en Hospital Sur, calle Mayor 3."), 0o644))
		require.NoError(t, os.WriteFile(name+".ann", []byte("T1\tHOSPITAL 11 23\tHospital Sur\nT2\tCALLE 25 38\tcalle Mayor 3\n"), 0o644))
	}
	code, _, errs := cli(t, "import", "--db", filepath.Join(dir, "c.db"), "--corpus", "c", "--format", "brat", "--tagset", "i2b2-2014", notes)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "types of tag set meddocan, not i2b2-2014: import with tag set meddocan")
	assert.Contains(t, errs, ": CALLE (20 files: "+filepath.Join(notes, "n00.ann")+":2, ")
	assert.Equal(t, 1, strings.Count(errs, "CALLE"), errs)
	assert.LessOrEqual(t, strings.Count(strings.TrimSpace(errs), "\n"), 2, errs)
}
