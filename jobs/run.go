package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/job"
	"deidcorpus/internal/jsonmap"
	"deidcorpus/store"
	"deidcorpus/version"
)

// Run is a running job as its handler sees it.
type Run struct {
	Job     *ent.Job
	Store   *store.Store
	Logger  *slog.Logger
	manager *Manager // for a split job, which queues and works its parts

	mu          sync.Mutex
	done, total int
	message     string
	dropInput   int // see DropInputOnSuccess

	// of, for a stage of a job made of other kinds' work (deidentify),
	// is the job's own run: the stage's progress, done of its total, is
	// placed between from and from+width on of's scale of grand.
	of                 *Run
	from, width, grand int
}

// stage is a run of job's handler for one stage of it, with params of
// another kind (deidentify's tagging and resynthesis): the stage's
// progress moves r's bar between from and from+width of grand.
func (r *Run) stage(params Params, from, width, grand int) (*Run, error) {
	p, err := jsonmap.Of(params)
	if err != nil {
		return nil, err
	}
	j := *r.Job
	j.Params = p
	return &Run{Job: &j, Store: r.Store, Logger: r.Logger, manager: r.manager, of: r, from: from, width: width, grand: grand}, nil
}

// DropInputOnSuccess has the stored input artifact id deleted when the job
// succeeds, with its outcome: an import's uploaded files are a copy of
// notes the corpus now holds. A failed or cancelled job keeps them, for a
// retry.
func (r *Run) DropInputOnSuccess(id int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropInput = id
}

// Params decodes the job's parameters into v.
func (r *Run) Params(v any) error {
	if err := decodeParams(r.Job.Params, v); err != nil {
		return apperr.New(apperr.Invalid, "job %d parameters: %v", r.Job.ID, err)
	}
	return validate(v)
}

// decodeParams decodes a job's parameters into v.
func decodeParams(params map[string]any, v any) error {
	data, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Progress records how far the job is; the heartbeat writes it to the job
// row, so calling it often is cheap.
func (r *Run) Progress(done, total int, message string) {
	if r.of != nil {
		at := r.from
		if total > 0 {
			at += r.width * min(done, total) / total
		}
		r.of.Progress(at, r.grand, message)
		return
	}
	r.mu.Lock()
	r.done, r.total = done, total
	if message != "" {
		r.message = message
	}
	r.mu.Unlock()
}

// Step returns a progress callback for one phase of the job, in the shape the
// store and the pipeline take.
func (r *Run) Step(message string) func(done, total int) {
	return func(done, total int) { r.Progress(done, total, message) }
}

func (r *Run) snapshot() (int, int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done, r.total, r.message
}

// errCancelRequested is the cause of a job context cancelled at a user's request.
var errCancelRequested = errors.New("cancelled at a user's request")

// errSuperseded is the cause when another worker took the job over.
var errSuperseded = errors.New("job taken over by another worker")

// work runs one attempt of job jobID, delivered as River job riverID.
func (m *Manager) work(ctx context.Context, riverID int64, jobID int) error {
	j, err := m.store.Job(ctx, jobID)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil // deleted: nothing to do
	}
	if err != nil {
		return err
	}
	if j.RiverJobID == nil || *j.RiverJobID != riverID || finished(j.Status) {
		return nil // a stale queue entry of a job requeued or finished elsewhere
	}
	if j.CancelRequested {
		m.finish(ctx, jobID, job.StatusCancelled, nil, "", "cancelled")
		return river.JobCancel(errCancelRequested)
	}
	handler, ok := m.handlers[j.Kind]
	if !ok {
		m.finish(ctx, jobID, job.StatusFailed, nil, fmt.Sprintf("no handler for job kind %q in this worker", j.Kind), "")
		return river.JobCancel(fmt.Errorf("unknown kind %s", j.Kind))
	}
	j, claimed, err := m.store.StartJobAttempt(ctx, j, riverID, m.worker, version.String())
	if err != nil {
		return err
	}
	if !claimed {
		return nil // another worker started it first (a split job's parent works its queued parts)
	}

	// The job runs as its creator, as the account is now: every query is
	// filtered to what it may see (package auth).
	v, err := m.store.JobViewer(ctx, j.CreatedBy)
	if apperr.CodeOf(err) == apperr.Unauthorized {
		m.finish(ctx, jobID, job.StatusFailed, failure(err), err.Error(), "failed")
		return river.JobCancel(err)
	}
	if err != nil {
		return err // the database: River tries again
	}
	if op, ok := queuedBy[j.Kind]; ok && v != nil {
		if err := m.store.Authorize(auth.NewContext(ctx, v), op, nil); err != nil {
			err = fmt.Errorf("the account %s that queued this job may no longer run it: %w", v.Name, err)
			m.finish(ctx, jobID, job.StatusFailed, failure(err), err.Error(), "failed")
			return river.JobCancel(err)
		}
	}
	run := &Run{Job: j, Store: m.store, Logger: m.logger.With("job", jobID, "kind", j.Kind), manager: m}
	m.running.Store(jobID, struct{}{})
	defer m.running.Delete(jobID)
	workCtx, cancel := context.WithCancelCause(ctx)
	if v != nil {
		workCtx = auth.NewContext(workCtx, v)
	}
	defer cancel(nil)
	beatDone := make(chan struct{})
	go func() {
		defer close(beatDone)
		m.heartbeat(workCtx, cancel, run, riverID)
	}()
	result, err := runHandler(workCtx, handler, run)
	cancel(nil)
	<-beatDone

	cause := context.Cause(workCtx)
	shutdown := ctx.Err() != nil
	if err != nil && shutdown && !errors.Is(cause, errSuperseded) {
		// The worker's own context ended (shutdown): if a user had asked to
		// cancel meanwhile, that is what happened to the job.
		if cur, gerr := m.store.Job(context.WithoutCancel(ctx), jobID); gerr == nil && cur.CancelRequested {
			cause = errCancelRequested
		}
	}
	o := decide(attempt{err: err, cause: cause, shutdown: shutdown, attempts: j.Attempts, maxAttempts: m.opt.MaxAttempts})
	return m.conclude(context.WithoutCancel(ctx), run, o, result, err, cause)
}

