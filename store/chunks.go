package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"slices"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"deidcorpus/ent"
	"deidcorpus/ent/artifact"
	"deidcorpus/ent/chunk"
	entrelease "deidcorpus/ent/release"
)

// chunkSize is the most bytes one Chunk row holds: what the writer and the
// readers of a stored file (a release's snapshot, an artifact) hold of it at
// a time. Tests set a smaller Store.chunkSize.
const chunkSize = 4 << 20

// abandonedChunksAge is how long ago the last chunk of a file no release or
// artifact names must have been written before a creation removes the file's
// chunks: longer than any creation still writing pauses between chunks.
const abandonedChunksAge = 24 * time.Hour

// chunkWriter cuts a file into chunks of size bytes under a fresh content
// key and hands each to insert, which writes it in its own short statement:
// the single writer is never held for a whole file. It counts the bytes and
// hashes them. Errors stick.
type chunkWriter struct {
	key    string
	insert func(key string, seq int, data []byte) error
	size   int
	seq    int
	buf    []byte
	n      int
	sum    hash.Hash
	err    error
}

func newChunkWriter(size int, insert func(key string, seq int, data []byte) error) *chunkWriter {
	return &chunkWriter{key: rand.Text(), insert: insert, size: size, buf: make([]byte, 0, size), sum: sha256.New()}
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.n += n
	w.sum.Write(p)
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
		return s.Client.Chunk.Create().SetContentKey(key).SetSeq(seq).SetData(data).Exec(ctx)
	}
}

// dropChunks removes the chunks stored under key (those of a creation that
// failed). It does not use the creation's context, which may be cancelled.
func (s *Store) dropChunks(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	s.Client.Chunk.Delete().Where(chunk.ContentKey(key)).Exec(ctx)
}

// chunks reads the file stored under key a chunk at a time.
func (s *Store) chunks(ctx context.Context, key string) io.Reader {
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
		c, err := r.client.Chunk.Query().
			Where(chunk.ContentKey(r.key), chunk.Seq(r.seq)).
			Select(chunk.FieldData).Only(r.ctx)
		switch {
		case ent.IsNotFound(err) && r.seq > 0:
			r.done = true // the last chunk was read
			continue
		case ent.IsNotFound(err):
			return 0, fmt.Errorf("stored file %s: no chunks", r.key)
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

// chunksAt reads the file stored under key at any offset. It learns where
// each chunk ends from their lengths, without reading their data.
func (s *Store) chunksAt(ctx context.Context, key string) (*chunkReaderAt, error) {
	rows, err := s.reader().QueryContext(ctx, s.rebind(`SELECT length(data) FROM release_chunks WHERE content_key = ? ORDER BY seq`), key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	r := &chunkReaderAt{ctx: ctx, client: s.Client, key: key, seq: -1}
	for end := int64(0); rows.Next(); {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		end += n
		r.ends = append(r.ends, end)
	}
	return r, rows.Err()
}

// chunkReaderAt is an io.ReaderAt over a file stored in chunks, chunk i
// ending at ends[i]. It holds the chunk it read last (seq), so reading on
// from there costs no query; it is not safe for concurrent use.
type chunkReaderAt struct {
	ctx    context.Context
	client *ent.Client
	key    string
	ends   []int64
	seq    int
	data   []byte
}

func (r *chunkReaderAt) size() int64 {
	if len(r.ends) == 0 {
		return 0
	}
	return r.ends[len(r.ends)-1]
}

func (r *chunkReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("stored file %s: negative offset %d", r.key, off)
	}
	n := 0
	for n < len(p) {
		if off >= r.size() {
			return n, io.EOF
		}
		seq, _ := slices.BinarySearch(r.ends, off+1) // the first chunk ending after off
		start := int64(0)
		if seq > 0 {
			start = r.ends[seq-1]
		}
		if seq != r.seq {
			c, err := r.client.Chunk.Query().Where(chunk.ContentKey(r.key), chunk.Seq(seq)).Select(chunk.FieldData).Only(r.ctx)
			if err != nil {
				return n, fmt.Errorf("stored file %s, chunk %d: %w", r.key, seq, err)
			}
			r.seq, r.data = seq, c.Data
		}
		k := copy(p[n:], r.data[off-start:])
		n += k
		off += int64(k)
	}
	return n, nil
}

// dropAbandonedChunks removes the chunks of creations that failed or were
// interrupted long ago: chunks no release or artifact names, of a file none
// of whose chunks is recent. A creation still writing (an export of millions
// of notes may take a day) keeps its first chunks, however old.
func (s *Store) dropAbandonedChunks(ctx context.Context) error {
	cutoff := time.Now().Add(-abandonedChunksAge)
	_, err := s.Client.Chunk.Delete().Where(
		chunk.CreatedAtLT(cutoff),
		func(sel *entsql.Selector) {
			releases := entsql.Select(entrelease.FieldContentKey).From(entsql.Table(entrelease.Table))
			artifacts := entsql.Select(artifact.FieldContentKey).From(entsql.Table(artifact.Table))
			recent := entsql.Select(chunk.FieldContentKey).From(entsql.Table(chunk.Table)).
				Where(entsql.GTE(chunk.FieldCreatedAt, cutoff))
			sel.Where(entsql.And(entsql.NotIn(sel.C(chunk.FieldContentKey), releases),
				entsql.NotIn(sel.C(chunk.FieldContentKey), artifacts),
				entsql.NotIn(sel.C(chunk.FieldContentKey), recent)))
		}).Exec(ctx)
	return err
}
