package store

import (
	"context"
	"time"
)

// On SQLite the write connection never checkpoints the WAL itself
// (wal_autocheckpoint(0), see DSN.sqlite): after every 1,000 pages a commit
// went on to copy them into the database file, holding the one write
// connection, and every write queued behind it (heartbeats, leases, audit
// records), while it did. A connection of the read pool checkpoints instead,
// every checkpointEvery, in PASSIVE mode: it copies what no reader still
// needs and neither waits for nor blocks the writer (figures in the
// README, Hospital scale).
const checkpointEvery = time.Second

// startCheckpoints runs the checkpoints until stopCheckpoints.
func (s *Store) startCheckpoints() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.stopCheckpoints = func() { cancel(); <-done }
	go func() {
		defer close(done)
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := s.readDB.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil && ctx.Err() == nil {
					s.logger.Warn("WAL checkpoint", "error", err.Error())
				}
			}
		}
	}()
}