// outcome is what becomes of a job once an attempt's handler returned.
type outcome int

const (
	superseded   outcome = iota // another worker took the job over: it records the outcome
	creatorLost                 // its account was disabled or deleted: failed
	outputFailed                // its output is saved and failed its check: check_failed
	succeeded
	cancelled
	handedBack // this worker shuts down: queued again, to resume
	failed     // for good: bad input, an internal error out of attempts, or a final one
	retried    // an internal error with attempts left: queued again
)

// attempt is what decide needs to know of a job's attempt.
type attempt struct {
	err         error // the handler's
	cause       error // why the attempt's context ended, if it did
	shutdown    bool  // the worker's own context ended
	attempts    int   // this one included
	maxAttempts int
}

// decide is a job attempt's outcome. It reads nothing and writes nothing:
// conclude carries it out.
func decide(a attempt) outcome {
	var gone creatorGone
	var checkFailed *CheckFailed
	switch {
	case errors.Is(a.cause, errSuperseded):
		return superseded
	case errors.As(a.cause, &gone):
		return creatorLost
	case a.err == nil:
		return succeeded
	case errors.As(a.err, &checkFailed):
		return outputFailed
	case errors.Is(a.cause, errCancelRequested):
		return cancelled
	case a.shutdown:
		return handedBack
	}
	// Bad parameters or input fail the same way every time: no retry.
	if apperr.CodeOf(a.err) != apperr.Internal || a.attempts >= a.maxAttempts || errors.Is(a.err, errFinal) {
		return failed
	}
	return retried
}

