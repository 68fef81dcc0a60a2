package jobs_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/chunk"
	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// An import job whose worker died after a batch had committed is requeued,
// and its retry goes on after that batch: the corpus ends as an
// uninterrupted import leaves it, and the result counts every document.
func TestImportJobResumesAfterWorkerDied(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			var docs []pipeline.Document
			require.NoError(t, synth.Generate(synth.Options{Patients: 200, Seed: 9}, func(p synth.Patient) error {
				docs = append(docs, p.Docs...)
				return nil
			}))
			files, err := formats.WriteI2B2(docs)
			require.NoError(t, err)
			p := jobs.ImportParams{Corpus: "c", TagSet: "i2b2-2014", Split: "train"}

			want := storetest.Open(t, b)
			full, err := want.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014", Split: "train"}, files)
			require.NoError(t, err)

			st := storetest.Open(t, b)
			enq, err := jobs.New(ctx, st, jobs.Handlers(), jobs.Options{})
			require.NoError(t, err)
			j, err := enq.EnqueueImport(ctx, p, formats.Files(files), "local:tester")
			require.NoError(t, err)

			// The first attempt: its worker dies right after the first
			// batch commits, leaving the job running with an old heartbeat.
			committed := 0
			func() {
				defer func() { recover() }()
				_, err = st.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014", Split: "train",
					Progress: func(done, total int) { committed = done; panic("worker died") }}, files)
			}()
			require.Greater(t, committed, 0)
			require.Less(t, committed, full.Documents)
			old := time.Now().Add(-time.Hour)
			require.NoError(t, st.Client.Job.UpdateOneID(j.ID).SetStatus(job.StatusRunning).SetHeartbeatAt(old).SetAttempts(1).Exec(ctx))
			requeue := "UPDATE river_job SET state = 'running', attempt = 1 WHERE id = ?"
			if b == storetest.Postgres {
				requeue = strings.Replace(requeue, "?", "$1", 1)
			}
			_, err = st.DB.Exec(requeue, *j.RiverJobID)
			require.NoError(t, err)

			m := newManager(t, st, nil, jobs.Options{StaleAfter: time.Second})
			got := wait(t, m, j.ID)[0]
			require.Equal(t, job.StatusSucceeded, got.Status, got.Error)
			assert.Equal(t, 2, got.Attempts)
			assert.Equal(t, float64(full.Documents), got.Result["documents"])
			assert.Equal(t, float64(full.Spans), got.Result["spans"])
			assert.Equal(t, loadAll(t, want, "c"), loadAll(t, st, "c"))
		})
	}
}

// TestImportJobReadsItsUploadInChunks: an upload is stored in chunks and the
// job reads it through them (at any offset, the archive's end first), so an
// upload of many chunks imports as a direct import of its files does; a
// chunk changed after it was stored fails the job as a damaged upload,
// leaving no corpus.
func TestImportJobReadsItsUploadInChunks(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			var docs []pipeline.Document
			require.NoError(t, synth.Generate(synth.Options{Patients: 30, Seed: 3}, func(p synth.Patient) error {
				docs = append(docs, p.Docs...)
				return nil
			}))
			files, err := formats.WriteI2B2(docs)
			require.NoError(t, err)
			want := storetest.Open(t, b)
			full, err := want.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014", Split: "train"}, files)
			require.NoError(t, err)

			const chunkSize = 1024 // smaller than a note: members and the directory span chunks
			st := storetest.Open(t, b, store.WithChunkSize(chunkSize))
			enq, err := jobs.New(ctx, st, jobs.Handlers(), jobs.Options{})
			require.NoError(t, err)
			upload := func(corpus string) (*ent.Job, *ent.Artifact) {
				t.Helper()
				j, err := enq.EnqueueImport(ctx, jobs.ImportParams{Corpus: corpus, TagSet: "i2b2-2014", Split: "train"},
					formats.Files(files), "local:tester")
				require.NoError(t, err)
				a, err := st.Artifact(ctx, int(j.Params["artifact"].(float64)))
				require.NoError(t, err)
				return j, a
			}
			good, a := upload("c")
			goodUpload := a
			assert.Empty(t, a.Data, "the upload is not stored whole")
			require.NotEmpty(t, a.ContentKey)
			chunks, err := st.Client.Chunk.Query().Where(chunk.ContentKey(a.ContentKey)).Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, (a.Size+chunkSize-1)/chunkSize, chunks)
			require.Greater(t, chunks, 100)

			bad, a := upload("d")
			badUpload := a
			damaged, err := st.Client.Chunk.Query().Where(chunk.ContentKey(a.ContentKey), chunk.Seq(chunks/2)).Only(ctx)
			require.NoError(t, err)
			data := bytes.Clone(damaged.Data)
			data[10] ^= 1
			damage := "UPDATE release_chunks SET data = ? WHERE id = ?"
			if b == storetest.Postgres {
				damage = "UPDATE release_chunks SET data = $1 WHERE id = $2"
			}
			_, err = st.DB.Exec(damage, data, damaged.ID)
			require.NoError(t, err)

			m := newManager(t, st, nil, jobs.Options{MaxAttempts: 1})
			got := map[int]*ent.Job{}
			for _, j := range wait(t, m, good.ID, bad.ID) {
				got[j.ID] = j
			}
			require.Equal(t, job.StatusSucceeded, got[good.ID].Status, got[good.ID].Error)
			assert.Equal(t, float64(full.Documents), got[good.ID].Result["documents"])
			assert.Equal(t, float64(full.Spans), got[good.ID].Result["spans"])
			assert.Equal(t, loadAll(t, want, "c"), loadAll(t, st, "c"))

			assert.Equal(t, job.StatusFailed, got[bad.ID].Status)
			assert.Contains(t, got[bad.ID].Error, "import-input.zip): its stored chunks are not the file stored")
			_, err = st.CorpusByName(ctx, "d")
			assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "a damaged upload imports nothing")

			// The imported upload is deleted with the job's success, its
			// chunks too; the failed job's stays for a retry.
			_, err = st.Artifact(ctx, goodUpload.ID)
			assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "the imported upload is kept")
			left, err := st.Client.Chunk.Query().Where(chunk.ContentKey(goodUpload.ContentKey)).Count(ctx)
			require.NoError(t, err)
			assert.Zero(t, left, "chunks of the imported upload")
			_, err = st.Artifact(ctx, badUpload.ID)
			assert.NoError(t, err, "the failed import's upload")
			left, err = st.Client.Chunk.Query().Where(chunk.ContentKey(badUpload.ContentKey)).Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, chunks, left, "chunks of the failed import's upload")
		})
	}
}

func loadAll(t *testing.T, s *store.Store, name string) []pipeline.Document {
	t.Helper()
	c, err := s.CorpusByName(context.Background(), name)
	require.NoError(t, err)
	docs, err := s.LoadDocuments(context.Background(), c, "gold")
	require.NoError(t, err)
	return docs
}
