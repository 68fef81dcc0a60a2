package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent"
	"deidcorpus/ent/artifact"
	"deidcorpus/ent/job"
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

// TestJobSurvivesSIGKILL starts the real server, starts a resynthesis, kills
// the server with SIGKILL half-way, starts it again, and checks that the job
// finishes with the same output as an uninterrupted run.
func TestJobSurvivesSIGKILL(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	runBin(t, "synth", "--patients", "1500", "--seed", "4", "--out", notes)
	killed := filepath.Join(dir, "killed.db")
	runBin(t, "import", "--db", killed, "--corpus", "notes", "--tagset", "i2b2-2014", notes)
	calm := filepath.Join(dir, "calm.db")
	runBin(t, "import", "--db", calm, "--corpus", "notes", "--tagset", "i2b2-2014", notes)
	// The same seed gives the same output under the same key: both
	// databases get one key file (each keeps it beside itself).
	shared := filepath.Join(dir, "shared.key")
	runBin(t, "keys", "init", "--key-file", shared)
	key, err := os.ReadFile(shared)
	require.NoError(t, err)
	for _, db := range []string{killed, calm} {
		require.NoError(t, os.WriteFile(db+".key", key, 0o600))
	}

	serving := regexp.MustCompile(`serving on`)
	serve := []string{"serve", "--db", killed, "--addr", "127.0.0.1:0", "--stale-after", "5s"}
	srv := startBin(t, serving, serve...)
	out := runBin(t, "resynth", "--db", killed, "--corpus", "notes", "--out", "surrogate", "--seed", "9", "--async")
	m := regexp.MustCompile(`job (\d+) queued`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	id, _ := strconv.Atoi(m[1])

	st, err := store.Open(context.Background(), killed)
	require.NoError(t, err)
	defer st.Close()
	require.Eventually(t, func() bool { return jobState(t, st, id).Status == job.StatusRunning }, 30*time.Second, 20*time.Millisecond)
	time.Sleep(time.Second)
	require.NoError(t, srv.Process.Signal(syscall.SIGKILL))
	srv.Wait()
	before := jobState(t, st, id)
	require.Equal(t, job.StatusRunning, before.Status, "the job must still be running when the server dies (it finished too fast to test)")
	_, err = st.CorpusByName(context.Background(), "surrogate")
	require.Error(t, err, "no partial output after the kill")

	startBin(t, serving, serve...)
	require.Eventually(t, func() bool { return jobState(t, st, id).Status == job.StatusSucceeded }, 120*time.Second, 100*time.Millisecond,
		"the job did not finish after the restart")
	after := jobState(t, st, id)
	// At least the killed attempt and the one that finished; a long write
	// transaction can delay heartbeats enough for one more requeue.
	assert.GreaterOrEqual(t, after.Attempts, 2)

	runBin(t, "resynth", "--db", calm, "--corpus", "notes", "--out", "surrogate", "--seed", "9")
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	runBin(t, "export", "--db", killed, "--corpus", "surrogate", "--out", a)
	runBin(t, "export", "--db", calm, "--corpus", "surrogate", "--out", b)
	fa, err := formats.ReadPaths(a)
	require.NoError(t, err)
	fb, err := formats.ReadPaths(b)
	require.NoError(t, err)
	require.Equal(t, len(fa), len(fb))
	for i := range fa {
		require.Equal(t, fa[i].Name, fb[i].Name)
		require.True(t, bytes.Equal(fa[i].Data, fb[i].Data), "%s differs from the uninterrupted run", fa[i].Name)
	}
}

// TestTwoWorkersSharePostgresQueue runs two worker processes on one
// PostgreSQL database: 200 jobs each finish once, and both workers work.
func TestTwoWorkersSharePostgresQueue(t *testing.T) {
	dsn := storetest.DSN(t, storetest.Postgres)
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
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
