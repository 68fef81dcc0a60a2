// Package jobs runs deidcorpus's long operations (exports, evaluations,
// resynthesis, training, tagging, ...) in the background on River, in the
// project's own database. A Job row is what users see (status, progress,
// result, error); River's tables hold the queue. Every job is enqueued in the
// same transaction as the write that asks for it, survives a crash of its
// worker (a stale heartbeat requeues it), and can be cancelled.
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"sync"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/job"
	"deidcorpus/internal/jsonmap"
	"deidcorpus/pipeline/tagger"
	"deidcorpus/store"
)

// Handler does the work of one kind of job. It reports progress through run
// and returns references to what it produced. It must be idempotent: a job
// whose worker died is run again from the start, so a handler writes its
// output in one transaction and, when it finds the output of an earlier
// attempt, returns that instead of writing it twice.
type Handler func(ctx context.Context, run *Run) (Result, error)

// Result references what a job produced (ids of corpora, annotation sets,
// evaluations, artifacts, ...) and small summaries.
type Result map[string]any

// CheckFailed is what a handler returns, beside its result, when it wrote its
// output and the output failed its check: the job ends check_failed, not
// succeeded, with the result and this error's message, and is not tried again
// (its output is saved; a new run is a new job).
type CheckFailed struct{ Message string }

func (e *CheckFailed) Error() string { return e.Message }

// Options configure a Manager.
type Options struct {
	// Work runs workers in this process; without it the manager only enqueues
	// (the CLI's --async, a server started with --no-workers).
	Work bool
	// Concurrency is the number of jobs this process runs at once (default 2).
	Concurrency int
	// HeartbeatEvery and StaleAfter tune crash detection: a running job whose
	// heartbeat is older than StaleAfter is requeued (defaults 500ms and 10s).
	HeartbeatEvery time.Duration
	StaleAfter     time.Duration
	// MaxAttempts bounds retries of failing jobs (default 3).
	MaxAttempts int
	Logger      *slog.Logger
	// External bounds the calls to external taggers.
	External ExternalOptions
	// Splits are the kinds whose jobs are cut into parts that every worker
	// takes (default Splits()); they join the handlers.
	Splits map[string]Split
}

// Manager enqueues, runs, cancels and watches jobs.
type Manager struct {
	store    *store.Store
	opt      Options
	logger   *slog.Logger
	queue    queue
	handlers map[string]Handler
	splits   map[string]Split
	worker   string
	external *ExternalClient

	lastModel struct { // the built-in model a tag job used last (modelTagger)
		sync.Mutex
		id       int
		artifact []byte
		model    *tagger.Model
	}

	running        sync.Map  // ids of the jobs this process runs
	writeBlockedAt time.Time // the reaper's: when it last found the write path blocked

	stopOnce sync.Once
	stop     chan struct{}
	done     sync.WaitGroup
}

// New opens the queue on the store's database (creating River's tables when
// missing). handlers maps job kinds to their work.
func New(ctx context.Context, st *store.Store, handlers map[string]Handler, opt Options) (*Manager, error) {
	if opt.Concurrency <= 0 {
		opt.Concurrency = 2
	}
	if opt.HeartbeatEvery <= 0 {
		opt.HeartbeatEvery = 500 * time.Millisecond
	}
	if opt.StaleAfter <= 0 {
		opt.StaleAfter = 10 * time.Second
	}
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = 3
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Splits == nil {
		opt.Splits = Splits()
	}
	host, _ := os.Hostname()
	m := &Manager{
		store: st, opt: opt, logger: opt.Logger, handlers: maps.Clone(handlers), splits: opt.Splits,
		worker: fmt.Sprintf("%s:%d", host, os.Getpid()), stop: make(chan struct{}),
		external: newExternalClient(opt.External, opt.Logger),
	}
	for kind, s := range opt.Splits {
		// A kind with a handler of its own splits the jobs that ask for it
		// (resynthesize's parts).
		if _, own := m.handlers[kind]; !own {
			m.handlers[kind] = func(ctx context.Context, run *Run) (Result, error) { return m.runSplit(ctx, run, s) }
		}
	}
	q, err := newQueue(auth.System(ctx), st, m)
	if err != nil {
		return nil, err
	}
	m.queue = q
	return m, nil
}

// Start begins working jobs (when Options.Work) and watching for jobs whose
// worker died. Workers act as the process, whoever started them (a CLI
// command with --token): each job then runs as its own creator.
func (m *Manager) Start(ctx context.Context) error {
	if !m.opt.Work {
		return nil
	}
	ctx = auth.System(ctx)
	if err := m.queue.start(ctx); err != nil {
		return err
	}
	m.done.Add(1)
	go m.reapLoop()
	return nil
}

// Stop stops working: running jobs get grace to finish, then their contexts
// are cancelled and they are requeued for another worker.
func (m *Manager) Stop(ctx context.Context) error {
	m.stopOnce.Do(func() { close(m.stop) })
	m.done.Wait()
	if !m.opt.Work {
		return nil
	}
	return m.queue.stop(ctx)
}

// Enqueue records a job with its parameters and queues it, in one
// transaction with whatever prepare writes (prepare may be nil; params are
// encoded after it runs). by names who asked.
func (m *Manager) Enqueue(ctx context.Context, params Params, by string, prepare func(ctx context.Context, tx *store.JobTx) error) (*ent.Job, error) {
	js, err := m.enqueue(ctx, []Params{params}, by, prepare)
	if err != nil {
		return nil, err
	}
	return js[0], nil
}

