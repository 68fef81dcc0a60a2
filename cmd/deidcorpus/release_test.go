package main

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A release exported as it is decoded verifies, in a format written in
// batches and in one written whole.
func TestReleaseExportVerifies(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "release", "create", "--db", db, "--corpus", "a", "--name", "r", "--version", "1.0.0")
	require.Equal(t, 0, code, errs)
	for _, format := range []string{"i2b2", "i2b2-2006"} {
		archive := filepath.Join(dir, format+".zip")
		code, out, errs := cli(t, "release", "export", "--db", db, "--release", "r@1.0.0", "--format", format, "--out", archive)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "files, MANIFEST and DATASHEET.md included")
		code, out, errs = cli(t, "release", "verify", archive)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "3 documents")
	}
	// Imported with no format or tag set named, the archive and its unzipped
	// folder come back in the format and tag set release.json names.
	folder := filepath.Join(dir, "unzipped")
	unzipTo(t, filepath.Join(dir, "i2b2-2006.zip"), folder)
	for _, in := range []string{filepath.Join(dir, "i2b2-2006.zip"), folder} {
		code, out, errs := cli(t, "import", "--db", db, "--corpus", "back-"+filepath.Base(in), in)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "imported 3 documents and 13 spans")
		assert.Contains(t, out, "(format i2b2-2006 and tag set i2b2-2014 from ")
		assert.Contains(t, out, "release.json)")
	}
	require.NoError(t, os.RemoveAll(folder))

	// The archive unzipped verifies as the archive does; a changed file in
	// the folder fails it, named.
	unzipTo(t, filepath.Join(dir, "i2b2.zip"), folder)
	code, out, errs := cli(t, "release", "verify", folder)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, folder+": OK, r@1.0.0")
	docs, err := filepath.Glob(filepath.Join(folder, "gold", "*.xml"))
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	require.NoError(t, os.WriteFile(docs[0], []byte("changed"), 0o644))
	code, out, errs = cli(t, "release", "verify", folder)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, folder+": FAILED")
	assert.Contains(t, errs, filepath.Base(docs[0]))
	// A file the archive did not hold fails it; a link is refused unread.
	stray := filepath.Join(dir, "stray")
	unzipTo(t, filepath.Join(dir, "i2b2.zip"), stray)
	require.NoError(t, os.WriteFile(filepath.Join(stray, ".DS_Store"), nil, 0o644))
	code, _, errs = cli(t, "release", "verify", stray)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, ".DS_Store: not listed in MANIFEST")
	require.NoError(t, os.Remove(filepath.Join(stray, ".DS_Store")))
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(stray, "gold", "link.xml")))
	code, _, errs = cli(t, "release", "verify", stray)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "gold/link.xml: not a regular file")

	// Several archives: each is checked and reported, a bad one among them
	// fails the command after the others.
	bad := filepath.Join(dir, "bad.zip")
	require.NoError(t, os.WriteFile(bad, []byte("not a zip"), 0o644))
	good := filepath.Join(dir, "i2b2.zip")
	code, out, errs = cli(t, "release", "verify", bad, filepath.Join(dir, "missing.zip"), good)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, out, bad+": not a readable zip archive")
	assert.Contains(t, out, "missing.zip: no such file")
	assert.Contains(t, out, good+": OK")
	assert.Contains(t, errs, "2 of 3 archives failed")

	// The release as an argument, as diff and verify take theirs; an --out
	// that is a directory is refused before anything is written.
	code, _, errs = cli(t, "release", "export", "--db", db, "r@1.0.0", "--out", filepath.Join(dir, "arg.zip"))
	require.Equal(t, 0, code, errs)
	assert.FileExists(t, filepath.Join(dir, "arg.zip"))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "folder.zip"), 0o755))
	code, _, errs = cli(t, "release", "export", "--db", db, "r@1.0.0", "--out", filepath.Join(dir, "folder.zip"))
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "folder.zip is a directory")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".export-", "no temporary archive left")
	}

	code, _, errs = cli(t, "release", "export", "--db", db, "--release", "r@9.9.9", "--out", filepath.Join(dir, "none.zip"))
	assert.Equal(t, 3, code, errs)
	assert.NoFileExists(t, filepath.Join(dir, "none.zip"))
	code, _, errs = cli(t, "release", "create", "--db", db, "--corpus", "a", "--name", "r", "--version", "1.1.0", "--accept-unannotated", "read")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "--accept-unannotated goes with --share")
	code, _, errs = cli(t, "release", "export", "--db", db, "--release", "r@1.0.0", "--out", filepath.Join(dir, "r.txt"))
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "a release is written as a .zip archive")
	assert.NoFileExists(t, filepath.Join(dir, "r.txt"))
}

// unzipTo extracts a zip archive into dir.
func unzipTo(t *testing.T, archive, dir string) {
	t.Helper()
	zr, err := zip.OpenReader(archive)
	require.NoError(t, err)
	defer zr.Close()
	for _, f := range zr.File {
		path := filepath.Join(dir, filepath.FromSlash(f.Name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		rc, err := f.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		require.NoError(t, os.WriteFile(path, data, 0o644))
	}
}

// release list orders a name's versions as versions, names each one's
// parent, filters by corpus and prints JSON.
func TestReleaseList(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	for _, v := range [][]string{{"1.0.0"}, {"1.10.0", "--parent", "r@1.0.0"}, {"1.2.0"}} {
		code, _, errs = cli(t, append([]string{"release", "create", "--db", db, "--corpus", "a", "--name", "r", "--version"}, v...)...)
		require.Equal(t, 0, code, errs)
	}
	code, out, errs := cli(t, "release", "list", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `(?s)r@1\.0\.0 .*\nr@1\.2\.0 .*\nr@1\.10\.0\s+r@1\.0\.0\s+a\s`, out)
	code, out, errs = cli(t, "release", "list", "--db", db, "--corpus", "a", "--json")
	require.Equal(t, 0, code, errs)
	var rows []struct{ Release, Parent, RootHash string }
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 3)
	assert.Equal(t, "r@1.10.0", rows[2].Release)
	assert.Equal(t, "r@1.0.0", rows[2].Parent)
	assert.Len(t, rows[0].RootHash, 64)
	code, _, errs = cli(t, "release", "list", "--db", db, "--corpus", "other", "--json")
	assert.Equal(t, 3, code, errs)
	assert.Contains(t, errs, `"other"`)
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "unreleased", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	code, out, errs = cli(t, "release", "list", "--db", db, "--corpus", "unreleased", "--json")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "[]\n", out)
}
