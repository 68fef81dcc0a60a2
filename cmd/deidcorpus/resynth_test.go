package main

import (
	"archive/zip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent/job"
	"deidcorpus/store"
)

// leakingNote is a note whose patient's surname is also in a date no
// pattern reads, whose words resynthesis keeps for review: the check finds
// the surname there and fails.
const leakingNote = `<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[Mr. Garfunkel was seen on Garfunkel Day 2001.]]></TEXT>
<TAGS>
<NAME id="P0" start="4" end="13" text="Garfunkel" TYPE="PATIENT" comment="" />
<DATE id="P1" start="26" end="44" text="Garfunkel Day 2001" TYPE="DATE" comment="" />
</TAGS>
</deIdi2b2>
`

// importLeakingNote imports leakingNote as corpus "a" into a new database
// in a new directory, and returns both.
func importLeakingNote(t *testing.T) (dir, db string) {
	t.Helper()
	dir = t.TempDir()
	db = filepath.Join(dir, "c.db")
	notes := filepath.Join(dir, "notes")
	require.NoError(t, os.Mkdir(notes, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(notes, "900-01.xml"), []byte(leakingNote), 0o644))
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", notes)
	require.Equal(t, 0, code, errs)
	return dir, db
}

// A policy file's errors name the file, and the line or the field; a type
// no label of the corpus reaches is refused with the one it was meant to be.
func TestResynthPolicyErrors(t *testing.T) {
	dir, db := importLeakingNote(t)
	policy := filepath.Join(dir, "policy.json")
	for _, c := range []struct{ text, want string }{
		{"{\n  \"types\": {\"DATE\": {\"strategy\": \"date-shift\", \"scop\": \"patient\"}}\n}", `types.DATE.scop: unknown field; did you mean scope?`},
		{"{\n  \"types\": {,}\n}", "line 2, column 13"},
		{`{"types": {"PATEINT": {"strategy": "name", "scope": "patient"}}}`, `"PATEINT" is no label of the corpus, no type of its tag set and no i2b2 2014 type; did you mean PATIENT?`},
	} {
		require.NoError(t, os.WriteFile(policy, []byte(c.text), 0o644))
		code, _, errs := cli(t, "resynth", "--db", db, "--corpus", "a", "--out", "a-r", "--policy", policy)
		assert.Equal(t, 2, code, errs)
		assert.Contains(t, errs, c.want)
		assert.Contains(t, errs, policy)
	}
	code, out, errs := cli(t, "corpora", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, out, "a-r", "a refused policy makes no corpus")
}

