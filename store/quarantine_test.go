package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/job"
	"deidcorpus/internal/keys"
	"deidcorpus/pipeline"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestOlderCorporaGetTheirCheckStatus: corpora resynthesized before corpora
// had a check status get the one their provenance records when the database
// is opened, so one whose check failed is quarantined.
func TestOlderCorporaGetTheirCheckStatus(t *testing.T) {
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "old.db")
	open := func() *store.Store {
		st, err := store.Open(ctx, dsn, store.WithKeyRing(keys.New()))
		require.NoError(t, err)
		return st
	}
	st := open()
	for name, prov := range map[string]map[string]any{
		"leaked": {"source": "resynthesis", "check": map[string]any{"ok": false, "leaks": 2, "misaligned": 1, "unannotated": 5}},
		"clean":  {"source": "resynthesis", "check": map[string]any{"ok": true, "leaks": 0}},
		"plain":  {"source": "import"},
	} {
		_, err := st.Client.Corpus.Create().SetName(name).SetKind(corpus.KindSurrogate).SetProvenance(prov).Save(ctx)
		require.NoError(t, err)
	}
	// As the schema before check statuses left them, with no data upgrade
	// recorded.
	_, err := st.DB.Exec(`UPDATE corpora SET check_status = 'none', check_findings = 0`)
	require.NoError(t, err)
	_, err = st.DB.Exec(`DROP TABLE schema_steps`)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st = open()
	defer st.Close()
	want := map[string]struct {
		status   corpus.CheckStatus
		findings int
	}{
		"leaked": {corpus.CheckStatusFailed, 8}, // unannotated finds quarantine too
		"clean":  {corpus.CheckStatusPassed, 0},
		"plain":  {corpus.CheckStatusNone, 0},
	}
	for name, w := range want {
		c, err := st.CorpusByName(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, w.status, c.CheckStatus, name)
		assert.Equal(t, w.findings, c.CheckFindings, name)
	}
}

// TestOneResynthesisWritesACorpusAtATime: a resynthesis job cannot begin
// writing a surrogate corpus that another job, still queued or running, is
// writing (their batches would interleave); once that job has ended without
// finishing it, a new job takes the corpus over.
func TestOneResynthesisWritesACorpusAtATime(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st, err := store.Open(ctx, storetest.DSN(t, b), store.WithKeyRing(keys.New()))
			require.NoError(t, err)
			defer st.Close()
			_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"},
				[]pipeline.Document{{ID: "1-1", Patient: "1", Text: "Seen by Dr. Ann Lee.", Spans: []pipeline.Span{
					{Start: 12, End: 19, Text: "Ann Lee", Category: "NAME", Type: "DOCTOR"}}}})
			require.NoError(t, err)
			src, err := st.CorpusByName(ctx, "notes")
			require.NoError(t, err)
			newJob := func() int {
				j, err := st.Client.Job.Create().SetKind("resynthesize").SetStatus(job.StatusRunning).Save(ctx)
				require.NoError(t, err)
				return j.ID
			}
			begin := func(jobID int) error {
				_, _, err := st.BeginResynthesis(ctx, store.ResynthesisStart{SourceID: src.ID, Target: "notes-r", TagSet: src.Tagset,
					From: "notes", JobID: jobID})
				return err
			}
			first, second := newJob(), newJob()
			require.NoError(t, begin(first))
			require.NoError(t, begin(first), "the same job begins again (a retry)")

			err = begin(second)
			assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "%v", err)
			assert.ErrorContains(t, err, fmt.Sprintf(`corpus "notes-r" is being written by resynthesize job %d (running)`, first))
			target, err := st.CorpusByName(ctx, "notes-r")
			require.NoError(t, err)
			assert.Equal(t, apperr.Conflict, apperr.CodeOf(st.RefuseOtherWriter(ctx, target, second)))
			assert.NoError(t, st.RefuseOtherWriter(ctx, target, first))
			assert.Equal(t, first, store.InProgress(target).Job, "the refused job left the marker alone")

			_, err = st.Client.Job.UpdateOneID(first).SetStatus(job.StatusFailed).Save(ctx)
			require.NoError(t, err)
			require.NoError(t, begin(second), "a failed job has abandoned the corpus")
			target, err = st.CorpusByName(ctx, "notes-r")
			require.NoError(t, err)
			assert.Equal(t, second, store.InProgress(target).Job)
		})
	}
}
