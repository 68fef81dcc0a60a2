package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent"
	"deidcorpus/ent/artifact"
	"deidcorpus/ent/job"
	"deidcorpus/internal/keys"
	"deidcorpus/internal/shared"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds the real deidcorpus command once for the process tests.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("process tests build and run the binary; skipped with -short")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "deidcorpus-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "deidcorpus")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// runBin runs the binary to completion and returns its stdout.
func runBin(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(binary(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "deidcorpus %v: %s", args, errb.String())
	return out.String()
}

// startBin starts a long-running subcommand (serve, worker) and waits until
// it is up; the process is killed when the test ends.
func startBin(t *testing.T, ready *regexp.Regexp, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	up := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if !sent && ready.MatchString(sc.Text()) {
				up <- true
				sent = true
			}
		}
		if !sent {
			up <- false
		}
	}()
	select {
	case ok := <-up:
		require.True(t, ok, "deidcorpus %v exited before it was ready", args)
	case <-time.After(60 * time.Second):
		t.Fatalf("deidcorpus %v did not start", args)
	}
	return cmd
}

func jobState(t *testing.T, st *store.Store, id int) *ent.Job {
	t.Helper()
	j, err := st.Client.Job.Get(context.Background(), id)
	require.NoError(t, err)
	return j
}

