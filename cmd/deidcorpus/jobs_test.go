package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/store"
)

// A job that fails in a worker exits as the same error would met directly,
// bad input 2; so does waiting for it again. A name the job would not find
// is refused before a job is queued: a missing split 2, a missing corpus 3.
func TestJobErrorsKeepTheirExitStatus(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)

	// More folds than patients: refused before a job is queued.
	code, _, errs = cli(t, "experiment", "--db", db, "--kind", "cv", "--corpus", "a", "--k", "10")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "10 folds, but split train of corpus \"a\" has 2 patients")
	assert.NotContains(t, errs, "job ")
	// A flag the kind does not read is refused, not silently ignored.
	code, _, errs = cli(t, "experiment", "--db", db, "--kind", "curve", "--corpus", "a", "--k", "5", "--shares", "0.5")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "--k: the curve experiment does not read it")
	// The job's parameter names read as the flags that set them.
	code, _, errs = cli(t, "experiment", "--db", db, "--kind", "curve", "--corpus", "a", "--test-fraction", "1.5")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "--test-fraction: 1.5 is not a share in (0, 1)")

	// A mapping that has no rule for the corpus's labels is refused before a
	// job is queued, every such label named.
	mapping := filepath.Join(t.TempDir(), "strict.map")
	require.NoError(t, os.WriteFile(mapping, []byte("@default error\nNOSUCH X\n"), 0o644))
	code, _, errs = cli(t, "experiment", "--db", db, "--kind", "cv", "--corpus", "a", "--k", "2", "--mapping", mapping)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "mapping "+mapping+" has no rule for 6 of the 6 labels of \"a\": AGE, CONTACT/PHONE, DATE,")
	assert.NotContains(t, errs, "job ")

	code, _, errs = cli(t, "train", "--db", db, "--corpus", "a", "--model", "m", "--split", "dev")
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, `no documents in split "dev"`)
	code, _, errs = cli(t, "train", "--db", db, "--corpus", "nope", "--model", "m")
	assert.Equal(t, 3, code, errs)
	assert.Contains(t, errs, `"nope"`)
	code, out, errs := cli(t, "jobs", "list", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, out, "train", "a refused job leaves no row")
}

// Every jobs subcommand names a missing job the same way, whichever check
// finds it first (the access rule of cancel and retry, the lookup of show).
func TestMissingJobIsNamed(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	for _, sub := range []string{"show", "cancel", "retry"} {
		code, _, errs := cli(t, "jobs", sub, "--db", db, "12345")
		assert.Equal(t, 3, code, sub)
		assert.Contains(t, errs, "jobs "+sub+": no job 12345", sub)
	}
}

// jobs wait on a job that nothing works says so rather than wait in silence.
func TestJobsWaitSaysWhenNothingWorksTheJob(t *testing.T) {
	defer func(d time.Duration) { queuedNotice = d }(queuedNotice)
	queuedNotice = 50 * time.Millisecond
	db := filepath.Join(t.TempDir(), "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	code, out, errs := cli(t, "train", "--db", db, "--corpus", "a", "--model", "m", "--async")
	require.Equal(t, 0, code, errs)
	m := regexp.MustCompile(`job (\d+) queued`).FindStringSubmatch(out)
	require.NotNil(t, m, out)

	// No worker: the wait ends only with its context, cancelled here once
	// the notice is written (the minute is for a machine too slow to say it).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout bytes.Buffer
	stderr := &noticeWriter{notice: "is still queued", seen: cancel}
	code = run(ctx, []string{"jobs", "wait", "--db", db, m[1]}, func(string) string { return "" }, strings.NewReader(""), &stdout, stderr)
	assert.NotZero(t, code)
	assert.Contains(t, stderr.String(), "job "+m[1]+" is still queued after 50ms; is a server (deidcorpus serve) or a worker")
}

// noticeWriter keeps what is written to it and calls seen once it holds
// notice.
type noticeWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	notice string
	seen   func()
}

