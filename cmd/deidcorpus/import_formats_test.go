package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A folder of .txt and .ann files imports without --format, and says which
// format it was read in; attributes and relations it cannot keep are
// counted in a warning, not dropped without a word.
func TestImportFindsTheFormatAndCountsWhatItDrops(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	require.NoError(t, os.MkdirAll(notes, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(notes, "100-01.txt"), []byte("Ann saw Bob on Monday."), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(notes, "100-01.ann"), []byte("T1\tPATIENT 0 3\tAnn\nT2\tDOCTOR 8 11\tBob\n"+
		"A1\tUncertain T1\nA2\tNegated T2\nR1\tSees Arg1:T1 Arg2:T2\n"), 0o600))
	db := filepath.Join(dir, "c.db")
	code, out, errs := cli(t, "import", "--db", db, "--corpus", "n", "--tagset", "i2b2-2014", notes)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "imported 1 document and 2 spans")
	assert.Contains(t, errs, "format brat, found from the files (2 files of .ann and .txt); give --format to read them otherwise")
	assert.Contains(t, errs, "warning: not kept: 2 attributes, 1 relation")
}

// An EHR's CSV export imports under its own column names, and the corpus
// goes out and comes back as CSV and as OMOP NOTE and NOTE_NLP tables
// without a change (their JSON lines exports are the same bytes).
func TestCSVAndOMOPRoundTrip(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	ehr := filepath.Join(dir, "ehr.csv")
	require.NoError(t, os.WriteFile(ehr, []byte("NOTE_ID,PERSON_ID,NOTE_DATE,NOTE_TITLE,NOTE_TEXT,PROVIDER\n"+
		"77-01,77,2067-11-24,Discharge,\"Seen by Dr. Ana Pérez,\non 11/24/67.\",12\n"+
		"77-02,77,2067-11-25,Progress,Stable.,12\n"+
		"80-01,80,,Progress,Called Bob.,3\n"), 0o600))
	code, out, errs := cli(t, "import", "--db", db, "--corpus", "ehr", "--columns",
		"id=NOTE_ID,patient=person_id,date=note_date,type=note_title,text=note_text", ehr)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "imported 3 documents")
	assert.Contains(t, errs, "format csv, found from the files")
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "ehr", "--format", "csv", "--columns", "txt=NOTE_TEXT", ehr)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `unknown field "txt" (known: id, patient, record, date, type, split, text, spans)`)

	// Spans, from a JSON lines file of the same notes.
	spans := filepath.Join(dir, "spans.jsonl")
	require.NoError(t, os.WriteFile(spans, []byte(
		`{"id":"77-01","patient":"77","record":1,"note_type":"Discharge","created":"2067-11-24","text":"Seen by Dr. Ana Pérez,\non 11/24/67.","spans":[{"start":12,"end":21,"label":"DOCTOR"},{"start":26,"end":34,"label":"DATE"}]}`+"\n"+
			`{"id":"77-02","patient":"77","record":2,"note_type":"Progress","created":"2067-11-25","text":"Stable.","spans":[]}`+"\n"+
			`{"id":"80-01","patient":"80","record":1,"note_type":"Progress","text":"Called Bob.","spans":[{"start":7,"end":10,"label":"PATIENT"}]}`+"\n"), 0o600))
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "gold", "--tagset", "i2b2-2014", spans)
	require.Equal(t, 0, code, errs)
	jsonl := func(corpus string) string {
		out := filepath.Join(dir, corpus+".jsonl.d")
		code, _, errs := cli(t, "export", "--db", db, "--corpus", corpus, "--format", "jsonl", "--out", out)
		require.Equal(t, 0, code, errs)
		data, err := os.ReadFile(filepath.Join(out, "documents.jsonl"))
		require.NoError(t, err)
		return string(data)
	}
	want := jsonl("gold")
	for _, format := range []string{"csv", "omop"} {
		out := filepath.Join(dir, format)
		code, _, errs := cli(t, "export", "--db", db, "--corpus", "gold", "--format", format, "--out", out)
		require.Equal(t, 0, code, errs)
		code, _, errs = cli(t, "import", "--db", db, "--corpus", "back-"+format, "--tagset", "i2b2-2014", out)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, errs, "format "+format+", found from the files")
		assert.Equal(t, want, jsonl("back-"+format), format)
	}
}
