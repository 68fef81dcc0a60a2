package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImportRefusesAnOversizeNote: a note over the per-note limit (4 MiB by
// default) fails the import naming the file, the limit and the flag that
// raises it, and the import writes none of the notes (all or nothing);
// with the limit raised, the same files import.
func TestImportRefusesAnOversizeNote(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	require.NoError(t, os.Mkdir(notes, 0o755))
	for name, text := range map[string]string{
		"100-01.txt": "Seen by Dr. Ann Lee.", "100-01.ann": "T1\tDOCTOR 12 19\tAnn Lee\n",
		"100-02.txt": strings.Repeat("Seen in clinic today. ", 200_000), // 4.4 MB
	} {
		require.NoError(t, os.WriteFile(filepath.Join(notes, name), []byte(text), 0o644))
	}
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "c", "--format", "brat", notes)
	assert.Equal(t, 2, code)
	// A new database's first command makes its key file, and says so first.
	assert.Regexp(t, `^(deidcorpus: created the key file .*\n)?`+regexp.QuoteMeta("deidcorpus import: "+filepath.Join(notes, "100-02.txt")+
		": larger than the limit of 4 MiB per note (raise it with --max-note-size if the note is real)\n")+`$`, errs)
	code, out, errs := cli(t, "corpora", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.NotRegexp(t, `(?m)^c\s`, out, "no corpus written")

	code, _, errs = cli(t, "import", "--db", db, "--corpus", "c", "--format", "brat", "--max-note-size", "64KiB", notes)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "larger than the limit of 65536 bytes per note")

	code, out, errs = cli(t, "import", "--db", db, "--corpus", "c", "--format", "brat", "--max-note-size", "5MiB", notes)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "imported 2 documents")
}

func TestByteSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{"100000": 100000, "512KiB": 512 << 10, "4MiB": 4 << 20, "4M": 4 << 20, "4mb": 4 << 20, "1GiB": 1 << 30} {
		var b byteSize
		require.NoError(t, b.Set(in), in)
		assert.Equal(t, want, int64(b), in)
	}
	for _, in := range []string{"", "0", "-1", "4Q", "MiB", "1.5MiB", "99999999999GiB"} {
		var b byteSize
		assert.Error(t, b.Set(in), in)
	}
	b := byteSize(4 << 20)
	assert.Equal(t, "4MiB", b.String())
}
