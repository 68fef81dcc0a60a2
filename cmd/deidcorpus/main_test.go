package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline/tagger"
	"deidcorpus/store"
)

// cli runs the command line as main would, with the environment isolated.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(string) string { return "" }
	code = run(context.Background(), args, getenv, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// researcherToken adds the researcher rita to db and returns a token of hers.
func researcherToken(t *testing.T, db string) string {
	t.Helper()
	code, _, errs := cli(t, "users", "add", "rita", "--role", "researcher", "--db", db)
	require.Equal(t, 0, code, errs)
	code, token, errs := cli(t, "tokens", "create", "--user", "rita", "--db", db)
	require.Equal(t, 0, code, errs)
	return strings.TrimSpace(token)
}

func TestServeDemoAnswersStatistics(t *testing.T) {
	db := filepath.Join(t.TempDir(), "demo.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--demo", "--addr", "127.0.0.1:0", "--db", db},
			func(string) string { return "" }, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	// The server prints where it listens; logs follow on the same stream.
	var base string
	sc := bufio.NewScanner(pr)
	re := regexp.MustCompile(`serving on (http://\S+)`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	go io.Copy(io.Discard, pr)
	require.NotEmpty(t, base, "server never said where it listens")

	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, time.Minute, 50*time.Millisecond) // a deadline for a hang, not a speed bar: CI machines are shared

	// The first start wrote the admin's token beside the database.
	token, err := os.ReadFile(db + ".admin-token")
	require.NoError(t, err)
	info, err := os.Stat(db + ".admin-token")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the token file is the owner's only")
	query := func(q string, vars map[string]any) map[string]any {
		body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
		req, err := http.NewRequest("POST", base+"/graphql", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.Nil(t, out["errors"])
		return out["data"].(map[string]any)
	}
	data := query(`{ corpusByName(name: "demo") { id } }`, nil)
	id := data["corpusByName"].(map[string]any)["id"]
	data = query(`query($id: ID!) { corpusStatistics(corpus: $id, by: [TYPE, SPLIT]) { documents patients spans groups { type split total } } }`,
		map[string]any{"id": id})
	st := data["corpusStatistics"].(map[string]any)
	assert.Equal(t, float64(demoPatients), st["patients"])
	assert.Greater(t, st["documents"].(float64), float64(2*demoPatients-1))
	sum := 0.0
	for _, g := range st["groups"].([]any) {
		sum += g.(map[string]any)["total"].(float64)
	}
	assert.Equal(t, st["spans"], sum)

	// The demo's jobs fill the other pages: runs, a model, an evaluation,
	// a release of the surrogate twin.
	require.Eventually(t, func() bool {
		data := query(`{ jobs(where: {status: succeeded, kindNEQ: "part"}) { totalCount } models { totalCount } evaluations { totalCount }
			releases { edges { node { ref corpus share } } } }`, nil)
		count := func(k string) float64 { return data[k].(map[string]any)["totalCount"].(float64) }
		rels := data["releases"].(map[string]any)["edges"].([]any)
		return count("jobs") == 3 && count("models") == 1 && count("evaluations") == 1 && len(rels) == 1
	}, 5*time.Minute, 200*time.Millisecond)
	data = query(`{ releases { edges { node { ref corpus share } } } corpusByName(name: "demo-twin") { kind } }`, nil)
	assert.Equal(t, map[string]any{"ref": "demo-twin@1.0.0", "corpus": "demo-twin", "share": true},
		data["releases"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"])
	assert.Equal(t, "surrogate", data["corpusByName"].(map[string]any)["kind"])

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, "graceful shutdown exits 0")
	case <-time.After(15 * time.Second):
		t.Fatal("server did not shut down")
	}
}

func TestImportStatsExportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, out, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "imported 3 documents and 13 spans")

	code, _, errs = cli(t, "import", "--db", db, "--corpus", "a", "../../testdata/i2b2")
	assert.Equal(t, 4, code, "re-import is a conflict")
	assert.Contains(t, errs, "already has document(s) 101-01, 101-02, 102-01")

	code, out, errs = cli(t, "stats", "--db", db, "--corpus", "a")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `NAME: DOCTOR\s+2\s+2`, out)
	assert.Regexp(t, `Total # of tags\s+13\s+13`, out)

	code, out, errs = cli(t, "export", "--db", db, "--corpus", "a", "--out", filepath.Join(dir, "out"))
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "wrote 3 files")
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "b", "--tagset", "i2b2-2014", "--split", "train", filepath.Join(dir, "out"))
	require.Equal(t, 0, code, errs)
	// Into files already there, never: nor does offline tagging write there.
	code, _, errs = cli(t, "export", "--db", db, "--corpus", "a", "--out", filepath.Join(dir, "out"))
	assert.Equal(t, 4, code, errs)
	assert.Contains(t, errs, "is not empty")
	code, _, errs = cli(t, "tag", "--model-file", "m.model", "--in", "../../testdata/i2b2", "--out", filepath.Join(dir, "out"))
	assert.Equal(t, 4, code, errs)
	assert.Contains(t, errs, "is not empty")
	code, _, errs = cli(t, "tag", "--model-file", "m.model", "--model", "crf1", "--in", "../../testdata/i2b2", "--out", filepath.Join(dir, "new"))
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "not --model or --corpus")

	stats := func(corpus string) map[string]any {
		code, out, errs := cli(t, "stats", "--db", db, "--corpus", corpus, "--by", "category,type,split,note-type", "--json")
		require.Equal(t, 0, code, errs)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		delete(m, "corpus")
		return m
	}
	assert.Equal(t, stats("a"), stats("b"))
	// PhysioNet files carry types only: read back under the corpus's own tag
	// set, each type gets its category again.
	code, _, errs = cli(t, "export", "--db", db, "--corpus", "a", "--format", "physionet", "--out", filepath.Join(dir, "physionet"))
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "p", "--format", "physionet", "--tagset", "i2b2-2014", "--split", "train",
		filepath.Join(dir, "physionet"))
	require.Equal(t, 0, code, errs)
	require.NotEmpty(t, stats("a")["groups"])
	assert.Equal(t, stats("a")["groups"], stats("p")["groups"])

	// The note-type table and the name patterns of one corpus.
	code, out, errs = cli(t, "stats", "--db", db, "--corpus", "a")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `Note type\s+Notes\s+Contain PHI\s+Tokens\s+PHI instances\s+PHI per note`, out)
	assert.Regexp(t, `Total\s+3\s+3 \(100.00%\)`, out)
	assert.Contains(t, out, "Name patterns (Yeniterzi et al. Table 7)")

	// A corpus compared with its exported and re-imported copy: alike in
	// every figure; --json has the figures where the issue names them.
	code, out, errs = cli(t, "stats", "--db", db, "--corpus", "a", "--compare", "b", "--json")
	require.Equal(t, 0, code, errs)
	var cmp struct {
		A          struct{ NamePatterns []struct{ Count int } }
		B          struct{ NamePatterns []struct{ Count int } }
		Comparison struct {
			ChiSquare struct {
				Statistic, P float64
				DOF          int
			}
			OOV          struct{ TokenRate, PHIRate float64 }
			NamePatterns []struct{ A, B int }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &cmp))
	assert.Zero(t, cmp.Comparison.ChiSquare.Statistic)
	assert.Equal(t, 1.0, cmp.Comparison.ChiSquare.P)
	assert.Positive(t, cmp.Comparison.ChiSquare.DOF)
	assert.Zero(t, cmp.Comparison.OOV.TokenRate)
	assert.Zero(t, cmp.Comparison.OOV.PHIRate)
	assert.NotEmpty(t, cmp.A.NamePatterns)
	assert.Equal(t, cmp.A.NamePatterns, cmp.B.NamePatterns)
	for _, key := range []string{`"statistic"`, `"dof"`, `"p"`, `"tokenRate"`, `"phiRate"`, `"namePatterns"`} {
		assert.Contains(t, out, key)
	}
	code, out, errs = cli(t, "stats", "--db", db, "--corpus", "a", "--compare", "b", "--by", "category")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `PHI totals by category: chi-square 0.0000, dof \d+, p 1.0000`, out)
	assert.Contains(t, out, "Token OOV: 0.00% of B's tokens")

	code, _, errs = cli(t, "export", "--db", db, "--corpus", "a", "--out", filepath.Join(dir, "a.zip"))
	require.Equal(t, 0, code, errs)
	zipped, err := os.Stat(filepath.Join(dir, "a.zip"))
	require.NoError(t, err)
	assert.Greater(t, zipped.Size(), int64(100))
}

func TestCLIErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	bad := filepath.Join(t.TempDir(), "100-01.xml")
	require.NoError(t, os.WriteFile(bad, []byte(`<r><TEXT>abc</TEXT><TAGS><NAME id="P0" start="1" end="9" TYPE="DOCTOR"/></TAGS></r>`), 0o644))
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "c", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "c", "--replace", bad)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "100-01.xml:1: tag P0 (NAME/DOCTOR): end 9 is past the end of the text")
	_, err := os.Stat(db)
	assert.NoError(t, err, "a refused import into a database that was there leaves it")

	code, _, errs = cli(t, "stats", "--db", db, "--corpus", "missing")
	assert.Equal(t, 3, code)
	assert.Contains(t, errs, `no corpus named "missing"`)

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--corpus", "missing", "--compare", "other"}, 3, `--corpus: no corpus named "missing"`},
		{[]string{"--corpus", "c", "--compare", "c", "--by", "split"}, 2, `--by: with --compare give category or type, not "split"`},
		{[]string{"--corpus", "c", "--compare", "c", "--by", "category,type"}, 2, `--by: with --compare give one of category, type`},
		{[]string{"--corpus", "c", "--compare-set", "silver"}, 2, `--compare-set needs --compare`},
	} {
		code, _, errs = cli(t, append([]string{"stats", "--db", db}, c.args...)...)
		assert.Equal(t, c.code, code, errs)
		assert.Contains(t, errs, c.msg)
	}

	code, _, _ = cli(t, "frobnicate")
	assert.Equal(t, 2, code)
	code, _, errs = cli(t, "--db", db, "stats", "--corpus", "c")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--db before the command: flags come after it")
	code, out, _ := cli(t, "help")
	assert.Equal(t, 0, code)
	for _, c := range []string{"import", "export", "stats", "serve"} {
		assert.Contains(t, out, c)
	}
	code, help, _ := cli(t, "help", "help")
	assert.Equal(t, 0, code)
	assert.Equal(t, out, help)
	code, v, _ := cli(t, "--version")
	assert.Equal(t, 0, code)
	_, v2, _ := cli(t, "version")
	assert.Equal(t, v2, v)
	assert.NotEmpty(t, strings.TrimSpace(v))
	code, _, errs = cli(t, "version", "extra")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "version takes no arguments")
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "c", "--kind", "golden", bad)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `unknown annotation set kind "golden" (known: gold, annotator, adjudicated, system, surrogate)`)
}

