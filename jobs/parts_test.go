package jobs_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// squares is a split job: part i squares i; the job sums the squares. A part
// waits (up to a deadline) until another part runs beside it when together
// is set, so a test can show that two workers share one job.
type squares struct {
	mu       sync.Mutex
	running  int
	together chan struct{} // closed when two parts ran at once
	ran      map[int]int   // part index -> times its Part ran to the end
	fail     int           // the index of a part that fails for good; -1 for none
	block    chan struct{} // when set, parts wait for it (or cancellation)
}

func newSquares() *squares {
	return &squares{together: make(chan struct{}), ran: map[int]int{}, fail: -1}
}

func (s *squares) split(parts int, waitForCompany bool) jobs.Split {
	return jobs.Split{
		Plan: func(ctx context.Context, run *jobs.Run) ([]map[string]any, error) {
			out := make([]map[string]any, parts)
			for i := range out {
				out[i] = map[string]any{"n": i}
			}
			return out, nil
		},
		Part: func(ctx context.Context, run *jobs.Run, parent *ent.Job, part map[string]any) (jobs.Result, error) {
			n := int(part["n"].(float64))
			if n == s.fail {
				return nil, apperr.New(apperr.Invalid, "part %d is bad", n)
			}
			s.mu.Lock()
			s.running++
			if s.running == 2 {
				select {
				case <-s.together:
				default:
					close(s.together)
				}
			}
			s.mu.Unlock()
			defer func() {
				s.mu.Lock()
				s.running--
				s.mu.Unlock()
			}()
			if waitForCompany {
				select {
				case <-s.together:
				case <-time.After(30 * time.Second): // a deadline, not a speed bar: the test then fails below
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			if s.block != nil {
				select {
				case <-s.block:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			run.Progress(1, 1, "squared")
			s.mu.Lock()
			s.ran[n]++
			s.mu.Unlock()
			return jobs.Result{"square": n * n}, nil
		},
		Finish: func(ctx context.Context, run *jobs.Run, parts []jobs.Result) (jobs.Result, error) {
			sum := 0
			for _, p := range parts {
				sum += int(p["square"].(float64))
			}
			return jobs.Result{"sum": sum, "parts": len(parts)}, nil
		},
	}
}

func splitManager(t *testing.T, st *store.Store, s jobs.Split, concurrency int) *jobs.Manager {
	t.Helper()
	return newManager(t, st, nil, jobs.Options{Concurrency: concurrency, Splits: map[string]jobs.Split{"squares": s}})
}

func partsOf(t *testing.T, st *store.Store, parent int) []*ent.Job {
	t.Helper()
	ps, err := st.ChildJobs(context.Background(), parent)
	require.NoError(t, err)
	return ps
}

// TestSplitJobSharedByTwoWorkers runs a split job with two managers (two
// worker processes' worth) of one worker each on one database: both work its
// parts at once, every part runs once, and the job adds their results.
func TestSplitJobSharedByTwoWorkers(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b)
			sq := newSquares()
			a := splitManager(t, st, sq.split(6, true), 1)
			splitManager(t, st, sq.split(6, true), 1)
			j, err := a.Enqueue(ctx, testJob{"squares"}, "", nil)
			require.NoError(t, err)
			got := wait(t, a, j.ID)[0]
			require.Equal(t, job.StatusSucceeded, got.Status, got.Error)
			assert.Equal(t, float64(0+1+4+9+16+25), got.Result["sum"])
			select {
			case <-sq.together:
			default:
				t.Fatal("no two parts ever ran at once: the second worker took no part")
			}
			assert.Equal(t, map[int]int{0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1}, sq.ran, "every part ran once")
			parts := partsOf(t, st, j.ID)
			require.Len(t, parts, 6)
			for _, p := range parts {
				assert.Equal(t, job.StatusSucceeded, p.Status)
				assert.Equal(t, "part", p.Kind)
				assert.Equal(t, 1, p.Attempts)
			}
			assert.Equal(t, 6, got.ProgressDone, "the job's progress adds its parts'")
		})
	}
}

// TestSplitJobOnOneWorker: a single worker (the command line's) works the
// parts of the job it runs itself, instead of waiting for a worker that will
// never come.
func TestSplitJobOnOneWorker(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	sq := newSquares()
	m := splitManager(t, st, sq.split(4, false), 1)
	j, err := m.Enqueue(ctx, testJob{"squares"}, "", nil)
	require.NoError(t, err)
	got := wait(t, m, j.ID)[0]
	require.Equal(t, job.StatusSucceeded, got.Status, got.Error)
	assert.Equal(t, float64(0+1+4+9), got.Result["sum"])
	assert.Len(t, sq.ran, 4)
}

// TestSplitJobFailsWithItsPart: a part that fails for good fails the job,
// naming the part, and the parts not yet done are cancelled.
func TestSplitJobFailsWithItsPart(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	sq := newSquares()
	sq.fail = 0
	sq.block = make(chan struct{}) // the other parts never finish on their own
	m := splitManager(t, st, sq.split(5, false), 2)
	j, err := m.Enqueue(ctx, testJob{"squares"}, "", nil)
	require.NoError(t, err)
	got := wait(t, m, j.ID)[0]
	require.Equal(t, job.StatusFailed, got.Status)
	assert.Contains(t, got.Error, "part 1 of 5")
	assert.Contains(t, got.Error, "part 0 is bad")
	require.Eventually(t, func() bool {
		for _, p := range partsOf(t, st, j.ID) {
			if !(p.Status == job.StatusFailed || p.Status == job.StatusCancelled) {
				return false
			}
		}
		return true
	}, time.Minute, 20*time.Millisecond, "every other part is cancelled")
	assert.Empty(t, sq.ran)
}

// TestCancelSplitJobCancelsItsParts: cancelling the job stops its parts.
func TestCancelSplitJobCancelsItsParts(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	sq := newSquares()
	sq.block = make(chan struct{})
	m := splitManager(t, st, sq.split(3, false), 2)
	j, err := m.Enqueue(ctx, testJob{"squares"}, "", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		for _, p := range partsOf(t, st, j.ID) {
			if p.Status == job.StatusRunning {
				return true
			}
		}
		return false
	}, time.Minute, 10*time.Millisecond)
	_, err = m.Cancel(ctx, j.ID)
	require.NoError(t, err)
	got := wait(t, m, j.ID)[0]
	assert.Equal(t, job.StatusCancelled, got.Status)
	for _, p := range partsOf(t, st, j.ID) {
		assert.Equal(t, job.StatusCancelled, wait(t, m, p.ID)[0].Status, "part %d", p.ID)
	}
	assert.Empty(t, sq.ran)
}
