package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

func loadAll(t *testing.T, s *store.Store, name string) []pipeline.Document {
	t.Helper()
	c, err := s.CorpusByName(context.Background(), name)
	require.NoError(t, err)
	docs, err := s.LoadDocuments(context.Background(), c, "gold")
	require.NoError(t, err)
	return docs
}