// TestKeysRotate resynthesizes the test notes, then rotates the key: every
// mapping moves to the new key and a second resynthesis still reads them.
func TestKeysRotate(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "a", "--out", "a-r")
	require.Equal(t, 0, code, errs)
	fi, err := os.Stat(db + ".key")
	require.NoError(t, err, "the SQLite key file is made next to the database")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// statusWithNewKeyFile makes a key file of its own and asks keys status
	// of the database with it.
	statusWithNewKeyFile := func(name string) (keyFile string, code int, errs string) {
		keyFile = filepath.Join(dir, name)
		code, _, errs = cli(t, "keys", "init", "--key-file", keyFile)
		require.Equal(t, 0, code, errs)
		code, _, errs = cli(t, "keys", "status", "--db", db, "--key-file", keyFile)
		return keyFile, code, errs
	}
	// A key file of its own has a k1 too, which is another key: status
	// tries it on a mapping and says so.
	_, code, errs = statusWithNewKeyFile("stranger.key")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "the key ring cannot open the database's mappings under k1 (the ring's k1 is another key")

	code, out, errs := cli(t, "keys", "status", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `k1\s+\S+ \S+\s+[1-9]\d*\s+encrypts new mappings`, out)

	code, out, errs = cli(t, "keys", "rotate", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `added key k2 .* re-encrypted [1-9]\d* mappings`, out)
	assert.Regexp(t, `k1\s+\S+ \S+\s+0\s*\n`, out)
	assert.Regexp(t, `k2\s+\S+ \S+\s+[1-9]\d*\s+encrypts new mappings`, out)

	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "a", "--out", "a-r")
	require.Equal(t, 0, code, errs)

	// Another key file cannot read the mappings, and says so.
	other, code, errs := statusWithNewKeyFile("other.key")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "k2")
	code, _, errs = cli(t, "keys", "init", "--key-file", other)
	assert.Equal(t, 4, code, errs)

	// Without --key-file, init makes the file a SQLite database would use.
	fresh := filepath.Join(dir, "fresh.db")
	code, out, errs = cli(t, "keys", "init", "--db", fresh)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "created key file "+fresh+".key")
	info, err := os.Stat(fresh + ".key")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	code, _, errs = cli(t, "keys", "init", "--db", "postgres://x@127.0.0.1/y")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "a PostgreSQL database has no default key file")
}

