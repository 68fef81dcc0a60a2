package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"entgo.io/ent/dialect"
)

// querier is what a read task needs of a connection or transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readTask is one independent query of a multi-query read.
type readTask func(ctx context.Context, q querier) error

// maxReaders caps the connections one read spreads over.
const maxReaders = 4

// readers is how many connections one read spreads over on SQLite.
func readers() int { return min(runtime.GOMAXPROCS(0), maxReaders) }

// readConcurrently runs setup (when not nil) and then the tasks tasks returns
// (called after setup, which may add to them), all against one snapshot of the
// database, so the answers agree with each other even while imports commit.
//
// On SQLite the tasks run on up to GOMAXPROCS connections, each in its own
// read transaction. A WAL read transaction takes its snapshot at its first
// read, so the snapshots are taken while another connection holds the write
// lock: no commit can fall between them. The lock is held only that long
// (microseconds); when a writer has it (an import in progress), the tasks run
// one after another in a single read transaction instead, never waiting for
// the writer. On PostgreSQL they run in one REPEATABLE READ transaction.
func (s *Store) readConcurrently(ctx context.Context, setup readTask, tasks func() []readTask) error {
	return s.read(ctx, readers(), setup, tasks)
}

// readOnce runs one read of several queries on one connection against one
// snapshot.
func (s *Store) readOnce(ctx context.Context, read readTask) error {
	return s.read(ctx, 1, read, func() []readTask { return nil })
}

// read is readConcurrently over up to n connections on SQLite.
func (s *Store) read(ctx context.Context, n int, setup readTask, tasks func() []readTask) error {
	run := func(q querier) error {
		if setup != nil {
			if err := setup(ctx, q); err != nil {
				return err
			}
		}
		for _, t := range tasks() {
			if err := t(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}
	if s.Dialect == dialect.Postgres {
		tx, err := s.DB.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := run(tx); err != nil {
			return err
		}
		return tx.Commit()
	}

	conns, release, err := s.snapshot(ctx, n)
	if err != nil {
		return err
	}
	defer release()
	if len(conns) == 1 {
		return run(conns[0])
	}
	if setup != nil {
		if err := setup(ctx, conns[0]); err != nil {
			return err
		}
	}
	queue := make(chan readTask)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range queue {
				if err := t(ctx, c); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		}()
	}
feed:
	for _, t := range tasks() {
		select {
		case queue <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// snapshot returns up to n SQLite connections in read transactions on the same
// snapshot (see readConcurrently), or one when the write lock is busy or n is
// 1. release ends the transactions and returns the connections to the pool.
func (s *Store) snapshot(ctx context.Context, n int) (conns []*sql.Conn, release func(), err error) {
	release = func() {
		// The transactions end even when ctx is done; a connection that
		// cannot roll back is discarded rather than pooled mid-transaction.
		bg := context.WithoutCancel(ctx)
		for _, c := range conns {
			if _, err := c.ExecContext(bg, "ROLLBACK"); err != nil {
				c.Raw(func(any) error { return driver.ErrBadConn })
			}
			c.Close()
		}
	}
	begin := func() error {
		c, err := s.reader().Conn(ctx)
		if err != nil {
			return err
		}
		if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
			c.Close()
			return err
		}
		conns = append(conns, c)
		// The first read fixes the transaction's snapshot.
		var x int
		return c.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master").Scan(&x)
	}
	if n > 1 {
		locked, unlock, err := s.tryWriteLock(ctx)
		if err != nil {
			return nil, nil, err
		}
		if locked {
			for range n {
				if err = begin(); err != nil {
					break
				}
			}
			if uerr := unlock(); err == nil {
				err = uerr
			}
			if err != nil {
				release()
				return nil, nil, err
			}
			return conns, release, nil
		}
	}
	if err := begin(); err != nil {
		release()
		return nil, nil, err
	}
	return conns, release, nil
}

// tryWriteLock takes SQLite's write lock on a connection of its own without
// waiting for a writer that holds it; unlock gives it back.
func (s *Store) tryWriteLock(ctx context.Context) (bool, func() error, error) {
	c, err := s.reader().Conn(ctx)
	if err != nil {
		return false, nil, err
	}
	var timeout int
	if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout); err != nil {
		c.Close()
		return false, nil, err
	}
	restore := func() error {
		_, err := c.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout = %d", timeout))
		if err != nil {
			c.Raw(func(any) error { return driver.ErrBadConn })
		}
		return errors.Join(err, c.Close())
	}
	if _, err := c.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		c.Close()
		return false, nil, err
	}
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		// Busy: a writer is at work. Anything else is an error too, but
		// the caller's fallback (one plain read transaction) will meet it
		// again if it matters.
		return false, nil, restore()
	}
	return true, func() error {
		_, err := c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		if err != nil {
			c.Raw(func(any) error { return driver.ErrBadConn })
		}
		return errors.Join(err, restore())
	}, nil
}
