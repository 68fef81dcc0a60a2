package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every file the command line makes from notes is its owner's only: exports
// (a directory or a .zip), features, an exported model and offline tagging's
// output; a file already there with wider permissions is narrowed.
func TestFilesFromNotesArePrivate(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	private := func(path string) {
		t.Helper()
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), path)
	}
	wide := func(name string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte("older"), 0o644))
		require.NoError(t, os.Chmod(path, 0o644)) // whatever the umask
		return path
	}

	code, _, errs = cli(t, "export", "--db", db, "--corpus", "a", "--out", filepath.Join(dir, "out"))
	require.Equal(t, 0, code, errs)
	exported, err := filepath.Glob(filepath.Join(dir, "out", "*.xml"))
	require.NoError(t, err)
	require.Len(t, exported, 3)
	for _, p := range exported {
		private(p)
	}
	zipped := wide("a.zip")
	code, _, errs = cli(t, "export", "--db", db, "--corpus", "a", "--out", zipped)
	require.Equal(t, 0, code, errs)
	private(zipped)

	features := wide("a.crfsuite")
	code, _, errs = cli(t, "features", "--db", db, "--corpus", "a", "--out", features)
	require.Equal(t, 0, code, errs)
	private(features)

	config := filepath.Join(dir, "tagger.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"training": {"max_iterations": 3}}`), 0o644))
	code, _, errs = cli(t, "train", "--db", db, "--corpus", "a", "--model", "crf1", "--config", config)
	require.Equal(t, 0, code, errs)
	model := wide("crf1.model")
	code, _, errs = cli(t, "models", "export", "--db", db, "--model", "crf1", "--out", model)
	require.Equal(t, 0, code, errs)
	private(model)
	code, _, errs = cli(t, "tag", "--model-file", model, "--in", "../../testdata/i2b2", "--out", filepath.Join(dir, "tagged"))
	require.Equal(t, 0, code, errs)
	tagged, err := filepath.Glob(filepath.Join(dir, "tagged", "*.xml"))
	require.NoError(t, err)
	require.NotEmpty(t, tagged)
	for _, p := range tagged {
		private(p)
	}
	// Plain-text notes in the default format: the refusal names the file
	// and the format that reads it, and nothing is written.
	notes := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(notes, "n1.txt"), []byte("Seen by Dr. Ann Lee on 3/4/2019.\n"), 0o644))
	code, _, errs = cli(t, "tag", "--model-file", model, "--in", notes, "--out", filepath.Join(dir, "plain"))
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "n1.txt; format i2b2 reads .xml files only (try --format brat")
	code, out, errs := cli(t, "tag", "--model-file", model, "--in", notes, "--out", filepath.Join(dir, "plain"), "--format", "brat")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "tagged 1 document")
	assert.FileExists(t, filepath.Join(dir, "plain", "n1.ann"))
}