func (w *noticeWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.notice) {
		w.seen()
	}
	return n, err
}

func (w *noticeWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// tag refuses, before a job is queued, a split without documents (2) and a
// set that exists (4): no job row, no set, no log line of a failed job.
func TestTagIsRefusedBeforeItIsQueued(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	config := filepath.Join(dir, "tagger.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"training": {"max_iterations": 3}}`), 0o644))
	code, _, errs = cli(t, "train", "--db", db, "--corpus", "a", "--model", "crf1", "--config", config)
	require.Equal(t, 0, code, errs)
	code, out, errs := cli(t, "tag", "--db", db, "--model", "crf1", "--corpus", "a", "--split", "train")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "tagged 3 documents into set system-crf1")

	code, out, errs = cli(t, "tag", "--db", db, "--model", "crf1", "--corpus", "a", "--split", "test", "--set", "s2")
	assert.Equal(t, 2, code, errs)
	assert.Empty(t, out)
	assert.Equal(t, "deidcorpus tag: corpus \"a\" has no documents in split \"test\" (its documents: train 3); choose one of these splits or \"all\"\n", errs)
	code, out, errs = cli(t, "tag", "--db", db, "--model", "crf1", "--corpus", "a", "--split", "train")
	assert.Equal(t, 4, code, errs)
	assert.Empty(t, out)
	assert.Equal(t, "deidcorpus tag: corpus \"a\" already has an annotation set \"system-crf1\"\n", errs)

	code, out, errs = cli(t, "jobs", "list", "--db", db, "--kind", "tag")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, 1, strings.Count(out, " tag "), "only the job that tagged: %s", out)
	code, out, errs = cli(t, "jobs", "list", "--db", db, "--kind", "tag", "--json")
	require.Equal(t, 0, code, errs)
	var listed []struct {
		Kind, Status string
		Params       map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(out), &listed), out)
	require.Len(t, listed, 1)
	assert.Equal(t, "tag", listed[0].Kind)
	assert.Equal(t, "succeeded", listed[0].Status)
	assert.Equal(t, "crf1", listed[0].Params["model"])
	code, out, errs = cli(t, "corpora", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, out, "s2")
}

// derive --async queues a job that a worker runs; a mapping file's name
// reaches the derived corpus's provenance as with a derive run in place.
func TestDeriveAsync(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	mapping := filepath.Join(dir, "dates.map")
	require.NoError(t, os.WriteFile(mapping, []byte("@from i2b2-2014\n@to i2b2-2014\n@default drop\nDATE =\n"), 0o644))
	code, out, errs := cli(t, "derive", "--db", db, "--corpus", "a", "--mapping", mapping, "--out", "a-dates", "--async")
	require.Equal(t, 0, code, errs)
	_, out = waitWithWorker(t, db, "derive", out)
	assert.Contains(t, out, "succeeded")
	st, err := store.Open(context.Background(), db)
	require.NoError(t, err)
	defer st.Close()
	c, err := st.CorpusByName(context.Background(), "a-dates")
	require.NoError(t, err)
	assert.Equal(t, "dates", c.Provenance["mapping"])
	assert.Equal(t, "derived", c.Provenance["source"])
}

