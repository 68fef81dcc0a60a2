package jobs_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// A job whose own write holds SQLite's write lock for many heartbeat and
// staleness periods is alive: neither this process's reaper nor another
// process's (a second store on the same file, as a `worker` beside a
// `serve`) requeues it, requests keep being answered meanwhile, and the job
// reports what it wrote.
func TestLongWriteDoesNotKillLiveJob(t *testing.T) {
	ctx := auth.System(context.Background())
	st := storetest.Open(t, storetest.SQLite)
	_, err := st.DB.ExecContext(ctx, `CREATE TABLE filler (id INTEGER PRIMARY KEY, payload TEXT)`)
	require.NoError(t, err)

	const stale = 300 * time.Millisecond
	var runs atomic.Int32
	started, proceed := make(chan struct{}), make(chan struct{})
	holding := make(chan struct{})
	release := make(chan struct{})
	long := func(ctx context.Context, run *jobs.Run) (jobs.Result, error) {
		if runs.Add(1) == 1 {
			close(started)
			<-proceed
		}
		// One long transaction, as an import or resynthesis of a big corpus
		// writes: the write lock is held until the test says so.
		tx, err := run.Store.DB.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		defer tx.Rollback()
		n := 0
		write := func() error {
			_, err := tx.ExecContext(ctx, `INSERT INTO filler (payload) VALUES (?)`, "row")
			n++
			return err
		}
		if err := write(); err != nil {
			return nil, err
		}
		close(holding)
		for done := false; !done; {
			select {
			case <-release:
				done = true
			case <-time.After(10 * time.Millisecond):
			}
			if err := write(); err != nil {
				return nil, err
			}
		}
		if err := tx.Commit(); err != nil {
			return nil, err
		}
		return jobs.Result{"documents": n}, nil
	}
	handlers := map[string]jobs.Handler{"long": long}
	m := newManager(t, st, handlers, jobs.Options{HeartbeatEvery: 50 * time.Millisecond, StaleAfter: stale})
	j, err := m.Enqueue(ctx, testJob{"long"}, "", nil)
	require.NoError(t, err)
	<-started

	// Another process on the same database, with a reaper of its own.
	other, err := store.Open(ctx, st.DSN)
	require.NoError(t, err)
	// Cleanups run last first: the manager stops before its store closes
	// (closed first, its stop waited forever on the closed database).
	t.Cleanup(func() { other.Close() })
	newManager(t, other, handlers, jobs.Options{HeartbeatEvery: 50 * time.Millisecond, StaleAfter: stale})
	close(proceed)
	<-holding

	// Requests meanwhile: reads are answered from the read pool while the
	// lock is held; a write (an audit record) waits its turn and succeeds.
	audited := make(chan error, 1)
	go func() {
		audited <- st.Audit(ctx, store.AuditRecord{Action: "read", Target: "document", IDs: []string{"1"}})
	}()
	for i := 0; i < 20; i++ {
		_, err := st.Client.Job.Get(ctx, j.ID)
		require.NoError(t, err)
		_, err = other.Client.Job.Query().All(ctx)
		require.NoError(t, err)
		time.Sleep(stale / 4)
	}
	close(release)

	got := wait(t, m, j.ID)[0]
	assert.Equal(t, job.StatusSucceeded, got.Status, got.Message)
	assert.Equal(t, *j.RiverJobID, *got.RiverJobID, "never requeued (a requeue is a new queue entry)")
	assert.Equal(t, 1, got.Attempts)
	assert.Equal(t, int32(1), runs.Load())
	assert.Greater(t, got.Result["documents"], float64(1), "the job reports what it wrote")
	require.NoError(t, <-audited)
	n, err := st.VerifyAudit(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}
