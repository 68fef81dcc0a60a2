package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent/corpus"
	"deidcorpus/internal/keys"
	"deidcorpus/store"
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
	// As the schema before check statuses left them.
	_, err := st.DB.Exec(`UPDATE corpora SET check_status = 'none', check_findings = 0`)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st = open()
	defer st.Close()
	want := map[string]struct {
		status   corpus.CheckStatus
		findings int
	}{
		"leaked": {corpus.CheckStatusFailed, 3},
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