// experiment --async queues a job; jobs wait prints its tables when it is
// done, as the experiment command waiting in place does.
func TestExperimentAsyncTableOnWait(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	config := filepath.Join(dir, "quick.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"training": {"max_iterations": 2}}`), 0o644))
	code, out, errs := cli(t, "experiment", "--db", db, "--kind", "cv", "--corpus", "a", "--k", "2", "--config", config, "--async")
	require.Equal(t, 0, code, errs)
	id, out := waitWithWorker(t, db, "experiment", out)
	assert.Contains(t, out, "job "+id+" (experiment): succeeded\n")
	assert.Contains(t, out, "| a 2-fold CV |")
	assert.Contains(t, out, "Strict micro scores")
}

// waitWithWorker runs a worker on db until the job whose queuing printed
// queued ("job N queued (kind)") has finished, and returns the job's id and
// what jobs wait printed (which must exit 0).
func waitWithWorker(t *testing.T, db, kind, queued string) (id, out string) {
	t.Helper()
	m := regexp.MustCompile(`job (\d+) queued \(` + kind + `\)`).FindStringSubmatch(queued)
	require.NotNil(t, m, queued)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"worker", "--db", db}, func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
	}()
	defer func() { cancel(); <-done }()
	code, out, errs := cli(t, "jobs", "wait", "--db", db, m[1])
	require.Equal(t, 0, code, errs)
	return m[1], out
}

// jobs wait names a cancelled job as cancelled, not as failed.
func TestJobsWaitSaysCancelled(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	code, out, errs := cli(t, "import", "--db", db, "--corpus", "a", "--async", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	m := regexp.MustCompile(`job (\d+) queued`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	code, _, errs = cli(t, "jobs", "cancel", "--db", db, m[1])
	require.Equal(t, 0, code, errs)
	code, out, errs = cli(t, "jobs", "wait", "--db", db, m[1])
	assert.NotEqual(t, 0, code)
	assert.Contains(t, out, "job "+m[1]+" (import): cancelled")
	assert.Contains(t, errs, "not every job succeeded (cancelled: "+m[1]+")")
}

// experiment --kind residual-risk prints its figures as a table, or every
// figure as JSON under the names scripts read; --folds is its own.
func TestExperimentResidualRisk(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	config := filepath.Join(dir, "quick.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"training": {"max_iterations": 2}}`), 0o644))
	code, out, errs := cli(t, "experiment", "--db", db, "--kind", "residual-risk", "--corpus", "a", "--folds", "2", "--config", config, "--async")
	require.Equal(t, 0, code, errs)
	id, out := waitWithWorker(t, db, "experiment", out)
	assert.Contains(t, out, "job "+id+" (experiment): succeeded\n")
	assert.Contains(t, out, "| parrot attack recall, precision |")
	assert.Contains(t, out, "Carrell et al. 2019")

	code, out, errs = cli(t, "experiment", "--db", db, "--kind", "residual-risk", "--corpus", "a", "--folds", "2", "--seed", "2", "--config", config, "--json")
	require.Equal(t, 0, code, errs)
	var whole struct{ Result map[string]any } // --json prints the job whole
	require.NoError(t, json.Unmarshal([]byte(out), &whole), out)
	res := whole.Result
	assert.Equal(t, "residual-risk", res["kind"])
	assert.Equal(t, "residual-cv2-seed2", res["system"])
	for _, key := range []string{"residual", "parrot", "distinguishability", "released"} {
		assert.Contains(t, res, key)
	}

	code, _, errs = cli(t, "experiment", "--db", db, "--kind", "cv", "--corpus", "a", "--folds", "2")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "--folds: only the residual-risk experiment reads it")

	// --system scores a kept set as it stands, under another policy.
	policy := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"surnames": "frequency"}`), 0o644))
	code, out, errs = cli(t, "experiment", "--db", db, "--kind", "residual-risk", "--corpus", "a", "--system", "residual-cv2-seed2", "--seed", "2",
		"--policy", policy, "--config", config, "--json")
	require.Equal(t, 0, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &whole), out)
	assert.Equal(t, "residual-cv2-seed2", whole.Result["system"])
	assert.Equal(t, res["residual"].(map[string]any)["leaked"], whole.Result["residual"].(map[string]any)["leaked"])
	code, _, errs = cli(t, "experiment", "--db", db, "--kind", "residual-risk", "--corpus", "a", "--system", "residual-cv2-seed2", "--folds", "2")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errs, "--system: the annotation set is scored as it stands")
}