// TestJobsResumeAfterSIGKILL kills the worker process that runs a
// corpus-sized job (resynthesis; tagging with a stored model, split into
// parts) once some of its batches have committed, starts a worker again, and
// checks that the job finishes with output byte-identical to an
// uninterrupted run's, on SQLite and PostgreSQL. About two minutes: .ci/run
// runs it in a step of its own.
func TestJobsResumeAfterSIGKILL(t *testing.T) {
	shared.Long(t, "kill a worker in the middle of corpus-sized jobs and resume them")
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	runBin(t, "synth", "--patients", "1500", "--seed", "4", "--out", notes)
	train := filepath.Join(dir, "train")
	runBin(t, "synth", "--patients", "40", "--seed", "1", "--out", train)
	// One key for every database: the same seed gives the same surrogates
	// under the same key.
	keyFile := filepath.Join(dir, "shared.key")
	runBin(t, "keys", "init", "--key-file", keyFile)
	t.Setenv("DEIDCORPUS_KEY_FILE", keyFile)
	config := filepath.Join(dir, "tagger.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"training": {"max_iterations": 10}}`), 0o644))

	for _, b := range []storetest.Backend{storetest.SQLite, storetest.Postgres} {
		t.Run(string(b), func(t *testing.T) {
			killed, calm := storetest.DSN(t, b), storetest.DSN(t, b)
			for _, db := range []string{killed, calm} {
				runBin(t, "import", "--db", db, "--corpus", "notes", "--tagset", "i2b2-2014", "--split", "test", notes)
				runBin(t, "import", "--db", db, "--corpus", "train", "--tagset", "i2b2-2014", "--split", "train", train)
				runBin(t, "train", "--db", db, "--corpus", "train", "--model", "crf1", "--config", config)
			}
			st, err := store.Open(context.Background(), killed)
			require.NoError(t, err)
			defer st.Close()
			// The uninterrupted run of the resynthesis is in the other
			// database; that of the tagging in the same one, into another
			// set, so that both use the very same model (training through
			// the database is not reproducible to the bit yet).
			for _, c := range []struct {
				name                  string
				job, calmJob          []string
				export, calmExport    []string // the job's output
				calmInTheSameDatabase bool
			}{
				{name: "resynth", job: []string{"resynth", "--corpus", "notes", "--out", "surrogate", "--seed", "9"},
					export: []string{"export", "--corpus", "surrogate"}},
				{name: "tag", job: []string{"tag", "--model", "crf1", "--corpus", "notes"},
					calmJob:               []string{"tag", "--model", "crf1", "--corpus", "notes", "--set", "calm"},
					export:                []string{"export", "--corpus", "notes", "--set", "system-crf1", "--format", "jsonl"},
					calmExport:            []string{"export", "--corpus", "notes", "--set", "calm", "--format", "jsonl"},
					calmInTheSameDatabase: true},
			} {
				calmDB := calm
				if c.calmInTheSameDatabase {
					calmDB = killed
				}
				if c.calmJob == nil {
					c.calmJob, c.calmExport = c.job, c.export
				}
				t.Run(c.name, func(t *testing.T) {
					worker := []string{"worker", "--db", killed, "--concurrency", "1", "--stale-after", "3s"}
					running := regexp.MustCompile(`worker running`)
					w := startBin(t, running, worker...)
					out := runBin(t, append(c.job, "--db", killed, "--async")...)
					m := regexp.MustCompile(`job (\d+) queued`).FindStringSubmatch(out)
					require.NotNil(t, m, out)
					id, _ := strconv.Atoi(m[1])
					// Killed once some output has committed (a part's
					// progress, a batch of the resynthesis's second
					// pass) and before the end.
					committed := func() bool {
						j := jobState(t, st, id)
						if j.Kind == "tag" {
							ps, err := st.ChildJobs(context.Background(), id)
							require.NoError(t, err)
							for _, p := range ps {
								if p.ProgressDone > 0 {
									return true
								}
							}
							return false
						}
						// The second pass reports after each batch it saved.
						return strings.HasPrefix(j.Message, "replacing the PHI")
					}
					require.Eventually(t, committed, 3*time.Minute, 5*time.Millisecond)
					require.NoError(t, w.Process.Signal(syscall.SIGKILL))
					w.Wait()
					before := jobState(t, st, id)
					require.Equal(t, job.StatusRunning, before.Status, "the job finished before the kill: too small a corpus to test")

					startBin(t, running, worker...)
					require.Eventually(t, func() bool { return jobState(t, st, id).Status == job.StatusSucceeded }, 5*time.Minute, 100*time.Millisecond,
						"the job did not finish after the restart: %+v", jobState(t, st, id))
					after := jobState(t, st, id)
					calmOut := runBin(t, append(c.calmJob, "--db", calmDB)...)
					a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
					runBin(t, append(c.export, "--db", killed, "--out", a)...)
					runBin(t, append(c.calmExport, "--db", calmDB, "--out", b)...)
					fa, err := formats.ReadPaths(a)
					require.NoError(t, err)
					fb, err := formats.ReadPaths(b)
					require.NoError(t, err)
					require.Equal(t, len(fa), len(fb))
					for i := range fa {
						require.Equal(t, fa[i].Name, fb[i].Name)
						if !bytes.Equal(fa[i].Data, fb[i].Data) {
							la, lb := bytes.Split(fa[i].Data, []byte("\n")), bytes.Split(fb[i].Data, []byte("\n"))
							for k := 0; k < min(len(la), len(lb)); k++ {
								if !bytes.Equal(la[k], lb[k]) {
									ta, tb := la[k][max(0, len(la[k])-700):], lb[k][max(0, len(lb[k])-700):]
									t.Fatalf("%s differs from the uninterrupted run at line %d, which ends:\n%s\nuninterrupted:\n%s", fa[i].Name, k+1, ta, tb)
								}
							}
							t.Fatalf("%s differs from the uninterrupted run: %d lines against %d", fa[i].Name, len(la), len(lb))
						}
					}
					// Both report every document, also those the killed worker wrote.
					assert.Contains(t, calmOut, fmt.Sprintf(" %v documents", number(after.Result["documents"])))
				})
			}
		})
	}
}

// TestTwoWorkersSharePostgresQueue runs two worker processes on one
// PostgreSQL database: 200 jobs each finish once, and both workers work.
func TestTwoWorkersSharePostgresQueue(t *testing.T) {
	dsn := storetest.DSN(t, storetest.Postgres)
	ctx := context.Background()
	// Original corpora are sealed under the key ring: the test's store and
	// both workers share one key, as a deployment's processes do.
	t.Setenv("DEIDCORPUS_KEY", base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, keys.KeySize)))
	st, err := store.Open(ctx, dsn, storetest.SharedKey())
	require.NoError(t, err)
	defer st.Close()
	files, err := formats.ReadPaths("../../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, files)
	require.NoError(t, err)

	running := regexp.MustCompile(`worker running`)
	startBin(t, running, "worker", "--db", dsn, "--concurrency", "2")
	startBin(t, running, "worker", "--db", dsn, "--concurrency", "2")

	m, err := jobs.New(ctx, st, jobs.Handlers(), jobs.Options{})
	require.NoError(t, err)
	ids := make([]int, 200)
	for i := range ids {
		j, err := m.Enqueue(ctx, jobs.ExportParams{Corpus: "c", Set: "gold", Format: "i2b2"}, "local:test", nil)
		require.NoError(t, err)
		ids[i] = j.ID
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	done, err := m.Wait(wctx, ids)
	require.NoError(t, err)
	perWorker := map[string]int{}
	for _, j := range done {
		require.Equal(t, job.StatusSucceeded, j.Status, j.Error)
		perWorker[j.Worker]++
	}
	n, err := st.Client.Artifact.Query().Where(artifact.JobIDIn(ids...)).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 200, n, "every job wrote its result exactly once")
	require.Len(t, perWorker, 2, "both workers took jobs: %v", perWorker)
	for w, k := range perWorker {
		assert.GreaterOrEqual(t, k, 20, "worker %s did only %d jobs", w, k)
	}
}

