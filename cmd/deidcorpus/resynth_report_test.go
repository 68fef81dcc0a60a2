package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/surrogate"
)

// resynthesizedDB is a database holding testdata/i2b2 as corpus "orig" and
// its resynthesis "surr".
func resynthesizedDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "orig", "--tagset", "i2b2-2014", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "orig", "--out", "surr")
	require.Equal(t, 0, code, errs)
	return db
}

// TestResynthReport: a curator prints the check report of a surrogate corpus,
// audited as a read of checkReport; a researcher may not; an original corpus
// has none.
func TestResynthReport(t *testing.T) {
	db := resynthesizedDB(t)

	code, out, errs := cli(t, "resynth", "report", "surr", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^check of surr: passed\n3 documents, 13 spans, \d+ replaced, \d+ dates checked; 0 misaligned, 0 leaks`, out)
	code, out, errs = cli(t, "resynth", "report", "--json", "surr", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"namePatterns"`)
	assert.Contains(t, out, `"leaks": []`, "nothing found is an empty list")
	assert.NotContains(t, out, "null")

	// A run that adds a note checks that note: the report is the latest
	// run's, and an earlier run's is asked for by its job.
	more := filepath.Join(t.TempDir(), "950-01.xml")
	require.NoError(t, os.WriteFile(more, []byte(`<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2><TEXT><![CDATA[Ms. Ostrowski was seen today.]]></TEXT>
<TAGS><NAME id="P0" start="4" end="13" text="Ostrowski" TYPE="PATIENT" comment="" /></TAGS></deIdi2b2>
`), 0o644))
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "orig", "--tagset", "i2b2-2014", more)
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "orig", "--out", "surr")
	require.Equal(t, 0, code, errs)
	code, out, errs = cli(t, "resynth", "report", "surr", "--db", db)
	require.Equal(t, 0, code, errs)
	// The corpus as a whole first (3 + 1 documents), its runs below, then
	// the latest run's findings.
	assert.Regexp(t, `^corpus surr, 2 runs: check passed; 4 documents, \d+ of 14 spans replaced; 0 findings;`, out)
	m := regexp.MustCompile(`\njob (\d+)\s+1\s+3\s+\d+ of 13\s+0\s+passed\njob (\d+)\s+1\s+1\s+\d+ of 1\s+0\s+passed\n\nThe run of job (\d+) `).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	m = []string{m[0], m[3], m[1], m[2]} // the report's run, then the runs in order
	assert.Equal(t, m[3], m[1])
	assert.Contains(t, out, "check of surr: passed\n1 document, 1 span,")
	code, out, errs = cli(t, "resynth", "report", "surr", "--job", m[2], "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "check of surr: passed\n3 documents, 13 spans,")
	code, out, errs = cli(t, "resynth", "report", "surr", "--json", "--db", db)
	require.Equal(t, 0, code, errs)
	var full struct {
		Job    int
		Runs   []int
		Report struct{ Documents int }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &full), out)
	assert.Equal(t, m[3], strconv.Itoa(full.Job))
	assert.Len(t, full.Runs, 2)
	assert.Equal(t, 1, full.Report.Documents)
	assert.Contains(t, out, `"documents": 1`, "the fields' JSON names, as GraphQL's")
	assert.NotContains(t, out, `"Documents"`)
	code, _, errs = cli(t, "resynth", "report", "surr", "--job", "999", "--db", db)
	assert.Equal(t, 3, code, errs)
	assert.Contains(t, errs, `job 999 did not resynthesize into corpus "surr" (its runs: jobs [`+m[2]+" "+m[3]+"])")

	code, _, errs = cli(t, "resynth", "report", "orig", "--db", db)
	assert.Equal(t, 3, code, errs)
	assert.Contains(t, errs, `corpus "orig" was not made by resynthesis`)

	code, _, errs = cli(t, "resynth", "report", "surr", "--db", db, "--token", researcherToken(t, db))
	assert.Equal(t, 5, code, errs)

	code, out, errs = cli(t, "audit", "list", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `local:\S+\s+read\s+Query.checkReport\s+corpus=surr\n`, out)
	assert.Regexp(t, `rita\s+denied\s+Query.checkReport`, out)
}

func TestCheckFailedSaysWhatItMeans(t *testing.T) {
	err := checkFailed("notes-r", &jobs.CheckSummary{Leaks: 2, Inconsistent: 1}, 42)
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.Equal(t, `the surrogate corpus failed its check (2 leaked originals, 1 inconsistent surrogates): corpus "notes-r" was written, `+
		`but it is quarantined (no release or derived corpus takes it) until a rerun into it passes or a curator resolves the findings; `+
		`the review list (PHI, curators only): deidcorpus resynth report notes-r (also artifact 42, /download/artifacts/42); `+
		`once reviewed: deidcorpus resynth resolve notes-r --reason ...`, err.Error())
}

// TestCheckReportListsIdentifiers: a source's patient or note id found in
// the text fails the check, is counted and listed with the id it spells.
func TestCheckReportListsIdentifiers(t *testing.T) {
	var out strings.Builder
	r := &surrogate.Report{Documents: 1, Identifiers: []surrogate.IdentifierLeak{{Patient: "100234", Doc: "100234-07",
		Kind: surrogate.DocumentIDKind, ID: "100234-A1234", Value: "A1234", Start: 7, End: 12}}}
	printCheckReport(&env{stdout: &out}, "notes-r", r, nil)
	assert.Regexp(t, `^check of notes-r: FAILED\n.*; 0 misaligned, 0 leaks, 1 source ids, 0 inconsistent`, out.String())
	assert.Regexp(t, `(?m)^Identifiers: the source's patient or note id in the text \(1\):\nDOCUMENT +PATIENT +KIND +ID +AT +VALUE\n`+
		`100234-07 +100234 +document id +100234-A1234 +7-12 +"A1234"$`, out.String())

	err := checkFailed("notes-r", &jobs.CheckSummary{Identifiers: 3}, 0)
	assert.Contains(t, err.Error(), `failed its check (3 patient or note ids in the text): corpus "notes-r"`)
	// A summary that does not count a kind of finding the check failed on.
	err = checkFailed("notes-r", &jobs.CheckSummary{}, 0)
	assert.Contains(t, err.Error(), `failed its check (see its report): corpus "notes-r"`)
}