// conclude records outcome o of run's attempt, whose handler returned
// result and err (cause is why its context ended), and returns what River
// is to make of the attempt.
func (m *Manager) conclude(ctx context.Context, run *Run, o outcome, result Result, err, cause error) error {
	id := run.Job.ID
	switch o {
	case superseded:
		return nil
	case creatorLost:
		var gone creatorGone
		errors.As(cause, &gone)
		m.finish(ctx, id, job.StatusFailed, failure(gone.error), gone.Error(), "failed")
		run.Logger.Info("job stopped: its account was disabled", "err", gone)
		return river.JobCancel(gone)
	case outputFailed, succeeded:
		done, total, _ := run.snapshot()
		if total > 0 {
			done = total
		}
		var checkFailed *CheckFailed
		if errors.As(err, &checkFailed) {
			// The output is saved: trying again would only find it.
			m.finishWith(ctx, id, store.JobOutcome{Status: job.StatusCheckFailed, Result: result,
				Error: checkFailed.Message, Message: "check failed", Done: done, Total: total})
			run.Logger.Warn("job output failed its check", "err", err)
			return river.JobCancel(err)
		}
		run.mu.Lock()
		drop := run.dropInput
		run.mu.Unlock()
		m.finishWith(ctx, id, store.JobOutcome{Status: job.StatusSucceeded, Result: result, Message: "done",
			Done: done, Total: total, DropInput: drop})
		run.Logger.Info("job succeeded")
		return nil
	case cancelled:
		m.finish(ctx, id, job.StatusCancelled, nil, "", "cancelled")
		run.Logger.Info("job cancelled")
		return river.JobCancel(errCancelRequested)
	case handedBack:
		m.requeue(ctx, id, "interrupted by a worker shutdown; will resume")
		return err
	}
	code := apperr.CodeOf(err)
	if code == apperr.Internal {
		run.Logger.Error(LogJobFailed, "err", err)
	} else {
		// The input's fault, not the system's: an operator still sees it.
		run.Logger.Warn(LogJobFailed, "code", string(code), "err", err)
	}
	if o == failed {
		m.finish(ctx, id, job.StatusFailed, failure(err), err.Error(), "failed")
		return river.JobCancel(err)
	}
	m.requeue(ctx, id, fmt.Sprintf("attempt %d failed; retrying: %s", run.Job.Attempts, err.Error()))
	return err
}

// failure is the result recorded with a failed job: its error's code, so
// that Err gives the command line's exit status and the API's code the same
// error would have had met directly (an unknown split is invalid input, not
// an internal error).
func failure(err error) Result { return Result{"errorCode": string(apperr.CodeOf(err))} }

// Err is the error of a finished job that did not succeed, with the code its
// handler's error had; nil for a job that succeeded.
func Err(j *ent.Job) error {
	if j.Status == job.StatusSucceeded {
		return nil
	}
	code := apperr.Internal
	if c, ok := j.Result["errorCode"].(string); ok && c != "" {
		code = apperr.Code(c)
	}
	if j.Error == "" {
		return apperr.New(code, "job %d (%s) %s", j.ID, j.Kind, j.Status)
	}
	return apperr.New(code, "job %d (%s) %s: %s", j.ID, j.Kind, j.Status, j.Error)
}

// runHandler turns a handler's panic into an error, so one bad job cannot
// take the worker down.
func runHandler(ctx context.Context, h Handler, run *Run) (res Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("job panicked: %v", v)
		}
	}()
	return h(ctx, run)
}

// heartbeat writes the job's heartbeat and progress, and cancels the work
// when a user asked for it or another worker took the job over.
func (m *Manager) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, run *Run, riverID int64) {
	tick := time.NewTicker(m.opt.HeartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// One write, which matches only while the job is still this
		// attempt's and nobody asked to cancel it; when it matches nothing,
		// a read says which.
		done, total, msg := run.snapshot()
		alive, err := m.store.JobHeartbeat(context.WithoutCancel(ctx), run.Job.ID, riverID, done, total, msg)
		if err != nil {
			m.logger.Warn("job heartbeat", "job", run.Job.ID, "err", err)
			continue
		}
		if !alive {
			j, err := m.store.Job(context.WithoutCancel(ctx), run.Job.ID)
			if err == nil && j.CancelRequested && j.Status == job.StatusRunning && j.RiverJobID != nil && *j.RiverJobID == riverID {
				cancel(errCancelRequested)
			} else {
				cancel(errSuperseded)
			}
			return
		}
		// An account disabled (or gone) while its job runs stops it.
		if _, err := m.store.JobViewer(ctx, run.Job.CreatedBy); apperr.CodeOf(err) == apperr.Unauthorized {
			cancel(creatorGone{err})
			return
		}
	}
}

