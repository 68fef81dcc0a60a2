package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent/artifact"
	"deidcorpus/ent/chunk"
	"deidcorpus/internal/keys"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestArtifactInChunks: a file a job writes (an export archive) is stored in
// chunks as it is written and read back a chunk at a time, or at any offset,
// once per job and name; a write that fails leaves no artifact and no chunk,
// a stored file's chunks outlive the removal of abandoned ones, and a file
// that lost chunks reads to an error.
func TestArtifactInChunks(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st, err := store.Open(ctx, storetest.DSN(t, b), store.WithKeyRing(keys.New()))
			require.NoError(t, err)
			defer st.Close()
			st.SetChunkSize(64)
			data := make([]byte, 1000)
			for i := range data {
				data[i] = byte(rand.IntN(256))
			}
			spec := store.ArtifactSpec{Name: "c-gold-i2b2.zip", ContentType: "application/zip", JobID: 42, CreatedBy: "ann"}
			a, err := st.SaveArtifactFrom(ctx, spec, func(w io.Writer) error {
				for p := data; len(p) > 0; p = p[min(len(p), 100):] {
					if _, err := w.Write(p[:min(len(p), 100)]); err != nil {
						return err
					}
				}
				return nil
			})
			require.NoError(t, err)
			sum := sha256.Sum256(data)
			assert.Equal(t, len(data), a.Size)
			assert.Equal(t, hex.EncodeToString(sum[:]), a.Sha256)
			assert.Empty(t, a.Data)
			chunks, err := st.Client.Chunk.Query().Where(chunk.ContentKey(a.ContentKey)).Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, 16, chunks, "1,000 bytes in chunks of 64")
			readBack := func() []byte {
				t.Helper()
				got, err := st.Artifact(ctx, a.ID)
				require.NoError(t, err)
				out, err := io.ReadAll(st.ArtifactContent(ctx, got))
				require.NoError(t, err)
				return out
			}
			assert.Equal(t, data, readBack())
			at, err := st.ArtifactReaderAt(ctx, a)
			require.NoError(t, err)
			for _, off := range []int{990, 0, 60, 127, 500, 1000} { // within and across chunks, backwards
				p := make([]byte, 70)
				n, err := at.ReadAt(p, int64(off))
				assert.Equal(t, data[off:min(off+len(p), len(data))], p[:n], "at %d", off)
				if n < len(p) {
					assert.ErrorIs(t, err, io.EOF)
				} else {
					assert.NoError(t, err)
				}
			}

			// A retried job finds the file its predecessor stored.
			again, err := st.SaveArtifactFrom(ctx, spec, func(io.Writer) error {
				t.Error("the file was written again")
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, a.ID, again.ID)

			// A write that fails halfway leaves nothing.
			broken := errors.New("the export failed")
			_, err = st.SaveArtifactFrom(ctx, store.ArtifactSpec{Name: "broken.zip", JobID: 43}, func(w io.Writer) error {
				w.Write(data[:300])
				return broken
			})
			assert.ErrorIs(t, err, broken)
			n, err := st.Client.Artifact.Query().Where(artifact.Name("broken.zip")).Count(ctx)
			require.NoError(t, err)
			assert.Zero(t, n)
			all, err := st.Client.Chunk.Query().Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, chunks, all)

			// Old chunks that an artifact names are not abandoned ones.
			update := `UPDATE release_chunks SET created_at = ?`
			if st.Dialect == dialect.Postgres {
				update = `UPDATE release_chunks SET created_at = $1`
			}
			_, err = st.DB.ExecContext(ctx, update, time.Now().Add(-48*time.Hour))
			require.NoError(t, err)
			_, err = st.SaveArtifactFrom(ctx, store.ArtifactSpec{Name: "other.zip", JobID: 44}, func(w io.Writer) error {
				_, err := w.Write([]byte("x"))
				return err
			})
			require.NoError(t, err)
			assert.Equal(t, data, readBack())

			// A file that lost chunks reads to an error, not to a short end.
			_, err = st.Client.Chunk.Delete().Where(chunk.ContentKey(a.ContentKey), chunk.SeqGTE(8)).Exec(ctx)
			require.NoError(t, err)
			got, err := st.Artifact(ctx, a.ID)
			require.NoError(t, err)
			_, err = io.ReadAll(st.ArtifactContent(ctx, got))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "damaged")
			_, err = st.ArtifactReaderAt(ctx, got)
			assert.ErrorContains(t, err, "damaged")
		})
	}
}

// TestChunksBeforeTheirArtifact: a file stored in chunks before the
// transaction that names it (an import job's upload) reads back as written
// once the transaction commits; a caller whose transaction rolled back
// removes the chunks, and removing them after a commit keeps them.
func TestChunksBeforeTheirArtifact(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b, store.WithChunkSize(64))
			data := make([]byte, 1000)
			for i := range data {
				data[i] = byte(rand.IntN(256))
			}
			write := func(w io.Writer) error {
				_, err := w.Write(data)
				return err
			}
			spec := store.ArtifactSpec{Name: "import-input.zip", ContentType: "application/zip", CreatedBy: "ann"}
			count := func() int {
				t.Helper()
				n, err := st.Client.Chunk.Query().Count(ctx)
				require.NoError(t, err)
				return n
			}
			name := func(c *store.Chunks, commit bool) {
				t.Helper()
				tx, err := st.DB.BeginTx(ctx, nil)
				require.NoError(t, err)
				_, err = st.JobTx(tx).ArtifactOf(ctx, spec, c)
				require.NoError(t, err)
				if commit {
					require.NoError(t, tx.Commit())
				} else {
					require.NoError(t, tx.Rollback())
				}
			}

			c, err := st.WriteChunks(ctx, write)
			require.NoError(t, err)
			assert.Equal(t, 16, count(), "1,000 bytes in chunks of 64")
			name(c, false)
			st.DropChunks(ctx, c)
			assert.Zero(t, count(), "no artifact names them")

			c, err = st.WriteChunks(ctx, write)
			require.NoError(t, err)
			name(c, true)
			st.DropChunks(ctx, c)
			assert.Equal(t, 16, count(), "an artifact names them")
			a, err := st.Client.Artifact.Query().Where(artifact.Name(spec.Name)).Only(ctx)
			require.NoError(t, err)
			sum := sha256.Sum256(data)
			assert.Equal(t, len(data), a.Size)
			assert.Equal(t, hex.EncodeToString(sum[:]), a.Sha256)
			got, err := io.ReadAll(st.ArtifactContent(ctx, a))
			require.NoError(t, err)
			assert.Equal(t, data, got)

			broken := errors.New("a file the format refuses")
			_, err = st.WriteChunks(ctx, func(w io.Writer) error {
				w.Write(data[:300])
				return broken
			})
			assert.ErrorIs(t, err, broken)
			assert.Equal(t, 16, count(), "a write that fails leaves no chunk")
		})
	}
}
