package store

import (
	"context"
	"slices"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqljson"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/job"
)

// The job rows: what users see of a job (status, progress, result, error).
// The queue that carries jobs to workers lives in package jobs; every read
// and write of a job's row goes through these methods, each one statement
// (a heartbeat is one write).

// Job returns a job; not_found when there is none.
func (s *Store) Job(ctx context.Context, id int) (*ent.Job, error) {
	j, err := s.Client.Job.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no job %d", id)
	}
	return j, err
}

// jobIDSpace is the width of each table's range of ids: ent gives every
// table ids of its own, so a job's id is the job table's offset plus its
// short number, counting jobs from 1 (the dashboard shows that number).
const jobIDSpace = 1 << 32

// JobIDs turns the short job numbers among ids (those below the width of a
// table's range) into job ids, in place; a full id stays as it is. With no
// job yet there is nothing to number, and ids stay as they are.
func (s *Store) JobIDs(ctx context.Context, ids []int) error {
	if !slices.ContainsFunc(ids, func(id int) bool { return id > 0 && id < jobIDSpace }) {
		return nil
	}
	first, err := s.Client.Job.Query().FirstID(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	offset := first - first%jobIDSpace
	for i, id := range ids {
		if id > 0 && id < jobIDSpace {
			ids[i] = offset + id
		}
	}
	return nil
}

// JobsByID returns the jobs with these ids that exist, in no order.
func (s *Store) JobsByID(ctx context.Context, ids []int) ([]*ent.Job, error) {
	return s.Client.Job.Query().Where(job.IDIn(ids...)).All(ctx)
}

// JobFilter selects jobs; zero fields select all.
type JobFilter struct {
	Status    []job.Status
	Kind      string
	CreatedBy string
	Limit     int // 0: no limit
}

// Jobs lists jobs, newest first.
func (s *Store) Jobs(ctx context.Context, f JobFilter) ([]*ent.Job, error) {
	q := s.Client.Job.Query().Order(ent.Desc(job.FieldID))
	if len(f.Status) > 0 {
		q.Where(job.StatusIn(f.Status...))
	}
	if f.Kind != "" {
		q.Where(job.Kind(f.Kind))
	}
	if f.CreatedBy != "" {
		q.Where(job.CreatedBy(f.CreatedBy))
	}
	if f.Limit > 0 {
		q.Limit(f.Limit)
	}
	return q.All(ctx)
}

// StartJobAttempt claims a queued job for a new attempt by worker, as the
// delivery of queue entry riverID: false when the job is not queued under
// that entry (another worker claimed it first: its parent job, or a second
// delivery of the entry).
func (s *Store) StartJobAttempt(ctx context.Context, j *ent.Job, riverID int64, worker, codeVersion string) (*ent.Job, bool, error) {
	now := time.Now()
	upd := s.Client.Job.Update().Where(job.ID(j.ID), job.StatusEQ(job.StatusQueued), job.RiverJobID(riverID)).
		SetStatus(job.StatusRunning).AddAttempts(1).
		SetHeartbeatAt(now).SetError("").SetWorker(worker).SetCodeVersion(codeVersion).SetMessage("started")
	if j.StartedAt == nil {
		upd.SetStartedAt(now)
	}
	n, err := upd.Save(ctx)
	if err != nil || n == 0 {
		return nil, false, err
	}
	j, err = s.Job(ctx, j.ID)
	return j, err == nil, err
}

// ChildJobs are the jobs queued as parts of job parent (their parameters'
// "parent"), in no order.
func (s *Store) ChildJobs(ctx context.Context, parent int) ([]*ent.Job, error) {
	opts := []sqljson.Option{sqljson.Path("parent")}
	if s.Dialect == dialect.Postgres {
		opts = append(opts, sqljson.Cast("bigint")) // ids pass int4's range (globally unique ids)
	}
	return s.Client.Job.Query().Where(func(sel *entsql.Selector) {
		sel.Where(sqljson.ValueEQ(job.FieldParams, parent, opts...))
	}).All(ctx)
}

// JobHeartbeat records that an attempt lives, with its progress. It is one
// write, which matches only while the job is still that attempt's (River
// job riverID), running, and nobody asked to cancel it: false says it no
// longer is.
func (s *Store) JobHeartbeat(ctx context.Context, id int, riverID int64, done, total int, msg string) (bool, error) {
	n, err := s.Client.Job.Update().
		Where(job.ID(id), job.RiverJobID(riverID), job.StatusEQ(job.StatusRunning), job.CancelRequested(false)).
		SetHeartbeatAt(time.Now()).SetProgressDone(done).SetProgressTotal(total).SetMessage(msg).
		Save(ctx)
	return n > 0, err
}

// JobOutcome is how an attempt ended.
type JobOutcome struct {
	Status  job.Status
	Result  map[string]any // nil keeps the row's
	Error   string
	Message string
	// Done and Total are the final progress; negative keeps the row's.
	Done, Total int
	// DropInput is a stored input the job no longer needs (an import's
	// uploaded files, once imported): deleted with the outcome, in its
	// transaction, so that no retry can find it gone; 0 for none.
	DropInput int
}

// FinishJob records a job's outcome.
func (s *Store) FinishJob(ctx context.Context, id int, o JobOutcome) error {
	var dropped string // the content key of the input's chunks
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		upd := tx.Job.UpdateOneID(id).SetStatus(o.Status).SetFinishedAt(time.Now()).
			SetError(o.Error).SetMessage(o.Message)
		if o.Result != nil {
			upd.SetResult(o.Result)
		}
		if o.Done >= 0 {
			upd.SetProgressDone(o.Done).SetProgressTotal(o.Total)
		}
		if err := upd.Exec(ctx); err != nil || o.DropInput == 0 {
			return err
		}
		a, err := tx.Artifact.Get(ctx, o.DropInput)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		dropped = a.ContentKey
		return tx.Artifact.DeleteOne(a).Exec(ctx)
	})
	if err == nil && dropped != "" {
		// After the commit, in short statements of their own; chunks no
		// artifact names are removed anyway by a later WriteChunks.
		s.dropChunks(ctx, dropped)
	}
	return err
}