// Commands that act for no account do not offer --token; those that act
// for one do.
func TestTokenOnlyWhereAnAccountActs(t *testing.T) {
	help := func(args []string) string {
		_, out, errs := cli(t, append(args, "-h")...)
		return out + errs
	}
	for _, args := range [][]string{{"serve"}, {"worker"}, {"keys", "init"}} {
		assert.Contains(t, help(args), "-db string", args)
		assert.NotContains(t, help(args), "-token string", args)
	}
	for _, args := range [][]string{{"stats"}, {"keys", "status"}, {"keys", "rotate"}, {"resynth"}} {
		assert.Contains(t, help(args), "-token string", args)
	}
}

func TestAuditVerifyCLI(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	st, err := store.Open(context.Background(), db)
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		require.NoError(t, st.Audit(context.Background(), store.AuditRecord{Action: "read", Target: "Document.text", IDs: []string{"1"}}))
	}
	code, out, errs := cli(t, "audit", "verify", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "audit log OK: 3 entries", "three records; the command writes its own after reading")
	// list shows what each command was given (its detail), on one line.
	require.NoError(t, st.Audit(context.Background(), store.AuditRecord{Action: "export", Target: "cli.export", Detail: "corpus=med\tformat=i2b2"}))
	code, out, errs = cli(t, "audit", "list", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `(?m)^SEQ\s+AT\s+ACTOR\s+ACTION\s+TARGET\s+IDS\s+DETAIL$`, out)
	assert.Regexp(t, `(?m)^5\s.*export\s+cli\.export\s+corpus=med format=i2b2$`, out)
	_, err = st.DB.Exec("UPDATE audit_entries SET target = 'nothing' WHERE seq = 3")
	require.NoError(t, err)
	st.Close()
	code, _, errs = cli(t, "audit", "verify", "--db", db)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "broken at entry 3")
}

func TestClip(t *testing.T) {
	assert.Equal(t, "abc", clip("abc", 5))
	assert.Equal(t, "ab...", clip("abcdef", 5))
	assert.Equal(t, "a b", clip("a\tb", 5))
	assert.Equal(t, "ñ...", clip("ñññññ", 6), "cut on a rune boundary")
}

// TestMissingRowsAreNotFound: a missing row is not_found in the CLI as in the
// API and the downloads (exit status 3).
func TestMissingRowsAreNotFound(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	for _, args := range [][]string{
		{"stats", "--db", db, "--corpus", "missing"},
		{"export", "--db", db, "--corpus", "missing", "--out", t.TempDir()},
		{"jobs", "cancel", "--db", db, "12345"},
	} {
		code, _, errs := cli(t, args...)
		assert.Equal(t, 3, code, "%v: %s", args, errs)
	}
}

// An input path that does not exist is not found (exit status 3), named as
// the user wrote it, without the system call that looked for it.
func TestMissingInputIsNotFound(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-notes")
	code, _, stderr := cli(t, "import", "--db", filepath.Join(t.TempDir(), "c.db"), "--corpus", "c", missing)
	assert.Equal(t, 3, code, stderr)
	assert.Equal(t, "deidcorpus import: "+missing+": no such file or directory\n", stderr)
}

// A command that reads or changes a corpus, or lists accounts, tokens or
// keys, or makes a token (which needs an account), does not make a database
// where --db names none (a mistyped path, the wrong directory), nor a key
// file; import does, and so does the first account of a new one.
func TestOnlyImportMakesADatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "typo.db")
	for _, args := range [][]string{
		{"stats", "--corpus", "demo", "--db", db},
		{"release", "list", "--db", db},
		{"export", "--corpus", "demo", "--out", filepath.Join(t.TempDir(), "x"), "--db", db},
		{"users", "list", "--db", db},
		{"tokens", "list", "--db", db},
		{"tokens", "revoke", "--db", db, "1"},
		{"tokens", "create", "--db", db, "--user", "admin"},
		{"keys", "status", "--db", db},
	} {
		code, _, stderr := cli(t, args...)
		assert.Equal(t, 3, code, "%v: %s", args, stderr)
		assert.Contains(t, stderr, "no database at "+db, args)
		for _, f := range []string{db, db + ".key"} {
			_, err := os.Stat(f)
			assert.ErrorIs(t, err, os.ErrNotExist, "%v made %s", args, f)
		}
	}
	// Nor does a token refused for its lifetime, which is read first.
	code, _, stderr := cli(t, "tokens", "create", "--db", db, "--expires", "5x")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, `--expires "5x"`)
	_, err := os.Stat(db)
	assert.ErrorIs(t, err, os.ErrNotExist, "tokens create --expires 5x made a database")
	notes := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(notes, "n1.xml"), []byte(`<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2><TEXT><![CDATA[Seen by Dr. Ann Lee.]]></TEXT><TAGS><DOCTOR id="P0" start="12" end="19" text="Ann Lee" TYPE="DOCTOR" comment="" /></TAGS></deIdi2b2>`), 0o644))
	// An import refused for its options or paths makes none either.
	for _, c := range []struct {
		code int
		args []string
		says string
	}{
		{2, []string{"--format", "brt", notes}, "did you mean brat"},
		{2, []string{"--tagset", "i2b2", notes}, `unknown tag set "i2b2"`},
		{2, []string{"--split", "training", notes}, `unknown split "training"`},
		{2, []string{"--kind", "golden", notes}, `unknown annotation set kind "golden"`},
		{3, []string{notes, filepath.Join(notes, "missing.xml")}, "missing.xml"},
	} {
		code, _, stderr := cli(t, append([]string{"import", "--corpus", "c", "--db", db}, c.args...)...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.says, c.args)
		_, err := os.Stat(db)
		assert.ErrorIs(t, err, os.ErrNotExist, "import %v made a database", c.args)
	}
	code, out, stderr := cli(t, "import", "--corpus", "c", "--db", db, notes)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "imported 1 document and 1 span (set gold)")
	code, _, stderr = cli(t, "stats", "--corpus", "c", "--db", db)
	assert.Equal(t, 0, code, stderr)
	// Options at odds with the corpus that exists are a conflict (exit 4).
	code, _, stderr = cli(t, "import", "--corpus", "c", "--tagset", "i2b2-2014", "--replace", "--db", db, notes)
	assert.Equal(t, 4, code, stderr)
	assert.Contains(t, stderr, `corpus "c" has tag set open, not i2b2-2014`)
}