// A policy file's mapping file and directory of a site's lists are read
// by the command, on the user's machine: the job's policy holds their text
// and no path, and an error in one names its file and line.
func TestResynthPolicyFilesTravelAsText(t *testing.T) {
	dir, db := importLeakingNote(t)
	mapping, site := filepath.Join(dir, "ours.map"), filepath.Join(dir, "site")
	require.NoError(t, os.Mkdir(site, 0o755))
	policy := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"mapping": "`+mapping+`", "resources": "`+site+`"}`), 0o644))
	write := func(mapText, towns string) {
		require.NoError(t, os.WriteFile(mapping, []byte(mapText), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(site, "zipcodes.tsv"), []byte(towns), 0o644))
	}
	const goodMap, goodTowns = "@to i2b2-2014\n@default keep\nPATIENT NAME/PATIENT\n", "Ashford\tMA\t02101\n"

	for _, c := range []struct{ mapText, towns, want string }{
		{"@to i2b2-2014\nPATIENT NAME/PATIENT extra\n", goodTowns, mapping + ":2: want 2 fields"},
		{goodMap, "Ashford\tMA\n", "resources " + site + ": zipcodes.tsv:1: want 3 tab-separated fields"},
	} {
		write(c.mapText, c.towns)
		code, _, errs := cli(t, "resynth", "--db", db, "--corpus", "a", "--out", "a-r", "--policy", policy, "--async")
		assert.Equal(t, 2, code, errs)
		assert.Contains(t, errs, policy)
		assert.Contains(t, errs, c.want)
	}

	write(goodMap, goodTowns)
	code, _, errs := cli(t, "resynth", "--db", db, "--corpus", "a", "--out", "a-r", "--policy", policy, "--async")
	require.Equal(t, 0, code, errs)
	st, err := store.Open(context.Background(), db)
	require.NoError(t, err)
	defer st.Close()
	j, err := st.Client.Job.Query().Where(job.KindEQ("resynthesize")).Only(context.Background())
	require.NoError(t, err)
	sent := j.Params["policy"].(map[string]any)
	assert.Equal(t, goodMap, sent["mappingText"])
	assert.Equal(t, map[string]any{"zipcodes.tsv": goodTowns}, sent["resourceFiles"])
	params, err := json.Marshal(j.Params)
	require.NoError(t, err)
	assert.NotContains(t, string(params), dir, "the job's parameters name no path")
}

// TestResynthCheckFailed: a resynthesis whose check fails says that its
// corpus is quarantined and exits with an error; jobs lists it as
// check_failed; a curator's resolve lifts the quarantine and needs a reason.
func TestResynthCheckFailed(t *testing.T) {
	dir, db := importLeakingNote(t)

	code, out, errs := cli(t, "resynth", "--db", db, "--corpus", "a", "--out", "a-r")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "failed its check")
	assert.Regexp(t, `job \d+: check failed; "a-r" is quarantined \(1 unresolved finding\)`, out)

	code, out, errs = cli(t, "jobs", "list", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `resynthesize\s+check_failed`, out)

	code, _, errs = cli(t, "release", "create", "--db", db, "--corpus", "a-r", "--name", "r", "--version", "1.0.0")
	assert.Equal(t, 4, code, "a conflict")
	assert.Contains(t, errs, "quarantined")

	code, _, _ = cli(t, "resynth", "resolve", "--db", db, "a-r")
	assert.Equal(t, 2, code, "no reason")
	code, out, errs = cli(t, "resynth", "resolve", "--db", db, "a-r", "--reason", "reviewed: the kept value is an eponym")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `resolved 1 check finding of "a-r"`)
	code, _, errs = cli(t, "release", "create", "--db", db, "--corpus", "a-r", "--name", "r", "--version", "1.0.0")
	assert.Equal(t, 0, code, errs)

	// For sharing, with pseudonymous ids: the source's note id 900-01 is in
	// no file of the archive, which verifies.
	code, _, errs = cli(t, "release", "create", "--db", db, "--corpus", "a-r", "--name", "pub", "--version", "1.0.0",
		"--share", "--pseudonymous-ids")
	require.Equal(t, 0, code, errs)
	code, out, errs = cli(t, "audit", "list", "--db", db, "--limit", "3")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `cli\.release\.create\s+corpus=a-r name=pub pseudonymousIDs=true share=true version=1\.0\.0`, out,
		"the audit log says how a release was made")
	// --share is not inherited, and a version without --parent follows
	// nothing: both are said, and the release is made.
	code, _, errs = cli(t, "release", "create", "--db", db, "--corpus", "a-r", "--name", "pub", "--version", "1.1.0", "--parent", "pub@1.0.0")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "note: pub@1.0.0 is shared but pub@1.1.0 is not (--share is not inherited)")
	code, _, errs = cli(t, "release", "create", "--db", db, "--corpus", "a-r", "--name", "r", "--version", "1.1.0")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "note: r@1.1.0 follows no release though r@1.0.0 was made before it")
	code, _, errs = cli(t, "release", "create", "--db", db, "--corpus", "a-r", "--name", "r", "--version", "1.2.0", "--parent", "r@1.1.0")
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "note:")
	archive := filepath.Join(dir, "pub.zip")
	code, _, errs = cli(t, "release", "export", "--db", db, "--release", "pub@1.0.0", "--out", archive)
	require.Equal(t, 0, code, errs)
	code, out, errs = cli(t, "release", "verify", archive)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "OK, pub@1.0.0, ")
	z, err := zip.OpenReader(archive)
	require.NoError(t, err)
	defer z.Close()
	sourceID := regexp.MustCompile(`\b900(-01)?\b`)
	for _, f := range z.File {
		r, err := f.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(r)
		require.NoError(t, err)
		assert.False(t, sourceID.MatchString(f.Name+"\n"+string(data)), "%s names the source's note or patient", f.Name)
		if f.Name == "DATASHEET.md" {
			assert.Contains(t, string(data), "| document and patient ids | pseudonymous")
		}
	}
}

// TestResynthSaysWhatItCopied: a name the gold annotates once and misses
// once is copied where it was missed when the policy does not propagate;
// the check passes (it lists such finds for a person) but the corpus is
// quarantined, and resynth says so and where to read them, with the
// offsets of the source, where the span is missing.
func TestResynthSaysWhatItCopied(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	notes := filepath.Join(dir, "notes")
	require.NoError(t, os.Mkdir(notes, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(notes, "901-01.xml"), []byte(`<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[Mr. Garfunkel was seen today. Garfunkel is well.]]></TEXT>