// enqueue records and queues jobs in one transaction.
func (m *Manager) enqueue(ctx context.Context, params []Params, by string, prepare func(ctx context.Context, tx *store.JobTx) error) ([]*ent.Job, error) {
	for _, p := range params {
		if _, ok := m.handlers[p.JobKind()]; !ok {
			return nil, apperr.New(apperr.Invalid, "unknown job kind %q", p.JobKind())
		}
		if err := validate(p); err != nil {
			return nil, err
		}
		if pc, ok := p.(precondition); ok {
			if err := pc.precondition(ctx, m.store); err != nil {
				return nil, err
			}
		}
	}
	js, err := m.queue.enqueueTx(ctx, func(ctx context.Context, tx *store.JobTx) ([]*ent.Job, error) {
		if prepare != nil {
			if err := prepare(ctx, tx); err != nil {
				return nil, err
			}
		}
		js := make([]*ent.Job, len(params))
		for i, params := range params {
			// Encoded after prepare, which may fill in parameters (an input's id).
			p, err := jsonmap.Of(params)
			if err != nil {
				return nil, apperr.New(apperr.Invalid, "job parameters: %v", err)
			}
			if js[i], err = tx.CreateJob(ctx, params.JobKind(), p, by); err != nil {
				return nil, err
			}
		}
		return js, nil
	})
	if err != nil {
		return nil, err
	}
	for _, j := range js {
		m.logger.Info("job queued", "job", j.ID, "kind", j.Kind)
	}
	// The rows as queued: a worker may have taken them up already (a Job
	// has no edges, so a row needs no client of its own).
	return js, nil
}

// Get returns a job.
func (m *Manager) Get(ctx context.Context, id int) (*ent.Job, error) {
	return m.store.Job(ctx, id)
}

// Cancel asks a job to stop. A queued job is cancelled at once; a running one
// stops within about a heartbeat, wherever its worker runs, and leaves no
// partial output. Cancelling a finished job is an error.
func (m *Manager) Cancel(ctx context.Context, id int) (*ent.Job, error) {
	j, err := m.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if finished(j.Status) {
		return nil, apperr.New(apperr.Conflict, "job %d has already %s", id, j.Status)
	}
	asked, err := m.store.RequestJobCancel(ctx, id)
	if err != nil {
		return nil, err
	}
	if !asked {
		return m.Get(ctx, id) // it finished meanwhile
	}
	// A queued job never reaches a worker: mark it now, and take it off the
	// queue. A running one is stopped by its own heartbeat, which sees the
	// request; River's cancellation is not used for it, since River would
	// cancel the work's context without saying why.
	queued, err := m.store.CancelQueuedJob(ctx, id)
	if err != nil {
		return nil, err
	}
	if queued && j.RiverJobID != nil {
		if err := m.queue.cancel(ctx, *j.RiverJobID); err != nil {
			m.logger.Warn("cancel queue entry", "job", id, "err", err)
		}
	}
	return m.Get(ctx, id)
}

// Retry queues a failed or cancelled job again, keeping its id and parameters.
func (m *Manager) Retry(ctx context.Context, id int) (*ent.Job, error) {
	j, err := m.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if j.Status != job.StatusFailed && j.Status != job.StatusCancelled {
		return nil, apperr.New(apperr.Conflict, "job %d is %s; only failed or cancelled jobs can be retried", id, j.Status)
	}
	_, err = m.queue.enqueueTx(ctx, func(ctx context.Context, tx *store.JobTx) ([]*ent.Job, error) {
		j, ok, err := tx.Retry(ctx, id)
		if err == nil && !ok {
			err = apperr.New(apperr.Conflict, "job %d changed state meanwhile", id)
		}
		return []*ent.Job{j}, err
	})
	if err != nil {
		return nil, err
	}
	return m.Get(ctx, id)
}

// Watch streams a job's state: the current state at once, then every change,
// until the job finishes or ctx ends. It polls the database, so it sees jobs
// run by workers in other processes.
func (m *Manager) Watch(ctx context.Context, id int) (<-chan *ent.Job, error) {
	first, err := m.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	ch := make(chan *ent.Job, 1)
	go func() {
		defer close(ch)
		last := first
		select {
		case ch <- first:
		case <-ctx.Done():
			return
		}
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for !finished(last.Status) {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			j, err := m.store.Job(ctx, id)
			if err != nil {
				return
			}
			if changed(last, j) {
				select {
				case ch <- j:
				case <-ctx.Done():
					return
				}
				last = j
			}
		}
	}()
	return ch, nil
}

// Wait blocks until every given job has finished, and returns them.
func (m *Manager) Wait(ctx context.Context, ids []int) ([]*ent.Job, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		js, err := m.store.JobsByID(ctx, ids)
		if err != nil {
			return nil, err
		}
		if len(js) != len(ids) {
			return nil, apperr.New(apperr.NotFound, "some of jobs %v do not exist", ids)
		}
		all := true
		for _, j := range js {
			all = all && finished(j.Status)
		}
		if all {
			return js, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

func finished(s job.Status) bool {
	return s == job.StatusSucceeded || s == job.StatusFailed || s == job.StatusCancelled || s == job.StatusCheckFailed
}

func changed(a, b *ent.Job) bool {
	return a.Status != b.Status || a.ProgressDone != b.ProgressDone || a.ProgressTotal != b.ProgressTotal ||
		a.Message != b.Message || a.Attempts != b.Attempts || a.Error != b.Error
}
