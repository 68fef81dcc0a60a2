package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"deidcorpus/ent"
	"deidcorpus/store"
)

// queue is River on the store's database, whichever the dialect: SQLite's
// driver takes *sql.Tx, PostgreSQL's pgx.Tx.
type queue interface {
	// enqueueTx runs fn (which writes Job rows) and inserts the jobs into
	// River in one transaction.
	enqueueTx(ctx context.Context, fn func(ctx context.Context, tx *store.JobTx) ([]*ent.Job, error)) ([]*ent.Job, error)
	cancel(ctx context.Context, riverID int64) error
	start(ctx context.Context) error
	stop(ctx context.Context) error
}

// jobArgs is the one River job kind: River carries the job id, the Job row
// carries everything else.
type jobArgs struct {
	JobID int `json:"job_id"`
}

func (jobArgs) Kind() string { return "deidcorpus" }

type riverWorker struct {
	river.WorkerDefaults[jobArgs]
	m *Manager
}

func (w *riverWorker) Work(ctx context.Context, j *river.Job[jobArgs]) error {
	return w.m.work(ctx, j.ID, j.Args.JobID)
}

// Timeout is off: training a tagger may take hours. Crashed workers are found
// by their heartbeat instead.
func (w *riverWorker) Timeout(*river.Job[jobArgs]) time.Duration { return -1 }

type riverQueue[TTx any] struct {
	client  *river.Client[TTx]
	begin   func(ctx context.Context) (tx *store.JobTx, rtx TTx, commit func() error, rollback func(), err error)
	close   func()
	maxTry  int
	started bool
}

func newQueue(ctx context.Context, st *store.Store, m *Manager) (queue, error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &riverWorker{m: m})
	cfg := &river.Config{
		Workers:              workers,
		FetchCooldown:        20 * time.Millisecond,
		FetchPollInterval:    100 * time.Millisecond,
		JobTimeout:           -1,
		RescueStuckJobsAfter: 24 * time.Hour,
		MaxAttempts:          m.opt.MaxAttempts,
		Logger:               quiet(m.logger),
	}
	if m.opt.Work {
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: m.opt.Concurrency}}
	}
	switch st.Dialect {
	case dialect.SQLite:
		driver := riversqlite.New(st.DB)
		if err := migrate(ctx, st, driver); err != nil {
			return nil, err
		}
		client, err := river.NewClient(driver, cfg)
		if err != nil {
			return nil, fmt.Errorf("start job queue: %w", err)
		}
		return &riverQueue[*sql.Tx]{client: client, maxTry: m.opt.MaxAttempts, close: func() {},
			begin: func(ctx context.Context) (*store.JobTx, *sql.Tx, func() error, func(), error) {
				tx, err := st.DB.BeginTx(ctx, nil)
				if err != nil {
					return nil, nil, nil, nil, err
				}
				return st.JobTx(tx), tx, tx.Commit, func() { tx.Rollback() }, nil
			}}, nil
	case dialect.Postgres:
		pool, err := pgxpool.New(ctx, st.DSN)
		if err != nil {
			return nil, fmt.Errorf("connect job queue: %w", err)
		}
		driver := riverpgxv5.New(pool)
		if err := migrate(ctx, st, driver); err != nil {
			pool.Close()
			return nil, err
		}
		client, err := river.NewClient(driver, cfg)
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("start job queue: %w", err)
		}
		return &riverQueue[pgx.Tx]{client: client, maxTry: m.opt.MaxAttempts, close: pool.Close, begin: pgBegin(st)}, nil
	}
	return nil, fmt.Errorf("no job queue for database dialect %s", st.Dialect)
}

// pgBegin opens one PostgreSQL transaction that both ent (through
// database/sql) and River (through pgx) write in: a transaction is a state of
// the connection, so ent's statements on the reserved connection run inside
// the transaction begun on its underlying pgx connection.
func pgBegin(st *store.Store) func(ctx context.Context) (*store.JobTx, pgx.Tx, func() error, func(), error) {
	return func(ctx context.Context) (*store.JobTx, pgx.Tx, func() error, func(), error) {
		conn, err := st.DB.Conn(ctx)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		var pc *pgx.Conn
		err = conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("unexpected PostgreSQL driver connection %T", dc)
			}
			pc = c.Conn()
			return nil
		})
		if err != nil {
			conn.Close()
			return nil, nil, nil, nil, err
		}
		tx, err := pc.Begin(ctx)
		if err != nil {
			conn.Close()
			return nil, nil, nil, nil, err
		}
		ec := st.JobTx(conn)
		commit := func() error {
			defer conn.Close()
			return tx.Commit(context.WithoutCancel(ctx))
		}
		rollback := func() {
			tx.Rollback(context.WithoutCancel(ctx))
			conn.Close()
		}
		return ec, tx, commit, rollback, nil
	}
}

// migrate migrates the job queue's tables while no other process migrates
// the database (a server and its workers starting at once on a new one
// would create one table twice).
func migrate[TTx any](ctx context.Context, st *store.Store, driver riverdriver.Driver[TTx]) error {
	unlock, err := st.LockMigrations(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	mig, err := rivermigrate.New(driver, nil)
	if err != nil {
		return err
	}
	if _, err := mig.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate job queue tables: %w", err)
	}
	return nil
}

func (q *riverQueue[TTx]) enqueueTx(ctx context.Context, fn func(ctx context.Context, tx *store.JobTx) ([]*ent.Job, error)) ([]*ent.Job, error) {
	ec, rtx, commit, rollback, err := q.begin(ctx)
	if err != nil {
		return nil, err
	}
	js, err := fn(ctx, ec)
	if err != nil {
		rollback()
		return nil, err
	}
	for i, j := range js {
		res, err := q.client.InsertTx(ctx, rtx, jobArgs{JobID: j.ID}, &river.InsertOpts{MaxAttempts: q.maxTry})
		if err != nil {
			rollback()
			return nil, fmt.Errorf("queue job %d: %w", j.ID, err)
		}
		if js[i], err = ec.SetQueueEntry(ctx, j.ID, res.Job.ID); err != nil {
			rollback()
			return nil, err
		}
	}
	if err := commit(); err != nil {
		return nil, err
	}
	return js, nil
}

func (q *riverQueue[TTx]) cancel(ctx context.Context, riverID int64) error {
	_, err := q.client.JobCancel(ctx, riverID)
	if errors.Is(err, river.ErrNotFound) {
		return nil
	}
	return err
}

func (q *riverQueue[TTx]) start(ctx context.Context) error {
	q.started = true
	return q.client.Start(ctx)
}

// stop gives running jobs a few seconds, then cancels them; they requeue
// themselves for another worker.
func (q *riverQueue[TTx]) stop(ctx context.Context) error {
	defer q.close()
	if !q.started {
		return nil
	}
	soft, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := q.client.Stop(soft); err == nil {
		return nil
	}
	return q.client.StopAndCancel(ctx)
}

// quiet keeps River's own logging to warnings and errors.
func quiet(l *slog.Logger) *slog.Logger {
	return slog.New(levelFilter{l.Handler(), slog.LevelWarn})
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}
