package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// On SQLite every write goes through one connection (Store.DB, a pool of
// one) and every plain read through a pool of its own (Store.readDB).
//
// SQLite lets one writer in at a time whatever the pool does. With writers
// on several connections, those that find the lock taken sleep in SQLite's
// busy handler and retry (up to the busy timeout, then fail with "database
// is locked"): under load a heartbeat, a River lease or an audit record lost
// those races for seconds, and a live job was judged dead. With one write
// connection the writers queue in Go instead, take the lock the moment it is
// free and never see "database is locked" from this process; readers (WAL)
// never wait for a writer at all.

// readerConns is the size of the read pool on SQLite.
const readerConns = 8

// routedDriver sends ent's transactions and writes to the write pool and its
// plain SELECTs to the read pool.
type routedDriver struct {
	*entsql.Driver                // the write pool: Exec, Tx, BeginTx, Close
	read           *entsql.Driver // the read pool
}

func newRoutedDriver(name string, write, read *sql.DB) dialect.Driver {
	return routedDriver{Driver: entsql.OpenDB(name, write), read: entsql.OpenDB(name, read)}
}

// Query runs a SELECT on the read pool; anything else (ent's INSERT ...
// RETURNING, the migration's PRAGMAs) on the write connection.
func (d routedDriver) Query(ctx context.Context, query string, args, v any) error {
	if isSelect(query) {
		return d.read.Query(ctx, query, args, v)
	}
	return d.Driver.Query(ctx, query, args, v)
}

func (d routedDriver) Close() error {
	return errors.Join(d.read.Close(), d.Driver.Close())
}

func isSelect(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

// reader is the pool for reads that need no transaction of their own: the
// read pool on SQLite, the one pool on PostgreSQL.
func (s *Store) reader() *sql.DB {
	if s.readDB != nil {
		return s.readDB
	}
	return s.DB
}

// WriteProbe takes the write lock and gives it back at once. On SQLite it
// waits behind whatever write is in progress, in this process or another:
// how long it took is how long every writer (a heartbeat) had to wait. On
// PostgreSQL, where writers of different rows do not wait for each other, it
// does nothing.
func (s *Store) WriteProbe(ctx context.Context) error {
	if s.Dialect != dialect.SQLite {
		return nil
	}
	tx, err := s.DB.BeginTx(ctx, nil) // BEGIN IMMEDIATE (the DSN's _txlock)
	if err != nil {
		return err
	}
	return tx.Commit()
}