<TAGS>
<NAME id="P0" start="4" end="13" text="Garfunkel" TYPE="PATIENT" comment="" />
</TAGS>
</deIdi2b2>
`), 0o644))
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", notes)
	require.Equal(t, 0, code, errs)
	// Propagation would replace it (TestPropagation in pipeline/surrogate).
	policy := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"propagate": false}`), 0o644))
	code, out, errs := cli(t, "resynth", "--db", db, "--corpus", "a", "--out", "a-r", "--policy", policy)
	require.Equal(t, 2, code, "an unannotated find quarantines the corpus: %s", errs)
	assert.Contains(t, out, "ok=true")
	assert.Contains(t, out, ", 1 unannotated, 0 propagated, ")
	assert.Contains(t, out, "1 unannotated find: original values outside the gold spans, copied unchanged")
	code, out, errs = cli(t, "resynth", "report", "--db", db, "a-r")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `901-01\s+901\s+PATIENT\s+30-39\s+\d+-\d+\s+"Garfunkel"`, out)
}

// A corpus made by resynthesis takes no text from an import: its check,
// which --share relies on, read only what resynthesis wrote, so an original
// note added or replaced there would be shared as if checked. A second
// layer of annotations on its notes, their text unchanged, is taken.
func TestResynthesizedCorpusTakesNoImportedText(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "c", "--tagset", "i2b2-2014", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "c", "--out", "c-r")
	require.Equal(t, 0, code, errs)

	for _, args := range [][]string{
		{"--replace", "../../testdata/i2b2"}, // the originals over the surrogates
		{filepath.Join(dir, "new")},          // a note the corpus lacks
	} {
		if args[0] != "--replace" {
			require.NoError(t, os.Mkdir(args[0], 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(args[0], "999-01.xml"), []byte(leakingNote), 0o644))
		}
		code, _, errs = cli(t, append([]string{"import", "--db", db, "--corpus", "c-r"}, args...)...)
		assert.Equal(t, 4, code, errs)
		assert.Contains(t, errs, `corpus "c-r" was made by resynthesis, and its check covers only the text resynthesis wrote`)
	}
	code, out, errs := cli(t, "corpora", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `c-r\s+i2b2-2014\s+surrogate\s+resynthesis\s+passed\s+3\s+gold`, out, "nothing was written")

	layer := filepath.Join(dir, "layer")
	code, _, errs = cli(t, "export", "--db", db, "--corpus", "c-r", "--out", layer)
	require.Equal(t, 0, code, errs)
	code, out, errs = cli(t, "import", "--db", db, "--corpus", "c-r", "--set", "second", "--kind", "annotator", layer)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "imported 3 documents")
}