// runsHere says whether this process is running job id.
func (m *Manager) runsHere(id int) bool {
	_, ok := m.running.Load(id)
	return ok
}

// creatorGone is the cause of a job stopped because its account was
// disabled or deleted while it ran.
type creatorGone struct{ error }

func (m *Manager) finish(ctx context.Context, id int, status job.Status, result Result, errMsg, msg string) {
	m.finishWith(ctx, id, store.JobOutcome{Status: status, Result: result, Error: errMsg, Message: msg, Done: -1, Total: -1})
}

func (m *Manager) finishWith(ctx context.Context, id int, o store.JobOutcome) {
	if err := m.store.FinishJob(context.WithoutCancel(ctx), id, o); err != nil {
		m.logger.Error("record job outcome", "job", id, "status", o.Status, "err", err)
	}
}

func (m *Manager) requeue(ctx context.Context, id int, msg string) {
	if err := m.store.RequeueJob(ctx, id, msg); err != nil {
		m.logger.Error("requeue job", "job", id, "err", err)
	}
}

// LogJobFailed is the message of the log record of a job that failed.
const LogJobFailed = "job failed"

// reapLoop requeues jobs whose worker stopped sending heartbeats (a crash, a
// killed process, a lost machine), so that no job stays running forever.
func (m *Manager) reapLoop() {
	defer m.done.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-m.stop; cancel() }()
	tick := time.NewTicker(m.opt.StaleAfter / 4)
	defer tick.Stop()
	m.writeBlockedAt = time.Now() // nothing seen yet: count silences from now
	for {
		if err := m.reap(ctx); err != nil && ctx.Err() == nil {
			m.logger.Warn("requeue stale jobs", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

var errSkip = errors.New("nothing to do")

// errFinal is the cause of an error that another attempt would only meet
// again (a part that failed after its own retries).
var errFinal = errors.New("final")

// reap requeues the running jobs whose heartbeat stopped.
//
// A heartbeat is a write, so on SQLite it waits while another write holds the
// lock (a long import or resynthesis transaction, in this process or
// another): a heartbeat that old says nothing about its worker then. So the
// silence is counted from the later of the last heartbeat and the last time
// this reaper found the write path blocked (its probe, a write of its own,
// waited longer than a heartbeat period or failed), or it started watching.
// A job this process runs is never requeued by it: its heartbeat goroutine
// is proof of life.
func (m *Manager) reap(ctx context.Context) error {
	start := time.Now()
	err := m.store.WriteProbe(ctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	now := time.Now()
	if err != nil || now.Sub(start) > m.opt.HeartbeatEvery {
		m.writeBlockedAt = now
		return nil
	}
	cutoff := now.Add(-m.opt.StaleAfter)
	if m.writeBlockedAt.After(cutoff) {
		return nil // the write path was blocked too recently to judge anyone
	}
	stale, err := m.store.StaleJobs(ctx, cutoff)
	if err != nil {
		return err
	}
	for _, j := range stale {
		if m.runsHere(j.ID) {
			continue
		}
		_, err := m.queue.enqueueTx(ctx, func(ctx context.Context, tx *store.JobTx) ([]*ent.Job, error) {
			// Judged again under the write lock, at the time it was taken:
			// a write that held the lock meanwhile makes the probe's verdict
			// stale, so only a heartbeat older than the cutoff counted from
			// now, and a write path not blocked since, requeue.
			if time.Since(now) > m.opt.HeartbeatEvery {
				return nil, errSkip
			}
			j, ok, err := tx.RequeueStale(ctx, j.ID, cutoff)
			if err == nil && !ok {
				err = errSkip // another process requeued it, or it came back to life
			}
			return []*ent.Job{j}, err
		})
		if errors.Is(err, errSkip) {
			if time.Since(now) > m.opt.HeartbeatEvery {
				m.writeBlockedAt = time.Now() // waited for the lock: judge on the next pass
				return nil
			}
			continue
		}
		if err != nil {
			return err
		}
		m.logger.Warn("requeued a job whose worker died", "job", j.ID, "kind", j.Kind)
		if j.RiverJobID != nil {
			m.queue.cancel(ctx, *j.RiverJobID) // the dead attempt's queue entry; best effort
		}
	}
	return nil
}