// RequeueJob marks a job queued again (its queue entry is River's).
func (s *Store) RequeueJob(ctx context.Context, id int, msg string) error {
	return s.Client.Job.UpdateOneID(id).SetStatus(job.StatusQueued).SetMessage(msg).Exec(ctx)
}

// RequestJobCancel asks a queued or running job to stop; false when it was
// neither.
func (s *Store) RequestJobCancel(ctx context.Context, id int) (bool, error) {
	n, err := s.Client.Job.Update().
		Where(job.ID(id), job.StatusIn(job.StatusQueued, job.StatusRunning)).
		SetCancelRequested(true).Save(ctx)
	return n > 0, err
}

// CancelQueuedJob marks a job that no worker has taken up cancelled; false
// when it was not queued.
func (s *Store) CancelQueuedJob(ctx context.Context, id int) (bool, error) {
	n, err := s.Client.Job.Update().Where(job.ID(id), job.StatusEQ(job.StatusQueued)).
		SetStatus(job.StatusCancelled).SetFinishedAt(time.Now()).SetMessage("cancelled before it started").Save(ctx)
	return n > 0, err
}

// StaleJobs are the running jobs whose last heartbeat is older than cutoff.
func (s *Store) StaleJobs(ctx context.Context, cutoff time.Time) ([]*ent.Job, error) {
	return s.Client.Job.Query().Where(job.StatusEQ(job.StatusRunning), job.HeartbeatAtLT(cutoff)).All(ctx)
}

// JobTx writes job rows (and a job's input) inside a transaction that the
// job queue owns, so that a job and its queue entry commit together.
type JobTx struct {
	c *ent.Client
}

// JobTx binds job writes to eq, a transaction (or a connection inside one)
// of this store's database begun by the caller.
func (s *Store) JobTx(eq entsql.ExecQuerier) *JobTx {
	drv := txBound{entsql.NewDriver(s.Dialect, entsql.Conn{ExecQuerier: eq})}
	c := ent.NewClient(ent.Driver(drv))
	return &JobTx{c: c}
}

// txBound runs every statement on the caller's transaction: ent's own
// per-statement transactions become no-ops.
type txBound struct{ *entsql.Driver }

func (d txBound) Tx(context.Context) (dialect.Tx, error) { return dialect.NopTx(d), nil }

// CreateJob records a queued job.
func (t *JobTx) CreateJob(ctx context.Context, kind string, params map[string]any, by string) (*ent.Job, error) {
	return t.c.Job.Create().SetKind(kind).SetParams(params).SetCreatedBy(by).Save(ctx)
}

// SetQueueEntry records the queue entry that carries a job.
func (t *JobTx) SetQueueEntry(ctx context.Context, id int, riverID int64) (*ent.Job, error) {
	return t.c.Job.UpdateOneID(id).SetRiverJobID(riverID).Save(ctx)
}

// RequeueStale marks a running job queued again if its heartbeat is still
// older than cutoff; false when it is not (another process requeued it, or
// it came back to life).
func (t *JobTx) RequeueStale(ctx context.Context, id int, cutoff time.Time) (*ent.Job, bool, error) {
	n, err := t.c.Job.Update().
		Where(job.ID(id), job.StatusEQ(job.StatusRunning), job.HeartbeatAtLT(cutoff)).
		SetStatus(job.StatusQueued).SetMessage("its worker stopped responding; requeued").Save(ctx)
	if err != nil || n == 0 {
		return nil, false, err
	}
	j, err := t.c.Job.Get(ctx, id)
	return j, err == nil, err
}

// Retry marks a failed or cancelled job queued again, its progress, result
// and error cleared; false when it is in another state.
func (t *JobTx) Retry(ctx context.Context, id int) (*ent.Job, bool, error) {
	n, err := t.c.Job.Update().Where(job.ID(id), job.StatusIn(job.StatusFailed, job.StatusCancelled)).
		SetStatus(job.StatusQueued).SetCancelRequested(false).SetError("").SetMessage("retried").
		SetProgressDone(0).ClearFinishedAt().ClearResult().Save(ctx)
	if err != nil || n == 0 {
		return nil, false, err
	}
	j, err := t.c.Job.Get(ctx, id)
	return j, err == nil, err
}

// ArtifactOf records a file stored in chunks before the transaction
// (Store.WriteChunks) as written with the job: its input, too large to
// insert whole inside the transaction.
func (t *JobTx) ArtifactOf(ctx context.Context, spec ArtifactSpec, c *Chunks) (*ent.Artifact, error) {
	return c.create(ctx, t.c, spec)
}
