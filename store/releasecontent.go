package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"deidcorpus/ent"
	entrelease "deidcorpus/ent/release"
	"deidcorpus/ent/releasechunk"
)

// releaseChunkSize is the most snapshot bytes one ReleaseChunk row holds:
// what a release's creation and its readers hold of it at a time. Tests set
// a smaller Store.chunkSize.
const releaseChunkSize = 4 << 20

// abandonedChunksAge is how old the chunks no release names must be before a
// release's creation removes them: older than any creation still writing.
const abandonedChunksAge = 24 * time.Hour

// chunkWriter cuts a release's snapshot into chunks of size bytes under a
// fresh content key and hands each to insert, which writes it in its own
// short statement: the single writer is never held for a whole release.
// Errors stick.
type chunkWriter struct {
	key    string
	insert func(key string, seq int, data []byte) error
	size   int
	seq    int
	buf    []byte
	err    error
}

func newChunkWriter(size int, insert func(key string, seq int, data []byte) error) *chunkWriter {
	return &chunkWriter{key: rand.Text(), insert: insert, size: size, buf: make([]byte, 0, size)}
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && w.err == nil {
		k := min(len(p), w.size-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == w.size {
			w.flush()
		}
	}
	if w.err != nil {
		return 0, w.err
	}
	return n, nil
}

func (w *chunkWriter) flush() {
	if w.err != nil || len(w.buf) == 0 {
		return
	}
	w.err = w.insert(w.key, w.seq, w.buf)
	w.seq++
	w.buf = w.buf[:0]
}

// Close writes the last chunk.
func (w *chunkWriter) Close() error {
	w.flush()
	return w.err
}

// insertChunk writes one chunk through ent.
func (s *Store) insertChunk(ctx context.Context) func(key string, seq int, data []byte) error {
	return func(key string, seq int, data []byte) error {
		return s.Client.ReleaseChunk.Create().SetContentKey(key).SetSeq(seq).SetData(data).Exec(ctx)
	}
}

// dropChunks removes the chunks stored under key (those of a creation that
// failed). It does not use the creation's context, which may be cancelled.
func (s *Store) dropChunks(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	s.Client.ReleaseChunk.Delete().Where(releasechunk.ContentKey(key)).Exec(ctx)
}

// releaseContent reads the snapshot stored under key a chunk at a time.
func (s *Store) releaseContent(ctx context.Context, key string) io.Reader {
	return &chunkReader{ctx: ctx, client: s.Client, key: key}
}

type chunkReader struct {
	ctx    context.Context
	client *ent.Client
	key    string
	seq    int
	data   []byte
	done   bool
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.data) == 0 {
		if r.done {
			return 0, io.EOF
		}
		c, err := r.client.ReleaseChunk.Query().
			Where(releasechunk.ContentKey(r.key), releasechunk.Seq(r.seq)).
			Select(releasechunk.FieldData).Only(r.ctx)
		switch {
		case ent.IsNotFound(err) && r.seq > 0:
			r.done = true // the last chunk was read
			continue
		case ent.IsNotFound(err):
			return 0, fmt.Errorf("release content %s: no chunks stored", r.key)
		case err != nil:
			return 0, err
		}
		r.data = c.Data
		r.seq++
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// dropAbandonedChunks removes the chunks of release creations that failed or
// were interrupted long ago: chunks no release names.
func (s *Store) dropAbandonedChunks(ctx context.Context) error {
	_, err := s.Client.ReleaseChunk.Delete().Where(
		releasechunk.CreatedAtLT(time.Now().Add(-abandonedChunksAge)),
		func(sel *entsql.Selector) {
			named := entsql.Select(entrelease.FieldContentKey).From(entsql.Table(entrelease.Table))
			sel.Where(entsql.NotIn(sel.C(releasechunk.FieldContentKey), named))
		}).Exec(ctx)
	return err
}

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