// A start that cannot listen makes nothing: no database, no admin, no token
// that a later start would not mention.
func TestServeOnABusyPortMakesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	db := filepath.Join(t.TempDir(), "s.db")
	code, _, stderr := cli(t, "serve", "--addr", busy.Addr().String(), "--db", db)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, busy.Addr().String()+" is in use")
	_, port, _ := net.SplitHostPort(busy.Addr().String())
	next, _ := strconv.Atoi(port)
	assert.Contains(t, stderr, "--addr 127.0.0.1:"+strconv.Itoa(next+1), "another port than the busy one")
	for _, f := range []string{db, db + ".admin-token"} {
		_, err := os.Stat(f)
		assert.ErrorIs(t, err, os.ErrNotExist, f)
	}
}

// A server whose accounts include no enabled admin (a researcher added from
// the command line before any server ran) makes the admin as a first start
// does; when the admin's name is taken by an account of another role, it prints the
// exact commands that make it an admin, and they work.
func TestServeWithoutAnAdmin(t *testing.T) {
	db := filepath.Join(t.TempDir(), "u.db")
	code, _, errs := cli(t, "users", "add", "rita", "--role", "researcher", "--db", db)
	require.Equal(t, 0, code, errs)
	said := serveUntilServing(t, db)
	assert.Contains(t, said, `no admin account yet: made the account "admin" (admin); its API token is in `+db+".admin-token")
	token, err := os.ReadFile(db + ".admin-token")
	require.NoError(t, err)
	var out bytes.Buffer
	getenv := func(k string) string {
		return map[string]string{"DEIDCORPUS_TOKEN": strings.TrimSpace(string(token))}[k]
	}
	require.Equal(t, 0, run(context.Background(), []string{"users", "list", "--db", db}, getenv, strings.NewReader(""), &out, io.Discard))
	assert.Contains(t, out.String(), "rita")

	db = filepath.Join(t.TempDir(), "v.db")
	code, _, errs = cli(t, "users", "add", "admin", "--role", "researcher", "--db", db)
	require.Equal(t, 0, code, errs)
	said = serveUntilServing(t, db)
	for _, c := range []string{"users set admin --enable --role admin --db " + db, "tokens create --user admin --db " + db} {
		require.Contains(t, said, "\n  deidcorpus "+c+"\n")
		code, _, errs := cli(t, strings.Fields(c)...)
		require.Equal(t, 0, code, "%s: %s", c, errs)
	}
	assert.NotContains(t, serveUntilServing(t, db), "no enabled admin")
}

// serveUntilServing starts serve on db and returns what it printed on
// stderr before it served, then stops it.
func serveUntilServing(t *testing.T, db string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--no-workers", "--addr", "127.0.0.1:0", "--db", db},
			func(string) string { return "" }, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	var before []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() && !strings.Contains(sc.Text(), "serving on") {
		before = append(before, sc.Text())
	}
	go io.Copy(io.Discard, pr)
	cancel()
	<-done
	return strings.Join(before, "\n") + "\n"
}

