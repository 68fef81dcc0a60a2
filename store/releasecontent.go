package store

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
)

// legacyContentTable holds, while a database from before chunks is
// migrated, its releases' whole snapshots: set aside before the schema
// migration, which on SQLite rebuilds a table without the columns the schema
// lacks, and moved into chunks after it.
const legacyContentTable = "release_content_legacy"

// setAsideReleaseContent copies the releases' content column (a database from
// before chunks) into legacyContentTable and drops the column, in one
// transaction, before the schema migration.
func (s *Store) setAsideReleaseContent(ctx context.Context) error {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE `+legacyContentTable+` AS SELECT id, content FROM releases`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `ALTER TABLE releases DROP COLUMN content`); err != nil {
		return err
	}
	return tx.Commit()
}

// moveReleaseContent moves the snapshots set aside by setAsideReleaseContent
// into chunks, one release a transaction, then drops the table that held
// them. Run when the store opens a database that has the table, after the
// schema migration; an interrupted run resumes where it stopped.
func (s *Store) moveReleaseContent(ctx context.Context) error {
	rows, err := s.DB.QueryContext(ctx, `SELECT id FROM `+legacyContentTable)
	if err != nil {
		return err
	}
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.moveOneReleaseContent(ctx, id); err != nil {
			return fmt.Errorf("release %d: %w", id, err)
		}
	}
	_, err = s.DB.ExecContext(ctx, `DROP TABLE `+legacyContentTable)
	return err
}

// moveOneReleaseContent writes one release's set-aside snapshot as chunks,
// names their key in the release row and deletes the set-aside copy, in one
// transaction. Raw SQL: releases refuse updates through ent (they are
// immutable), and this one's content does not change, only where it lives.
func (s *Store) moveOneReleaseContent(ctx context.Context, id int) error {
	q := func(sqlite, postgres string) string {
		if s.Dialect == dialect.Postgres {
			return postgres
		}
		return sqlite
	}
	var content []byte
	err := s.DB.QueryRowContext(ctx, q(`SELECT content FROM `+legacyContentTable+` WHERE id = ?`,
		`SELECT content FROM `+legacyContentTable+` WHERE id = $1`), id).Scan(&content)
	if err != nil {
		return err
	}
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	insert := q(`INSERT INTO release_chunks (content_key, seq, data, created_at) VALUES (?, ?, ?, ?)`,
		`INSERT INTO release_chunks (content_key, seq, data, created_at) VALUES ($1, $2, $3, $4)`)
	w := newChunkWriter(s.chunkSize, func(key string, seq int, data []byte) error {
		_, err := tx.ExecContext(ctx, insert, key, seq, data, time.Now())
		return err
	})
	if _, err := w.Write(content); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, q(`UPDATE releases SET content_key = ? WHERE id = ?`, `UPDATE releases SET content_key = $1 WHERE id = $2`), w.key, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, q(`DELETE FROM `+legacyContentTable+` WHERE id = ?`, `DELETE FROM `+legacyContentTable+` WHERE id = $1`), id); err != nil {
		return err
	}
	return tx.Commit()
}
