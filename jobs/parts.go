package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/job"
)

// A Split is a kind of job whose work is cut into parts, each queued as a job
// of its own ("part") that any worker takes: the workers of every process on
// the database, on one machine or, on PostgreSQL, many, run one corpus-sized
// job together. The parts must not conflict: each owns its own patients (a
// batch of whole patients), and whatever is shared is decided by Plan before
// any part runs.
//
// The job that asks (the parent) plans, queues the parts in one transaction,
// works queued parts itself while it waits (so one worker alone finishes the
// job too), and finishes once every part has succeeded. A part is an ordinary
// job: it has its heartbeat, is requeued when its worker dies, retried when it
// fails, and its handler is idempotent. A part that fails for good fails the
// parent; cancelling the parent cancels its parts. A retried or requeued
// parent keeps the parts it queued and waits for them again.
type Split struct {
	// Plan commits what the parts share and returns the parts, each a JSON
	// object that its Part reads. It runs once per job: not again when
	// the job's parts are queued already.
	Plan func(ctx context.Context, run *Run) ([]map[string]any, error)
	// Part does one part of parent; run is the part's own job.
	Part func(ctx context.Context, run *Run, parent *ent.Job, part map[string]any) (Result, error)
	// Finish runs once every part has succeeded, with their results in
	// the order of the plan.
	Finish func(ctx context.Context, run *Run, parts []Result) (Result, error)
}

// PartParams are the parameters of one part of a split job.
type PartParams struct {
	Parent int            `json:"parent"`
	Index  int            `json:"index"`
	Of     int            `json:"of"`
	Part   map[string]any `json:"part"`
}

// partWait is how often a parent looks at its parts while none is queued.
const partWait = 200 * time.Millisecond

// runSplit is the handler of a split kind.
func (m *Manager) runSplit(ctx context.Context, run *Run, s Split) (Result, error) {
	parts, err := m.store.ChildJobs(ctx, run.Job.ID)
	if err != nil {
		return nil, err
	}
	// Parts an earlier attempt cancelled when it failed may still be
	// stopping: they are waited for, to be tried again with the others.
	for slices.ContainsFunc(parts, func(p *ent.Job) bool { return p.CancelRequested && !finished(p.Status) }) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(partWait):
		}
		if parts, err = m.store.ChildJobs(ctx, run.Job.ID); err != nil {
			return nil, err
		}
	}
	// A new attempt of the job (retried, or requeued after its worker
	// died) tries its failed and cancelled parts again.
	for _, p := range parts {
		if p.Status == job.StatusFailed || p.Status == job.StatusCancelled {
			if _, err := m.Retry(ctx, p.ID); err != nil && apperr.CodeOf(err) != apperr.Conflict {
				return nil, err
			}
		}
	}
	if len(parts) == 0 {
		planned, err := s.Plan(ctx, run)
		if err != nil {
			return nil, err
		}
		params := make([]Params, len(planned))
		for i, p := range planned {
			params[i] = PartParams{Parent: run.Job.ID, Index: i, Of: len(planned), Part: p}
		}
		if parts, err = m.enqueue(ctx, params, run.Job.CreatedBy, nil); err != nil {
			return nil, err
		}
	}
	index := func(j *ent.Job) int { return int(j.Params["index"].(float64)) }
	// The parent works one queued part at a time itself, beside its own
	// watch over the others (which may fail or be cancelled meanwhile).
	var inline chan struct{}
	defer func() {
		if inline != nil {
			<-inline
		}
	}()
	for {
		if parts, err = m.store.ChildJobs(ctx, run.Job.ID); err != nil {
			return nil, err
		}
		slices.SortFunc(parts, func(a, b *ent.Job) int { return index(a) - index(b) })
		done, total, succeeded := 0, 0, 0
		var queued *ent.Job
		for _, p := range parts {
			done, total = done+p.ProgressDone, total+p.ProgressTotal
			switch p.Status {
			case job.StatusSucceeded:
				succeeded++
			case job.StatusFailed, job.StatusCancelled, job.StatusCheckFailed:
				m.cancelParts(ctx, parts)
				return nil, partFailed(p, index(p), len(parts))
			case job.StatusQueued:
				if queued == nil && p.RiverJobID != nil {
					queued = p
				}
			}
		}
		run.Progress(done, total, fmt.Sprintf("%d of %d parts done", succeeded, len(parts)))
		if succeeded == len(parts) {
			break
		}
		if inline == nil && queued != nil {
			// Worked here as any worker would (claimed, with its own
			// heartbeat); a worker that claimed it first wins.
			inline = make(chan struct{})
			go func(p *ent.Job, finished chan struct{}) {
				defer close(finished)
				m.work(ctx, *p.RiverJobID, p.ID)
			}(queued, inline)
		}
		select {
		case <-ctx.Done():
		case <-inline: // nil, and so never ready, while no part is worked here
			inline = nil
			continue
		case <-time.After(partWait):
		}
		if ctx.Err() != nil {
			if errors.Is(context.Cause(ctx), errCancelRequested) {
				m.cancelParts(context.WithoutCancel(ctx), parts)
			}
			return nil, ctx.Err()
		}
	}
	results := make([]Result, len(parts))
	for i, p := range parts {
		results[i] = p.Result
	}
	return s.Finish(ctx, run, results)
}

// partFailed is the parent's error for a part that failed for good (after
// its own retries): final, the parent is not tried again. It has the part's
// code (Err), so that the parent fails as the part did.
func partFailed(p *ent.Job, i, n int) error {
	code := apperr.CodeOf(Err(p))
	if p.Status == job.StatusCancelled {
		code = apperr.Conflict
	}
	return &apperr.Error{Code: code, Msg: fmt.Sprintf("part %d of %d (job %d) %s: %s", i+1, n, p.ID, p.Status, p.Error), Err: errFinal}
}

// cancelParts asks the unfinished parts to stop.
func (m *Manager) cancelParts(ctx context.Context, parts []*ent.Job) {
	for _, p := range parts {
		if !finished(p.Status) {
			if _, err := m.Cancel(ctx, p.ID); err != nil && apperr.CodeOf(err) != apperr.Conflict {
				m.logger.Warn("cancel a part", "job", p.ID, "err", err)
			}
		}
	}
}

// runPart is the handler of a part.
func runPart(ctx context.Context, run *Run) (Result, error) {
	var p PartParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	parent, err := run.Store.Job(ctx, p.Parent)
	if err != nil {
		return nil, err
	}
	if finished(parent.Status) {
		return nil, apperr.New(apperr.Conflict, "job %d, whose part this is, has %s", parent.ID, parent.Status)
	}
	s, ok := run.manager.splits[parent.Kind]
	if !ok {
		return nil, apperr.New(apperr.Invalid, "job %d (%s) is not split into parts in this worker", parent.ID, parent.Kind)
	}
	return s.Part(ctx, run, parent, p.Part)
}