// A --db that is a directory and an --out where nothing can be written are
// bad input named as the user gave them, not internal errors naming a
// temporary file.
func TestUnusablePathsAreNamed(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	out := filepath.Join(dir, "missing", "a.zip")
	code, _, errs = cli(t, "export", "--db", db, "--corpus", "a", "--out", out)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "--out "+out+": cannot write there")
	code, _, errs = cli(t, "corpora", "--db", dir)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "--db "+dir+" is a directory")
}

// DEIDCORPUS_HEAPPROFILE's profile is written while the command runs (not
// only at its end), as a gzipped pprof profile.
func TestHeapProfileIsWrittenWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.prof")
	stop := startHeapProfile(path)
	held := make([][]byte, 0, 64)
	for range 64 {
		held = append(held, make([]byte, 1<<20))
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	runtime.KeepAlive(held)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(data), 2)
	assert.Equal(t, []byte{0x1f, 0x8b}, data[:2], "gzip, as pprof writes")
}

// An import says how many documents came without a span: a brat .txt whose
// .ann is missing reads as a note without PHI, which a curator must see.
func TestImportCountsDocumentsWithoutSpans(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	require.NoError(t, os.Mkdir(notes, 0o755))
	for name, text := range map[string]string{
		"a.txt": "Seen by Dr. Ann Lee.", "a.ann": "T1\tDOCTOR 12 19\tAnn Lee\n",
		"b.txt": "Seen by Dr. Bo Chan.", // its .ann missing
	} {
		require.NoError(t, os.WriteFile(filepath.Join(notes, name), []byte(text), 0o644))
	}
	code, out, errs := cli(t, "import", "--db", filepath.Join(dir, "c.db"), "--corpus", "c", "--format", "brat", notes)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "imported 2 documents and 1 span (set gold) into new corpus \"c\"; 1 document without spans\n", out)
}

func TestStatsRefusesARepeatedDimension(t *testing.T) {
	code, _, errs := cli(t, "stats", "--db", filepath.Join(t.TempDir(), "none.db"), "--corpus", "c", "--by", "type,category,Type")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "deidcorpus stats: --by: Type is given twice\n")
}

func TestImportOfAnEmptyDirectoryNamesIt(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "notes")
	require.NoError(t, os.Mkdir(empty, 0o755))
	code, _, errs := cli(t, "import", "--db", filepath.Join(dir, "c.db"), "--corpus", "c", empty)
	assert.Equal(t, 2, code, errs)
	// A new database's key file (which also keys its audit log) is made
	// by its first command, which says so first.
	assert.Regexp(t, `^(deidcorpus: created the key file .*\n)?deidcorpus import: no i2b2 documents in `+regexp.QuoteMeta(empty)+"\n$", errs)
}

// TestImportSaysWhatItSkipped: files of an archive the format does not read
// are skipped, and the import says which; a release's MANIFEST, datasheet and
// release.json are not counted among them.
func TestImportSaysWhatItSkipped(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	require.NoError(t, os.Mkdir(notes, 0o755))
	for name, text := range map[string]string{
		"a.txt": "Seen by Dr. Ann Lee.", "a.ann": "T1\tDOCTOR 12 19\tAnn Lee\n",
		"junk.bin": "\x00\x01", "readme.md": "notes",
		// A release archive's own files, unzipped: not notes, not skipped ones.
		"MANIFEST": "", "DATASHEET.md": "# r@1.0.0\n", "release.json": `{"name":"r","version":"1.0.0","documents":[]}`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(notes, name), []byte(text), 0o644))
	}
	code, out, errs := cli(t, "import", "--db", filepath.Join(dir, "c.db"), "--corpus", "c", "--format", "brat", notes)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "imported 1 document and 1 span (set gold) into new corpus \"c\"; 2 files skipped, which format brat does not read ("+
		filepath.Join(notes, "junk.bin")+", "+filepath.Join(notes, "readme.md")+")\n", out)
}