// TestImportKilledOrInterrupted: an import into a new corpus that is killed
// once some batches have committed leaves a corpus that says its import did
// not finish; importing again without replace is refused with the way out,
// and with replace completes it. One interrupted (Ctrl-C) says so, exits
// 130 and leaves no corpus behind.
func TestImportKilledOrInterrupted(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	runBin(t, "synth", "--patients", "3000", "--seed", "5", "--out", notes)
	entries, err := os.ReadDir(notes)
	require.NoError(t, err)
	total := len(entries)
	// committed counts the documents in the database, read beside the
	// import as any reader would.
	committed := func(db string) int {
		conn, err := sql.Open("sqlite", db)
		require.NoError(t, err)
		defer conn.Close()
		var n int
		if err := conn.QueryRow(`SELECT COUNT(*) FROM documents`).Scan(&n); err != nil {
			return 0 // not made yet
		}
		return n
	}
	start := func(db, corpus string) (*exec.Cmd, *bytes.Buffer) {
		before := committed(db)
		cmd := exec.Command(binary(t), "import", "--db", db, "--corpus", corpus, "--tagset", "i2b2-2014", notes)
		errb := &bytes.Buffer{}
		cmd.Stderr = errb
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill() })
		require.Eventually(t, func() bool { return committed(db) > before }, time.Minute, 20*time.Millisecond, "no batch committed")
		return cmd, errb
	}
	bin := func(args ...string) (int, string) {
		var out bytes.Buffer
		cmd := exec.Command(binary(t), args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), out.String()
		}
		require.NoError(t, err)
		return 0, out.String()
	}

	killed := filepath.Join(dir, "killed.db")
	cmd, _ := start(killed, "notes")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	require.Less(t, committed(killed), total, "killed before the last batch")
	assert.Contains(t, runBin(t, "corpora", "--db", killed), "import (unfinished)")
	code, out := bin("import", "--db", killed, "--corpus", "notes", "--tagset", "i2b2-2014", notes)
	assert.Equal(t, 4, code, out)
	assert.Contains(t, out, `corpus "notes" holds an import that has not finished`)
	assert.Contains(t, out, "deidcorpus corpora delete notes")
	code, out = bin("release", "create", "--db", killed, "--corpus", "notes", "--name", "n", "--version", "1.0.0")
	assert.Equal(t, 4, code, out)
	assert.Contains(t, out, "holds an import that has not finished")
	out = runBin(t, "import", "--db", killed, "--corpus", "notes", "--tagset", "i2b2-2014", "--replace", notes)
	assert.Contains(t, out, fmt.Sprintf("imported %d documents", total))
	assert.Equal(t, total, committed(killed))
	assert.NotContains(t, runBin(t, "corpora", "--db", killed), "unfinished")

	interrupted := filepath.Join(dir, "interrupted.db")
	runBin(t, "import", "--db", interrupted, "--corpus", "other", "--tagset", "i2b2-2014", filepath.Join(notes, entries[0].Name()))
	cmd, errb := start(interrupted, "notes")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 130, exit.ExitCode())
	assert.Equal(t, "deidcorpus import: interrupted\n", errb.String())
	list := runBin(t, "corpora", "--db", interrupted)
	assert.NotContains(t, list, "notes", "the interrupted import took its new corpus away")
	assert.Equal(t, 1, committed(interrupted))

	// And the corpus is deleted from the command line.
	out = runBin(t, "corpora", "delete", "--db", killed, "notes")
	assert.Equal(t, "deleted corpus \"notes\"\n", out)
	assert.Zero(t, committed(killed))
}
