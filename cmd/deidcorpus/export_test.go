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

// An unknown --format fails the same way in every command that takes one:
// invalid, naming the flag and the formats, saying which was meant when it
// is a near miss, and before anything is written.
func TestUnknownFormatNamesTheFlag(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "release", "create", "--db", db, "--corpus", "a", "--name", "r", "--version", "1.0.0")
	require.Equal(t, 0, code, errs)
	known := "(known: brat, conll, csv, i2b2, i2b2-2006, jsonl, mimic, omop, physionet)"
	for _, c := range []struct {
		args []string
		out  string // what must not be made
	}{
		{[]string{"export", "--db", db, "--corpus", "a", "--out", filepath.Join(dir, "x")}, filepath.Join(dir, "x")},
		{[]string{"export", "--db", db, "--corpus", "a", "--out", filepath.Join(dir, "x.zip")}, filepath.Join(dir, "x.zip")},
		{[]string{"release", "export", "--db", db, "--release", "r@1.0.0", "--out", filepath.Join(dir, "r.zip")}, filepath.Join(dir, "r.zip")},
		{[]string{"eval", "--gold", "../../testdata/i2b2", "--system", "../../testdata/i2b2"}, ""},
		{[]string{"tag", "--model-file", filepath.Join(dir, "none.model"), "--in", "../../testdata/i2b2", "--out", filepath.Join(dir, "t")}, filepath.Join(dir, "t")},
	} {
		for format, want := range map[string]string{
			"JSONL":     `--format: unknown format "JSONL"; did you mean jsonl? ` + known,
			"i2b2_2006": `--format: unknown format "i2b2_2006"; did you mean i2b2-2006? ` + known,
			"xml":       `--format: unknown format "xml" ` + known,
		} {
			if c.args[0] == "release" { // only the formats a release is written in
				want = strings.Replace(want, "conll, ", "", 1)
			}
			args := append(append([]string(nil), c.args...), "--format", format)
			code, _, errs := cli(t, args...)
			assert.Equal(t, 2, code, "%s: %s", strings.Join(args, " "), errs)
			assert.Contains(t, errs, want, strings.Join(args, " "))
			if c.out != "" {
				_, err := os.Stat(c.out)
				assert.True(t, os.IsNotExist(err), "%s: %s made", strings.Join(args, " "), c.out)
			}
		}
	}
}

// export --split writes the documents of one split only (the notes tag
// scored, say); a split without documents says where they are.
func TestExportOneSplit(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	files, err := os.ReadDir("../../testdata/i2b2")
	require.NoError(t, err)
	require.Greater(t, len(files), 1)
	for i, f := range files {
		split := "train"
		if i == 0 {
			split = "dev"
		}
		code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", split,
			filepath.Join("../../testdata/i2b2", f.Name()))
		require.Equal(t, 0, code, errs)
	}
	out := filepath.Join(dir, "dev")
	code, stdout, errs := cli(t, "export", "--db", db, "--corpus", "a", "--split", "dev", "--out", out)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "1 file")
	written, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Len(t, written, 1)
	assert.Equal(t, files[0].Name(), written[0].Name())

	code, _, errs = cli(t, "export", "--db", db, "--corpus", "a", "--split", "test", "--out", filepath.Join(dir, "test"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, fmt.Sprintf(`no documents in split "test" (its documents: train %d, dev 1)`, len(files)-1))
	_, err = os.Stat(filepath.Join(dir, "test"))
	assert.True(t, os.IsNotExist(err), "a refused export makes no directory")
	// An --out named as a document file would be made a directory: refused.
	code, _, errs = cli(t, "export", "--db", db, "--corpus", "a", "--format", "jsonl", "--out", filepath.Join(dir, "notes.jsonl"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "names a .jsonl file, but an export writes a directory of files (or a .zip of them)")
	_, err = os.Stat(filepath.Join(dir, "notes.jsonl"))
	assert.True(t, os.IsNotExist(err))
	code, stdout, errs = cli(t, "export", "--db", db, "--corpus", "a", "--split", "all", "--out", filepath.Join(dir, "all"))
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, fmt.Sprintf("%d files", len(files)), "all: every document")
	code, _, errs = cli(t, "export", "--db", db, "--corpus", "a", "--split", "tset", "--out", filepath.Join(dir, "tset"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `unknown split "tset"`)
}