// i2b2 XML imported without --tagset goes into an open tag set, which checks
// no label: a misspelt type beside i2b2 2014's is warned about; a corpus of
// i2b2 2014 labels, or of another tag set altogether, is not.
func TestImportWarnsOfMisspeltI2B2Types(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	require.NoError(t, os.Mkdir(notes, 0o755))
	xml := func(typ string) string {
		return `<?xml version="1.0" encoding="UTF-8" ?><deIdi2b2><TEXT><![CDATA[Seen by Dr. Ann Lee on 3/4.]]></TEXT><TAGS>` +
			`<NAME id="P0" start="12" end="19" text="Ann Lee" TYPE="` + typ + `" comment="" />` +
			`<DATE id="P1" start="23" end="26" text="3/4" TYPE="DATE" comment="" /></TAGS></deIdi2b2>`
	}
	require.NoError(t, os.WriteFile(filepath.Join(notes, "100-01.xml"), []byte(xml("DOCTR")), 0o644))
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "typo", notes)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, `warning: corpus "typo" holds 1 label that i2b2 2014 does not know (NAME/DOCTR) beside 1 it knows.`)

	require.NoError(t, os.WriteFile(filepath.Join(notes, "100-01.xml"), []byte(xml("DOCTOR")), 0o644))
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "clean", notes)
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "warning")

	// MEDDOCAN's own types beside an i2b2 one: a tag set a built-in
	// mapping knows, not misspellings.
	meddocan := `<?xml version="1.0" encoding="UTF-8" ?><deIdi2b2><TEXT><![CDATA[Dra. Ana Gil, Hospital Sur, 3/4.]]></TEXT><TAGS>` +
		`<NOMBRE_PERSONAL_SANITARIO id="P0" start="5" end="12" text="Ana Gil" TYPE="NOMBRE_PERSONAL_SANITARIO" comment="" />` +
		`<HOSPITAL id="P1" start="14" end="26" text="Hospital Sur" TYPE="HOSPITAL" comment="" />` +
		`<DATE id="P2" start="28" end="31" text="3/4" TYPE="DATE" comment="" /></TAGS></deIdi2b2>`
	require.NoError(t, os.WriteFile(filepath.Join(notes, "100-01.xml"), []byte(meddocan), 0o644))
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "meddocan", notes)
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "warning")
}

// spanishNote writes a BRAT note with MEDDOCAN's HOSPITAL and CALLE into
// dir/notes and returns that directory.
func spanishNote(t *testing.T, dir string) string {
	t.Helper()
	notes := filepath.Join(dir, "notes")
	require.NoError(t, os.Mkdir(notes, 0o755))
	for name, text := range map[string]string{
		"a.txt": "Ingresa en Hospital Sur, calle Mayor 3.",
		"a.ann": "T1\tHOSPITAL 11 23\tHospital Sur\nT2\tCALLE 25 38\tcalle Mayor 3\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(notes, name), []byte(text), 0o644))
	}
	return notes
}

// TestStatsOfAnOpenTagSet: an open tag set's labels (category and type the
// same) are printed once, in name order, not in i2b2's order, where
// MEDDOCAN's HOSPITAL would come first.
func TestStatsOfAnOpenTagSet(t *testing.T) {
	dir := t.TempDir()
	notes := spanishNote(t, dir)
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "c", "--format", "brat", "--tagset", "open", notes)
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "note:", "an open tag set asked for by name is meant")
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "d", "--format", "brat", notes)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, `note: corpus "d" holds meddocan's types, but under the open tag set their categories are as read (CALLE under CALLE, not LOCATION). Imported with --tagset meddocan`)
	code, out, errs := cli(t, "stats", "--db", db, "--corpus", "c", "--by", "category,type")
	require.Equal(t, 0, code, errs)
	calle, hospital := strings.Index(out, " CALLE "), strings.Index(out, " HOSPITAL ")
	assert.True(t, calle > 0 && hospital > calle, "CALLE before HOSPITAL:\n%s", out)
	assert.NotContains(t, out, "CALLE: CALLE")
}

// A MEDDOCAN corpus imported from BRAT, which carries only the types, gets
// each type's category from the meddocan tag set: its i2b2 XML export is
// what MEDDOCAN's own XML and evaluation script read. A type the tag set
// lacks is refused, naming the file and line.
func TestMeddocanTagSetFillsCategories(t *testing.T) {
	dir := t.TempDir()
	notes := spanishNote(t, dir)
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "c", "--format", "brat", "--tagset", "meddocan", notes)
	require.Equal(t, 0, code, errs)
	out := filepath.Join(dir, "xml")
	code, _, errs = cli(t, "export", "--db", db, "--corpus", "c", "--format", "i2b2", "--out", out)
	require.Equal(t, 0, code, errs)
	xml, err := os.ReadFile(filepath.Join(out, "a.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(xml), `<LOCATION id="T1" start="11" end="23" text="Hospital Sur" TYPE="HOSPITAL"`)
	assert.Contains(t, string(xml), `<LOCATION id="T2" start="25" end="38" text="calle Mayor 3" TYPE="CALLE"`)

	require.NoError(t, os.WriteFile(filepath.Join(notes, "a.ann"), []byte("T1\tHOSPITAL 11 23\tHospital Sur\nT2\tCALE 25 38\tcalle Mayor 3\n"), 0o644))
	code, _, errs = cli(t, "import", "--db", filepath.Join(dir, "d.db"), "--corpus", "d", "--format", "brat", "--tagset", "meddocan", notes)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "a.ann:2")
	assert.Contains(t, errs, `unknown type "CALE" in tag set meddocan; did you mean CALLE?`)
	// An i2b2 type in a MEDDOCAN corpus says whose it is.
	require.NoError(t, os.WriteFile(filepath.Join(notes, "a.ann"), []byte("T1\tHOSPITAL 11 23\tHospital Sur\nT2\tSTREET 25 38\tcalle Mayor 3\n"), 0o644))
	code, _, errs = cli(t, "import", "--db", filepath.Join(dir, "d.db"), "--corpus", "d", "--format", "brat", "--tagset", "meddocan", notes)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `a.ann:2: tag T2 (STREET): type "STREET" is i2b2-2014's, not meddocan's: import with tag set i2b2-2014`)
}

