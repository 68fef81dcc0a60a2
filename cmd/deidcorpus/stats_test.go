package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cellGap separates the cells of stats' tables: tabwriter pads them by two
// spaces at least, and no cell holds two spaces running.
var cellGap = regexp.MustCompile(`\S(?:\s?\S)*`)

// tables splits stats' text output into its tables: the indented lines of
// each run of lines between blank ones (a title may come first, notes
// after); the first line is the header.
func tables(out string) [][]string {
	var all [][]string
	for _, block := range strings.Split(out, "\n\n") {
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			if strings.HasPrefix(l, "  ") {
				lines = append(lines, l)
			} else if len(lines) > 0 {
				break
			}
		}
		if len(lines) > 1 {
			all = append(all, lines)
		}
	}
	return all
}

// cellEnds are where a line's cells end: right-aligned columns end where
// their header ends.
func cellEnds(line string) []int {
	var ends []int
	for _, m := range cellGap.FindAllStringIndex(line, -1) {
		ends = append(ends, len([]rune(line[:m[1]])))
	}
	return ends
}

// Every column of every table stats prints has a header, and its cells are
// aligned under it, whatever the table is grouped by.
func TestStatsHeadsEveryColumn(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	notes := filepath.Join(dir, "notes.jsonl")
	require.NoError(t, os.WriteFile(notes, []byte(
		`{"id": "1-01", "note_type": "discharge", "split": "train", "text": "Seen by Dr. Lee on 3/4.", "spans": [{"start": 12, "end": 15, "label": "DOCTOR"}, {"start": 19, "end": 22, "label": "DATE"}]}
{"id": "2-01", "note_type": "radiology", "split": "dev", "text": "Ann Ray, 3/5.", "spans": [{"start": 0, "end": 7, "label": "PATIENT"}, {"start": 9, "end": 12, "label": "DATE"}]}
{"id": "2-02", "split": "dev", "text": "Nothing here."}
`), 0o644))
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--format", "jsonl", notes)
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "b", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)

	for _, c := range []struct {
		args    []string
		headers []string // the first table's
	}{
		{nil, []string{"PHI category", "# in train", "# in dev", "Total"}},
		{[]string{"--by", "type,note-type"}, []string{"PHI type", "Note type", "Total", "Unique"}},
		{[]string{"--by", "note-type,category,type,split"}, []string{"PHI category", "Note type", "# in train", "# in dev", "Total"}},
		{[]string{"--by", "note-type"}, []string{"Note type", "Total", "Unique"}},
		{[]string{"--by", "split"}, []string{"PHI category", "# in train", "# in dev", "Total"}},
		{[]string{"--compare", "b"}, []string{"PHI type", "A total", "A unique", "B total", "B unique", "A share", "B share", "Residual", "p", "B PHI OOV"}},
	} {
		code, out, errs := cli(t, append([]string{"stats", "--db", db, "--corpus", "a"}, c.args...)...)
		require.Equal(t, 0, code, errs)
		tabs := tables(out)
		require.GreaterOrEqual(t, len(tabs), 3, "%v: the PHI, note-type and name-pattern tables\n%s", c.args, out)
		assert.Equal(t, c.headers, cellGap.FindAllString(tabs[0][0], -1), "%v: headers\n%s", c.args, out)
		for _, tab := range tabs {
			heads := cellEnds(tab[0])
			for _, line := range tab[1:] {
				for _, end := range cellEnds(line) {
					assert.True(t, slices.Contains(heads, end), "%v: a cell with no header over it:\n%s\n%s", c.args, tab[0], line)
				}
			}
		}
	}
	code, out, errs := cli(t, "stats", "--db", db, "--corpus", "a", "--by", "type,note-type")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `\n\s+DOCTOR\s+discharge\s+1\s+1\n`, out)
	assert.Regexp(t, `\n\s+DATE\s+radiology\s+1\s+1\n`, out)

	// An open tag set's label (category and type alike) is said once.
	for _, name := range []string{"o1", "o2"} {
		code, _, errs = cli(t, "import", "--db", db, "--corpus", name, "--tagset", "open", "--format", "jsonl", notes)
		require.Equal(t, 0, code, errs)
	}
	code, out, errs = cli(t, "stats", "--db", db, "--corpus", "o1", "--compare", "o2")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `\n\s+DATE\s+2\s+2\s+2\s+2\s`, out)
	assert.NotContains(t, out, "DATE: DATE")
	assert.NotContains(t, errs, "share no PHI", "o1 and o2 share their labels")

	// Corpora with no label in common are compared, and told so.
	es := filepath.Join(dir, "es.jsonl")
	require.NoError(t, os.WriteFile(es, []byte(`{"id": "9-01", "split": "train", "text": "Ingreso el 3 de mayo.", "spans": [{"start": 11, "end": 20, "label": "FECHAS"}]}`+"\n"), 0o644))
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "es", "--tagset", "open", "--format", "jsonl", es)
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "stats", "--db", db, "--corpus", "o1", "--compare", "es")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "note: o1 and es share no PHI type: their labels differ")
	assert.Contains(t, errs, "meddocan-i2b2")
}
