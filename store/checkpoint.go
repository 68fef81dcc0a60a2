package store

import (
	"context"
	"time"
)

// On SQLite a connection of the read pool checkpoints the WAL every
// checkpointEvery, in PASSIVE mode: it copies what no reader still needs
// into the database file and neither waits for nor blocks the writer. When
// the write connection checkpointed after every 1,000 pages, a commit went
// on to copy them, holding the one write connection, and every write queued
// behind it (heartbeats, leases, audit records) while it did (figures in
// docs/benchmarks.md, "Where the time goes").
const checkpointEvery = time.Second

// walRestartPages is when the write connection checkpoints after all (see
// DSN.sqlite): the WAL starts again from its beginning only when a write
// begins with every frame copied, and beside a writer that commits without
// pause the background checkpoints never catch up with it. The WAL then
// grew without end (18 GB within six minutes of importing a million notes).
// The writer's checkpoint copies what the background ones left, and the
// next write starts the WAL again: it stays near this many pages (160 MB at
// 4 KiB), unless a reader holds an old snapshot all along. The background
// checkpoints copy little beside a job's continuous reads and writes, so
// the writer's checkpoint is on every write's path: at 10,000 pages it took
// 15 s of a 166 s resynthesis of 105,052 notes, which took 146 s at 40,000
// (pages written again by several commits are copied once).
const walRestartPages = 40000

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