// train --print-config prints the defaults, which read back as a --config
// file give the default configuration.
func TestTrainPrintConfigReadsBack(t *testing.T) {
	code, out, errs := cli(t, "train", "--print-config")
	require.Equal(t, 0, code, errs)
	var printed tagger.Config // from zero: the output alone must hold the defaults
	require.NoError(t, json.Unmarshal([]byte(out), &printed))
	assert.Equal(t, tagger.DefaultConfig(), printed)
	cfg, err := tagger.ReadConfig(strings.NewReader(out))
	require.NoError(t, err)
	assert.Equal(t, tagger.DefaultConfig(), cfg)
}

// TestModelsList: the table shows how many labels a model predicts and the
// first few; --json lists them all, and never the model's own bytes.
func TestModelsList(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "c", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	register := []string{"models", "register", "--db", db, "--name", "ext", "--endpoint", "http://tagger:s3cret@tagger.internal:9/tag?api_key=k3y",
		"--labels", "AGE,CITY,DATE,DOCTOR,PATIENT"}
	code, _, errs = cli(t, register...)
	require.Equal(t, 2, code, "no host is allowed without DEIDCORPUS_EXTERNAL_HOSTS")
	assert.Contains(t, errs, "external taggers are not allowed on this server: an admin lists the hosts they may be reached at in DEIDCORPUS_EXTERNAL_HOSTS")
	var stdout, stderr bytes.Buffer
	allow := func(k string) string { return map[string]string{"DEIDCORPUS_EXTERNAL_HOSTS": "tagger.internal"}[k] }
	code = run(context.Background(), register, allow, strings.NewReader(""), &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	code, out, errs := cli(t, "models", "list", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "5: AGE, CITY, DATE, ...")
	assert.Contains(t, out, "http://***@tagger.internal:9/tag?api_key=***", "the admin reads the endpoint, credentials masked")
	assert.NotContains(t, out, "s3cret")
	assert.NotContains(t, out, "k3y")
	code, out, errs = cli(t, "models", "list", "--db", db, "--json")
	require.Equal(t, 0, code, errs)
	var listed []struct {
		Name   string   `json:"name"`
		Labels []string `json:"labels"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	require.Len(t, listed, 1)
	assert.Equal(t, []string{"AGE", "CITY", "DATE", "DOCTOR", "PATIENT"}, listed[0].Labels)
	assert.NotContains(t, out, "artifact")
}

// synth writes any format a patient at a time: JSON lines keep each note's
// type, which i2b2 XML cannot hold, and the import keeps them.
func TestSynthJSONLinesKeepNoteTypes(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "notes")
	code, stdout, errs := cli(t, "synth", "--patients", "12", "--seed", "3", "--format", "jsonl", "--out", out)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "notes to "+out)
	assert.Contains(t, errs, "import them with: deidcorpus import --corpus NAME --tagset i2b2-2014 --format jsonl --split train "+out)
	db := filepath.Join(dir, "c.db")
	code, _, errs = cli(t, "import", "--db", db, "--corpus", "s", "--tagset", "i2b2-2014", "--format", "jsonl", "--split", "train", out)
	require.Equal(t, 0, code, errs)
	code, stdout, errs = cli(t, "stats", "--db", db, "--corpus", "s", "--by", "note-type")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, stdout, "discharge summary")
	assert.NotContains(t, stdout, "(none)")

	code, _, errs = cli(t, "synth", "--patients", "2", "--format", "physionet", "--out", filepath.Join(dir, "p"))
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "is not written a patient at a time")
}
