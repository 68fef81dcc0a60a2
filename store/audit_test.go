package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent/schema"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

func TestAuditChain(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b)
			for i, target := range []string{"Document.text", "Span.text", "Mutation.importDocuments", "download.corpus"} {
				require.NoError(t, st.Audit(ctx, store.AuditRecord{Action: "read", Target: target, IDs: []string{string(rune('a' + i))}}))
			}
			n, err := st.VerifyAudit(ctx)
			require.NoError(t, err)
			assert.Equal(t, 4, n)

			// ent refuses to change or delete an entry.
			first, err := st.Client.AuditEntry.Query().First(ctx)
			require.NoError(t, err)
			assert.ErrorIs(t, st.Client.AuditEntry.UpdateOneID(first.ID).Exec(ctx), schema.ErrAuditAppendOnly)
			assert.ErrorIs(t, st.Client.AuditEntry.DeleteOneID(first.ID).Exec(ctx), schema.ErrAuditAppendOnly)

			// Someone with the database file changes an entry behind ent's back.
			_, err = st.DB.Exec("UPDATE audit_entries SET actor = 'someone-else' WHERE seq = 2")
			require.NoError(t, err)
			_, err = st.VerifyAudit(ctx)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "entry 2: its content was changed")
		})
	}
}

func TestAuditDetectsRemovedEntry(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	for i := 0; i < 3; i++ {
		require.NoError(t, st.Audit(ctx, store.AuditRecord{Action: "write", Target: "Mutation.createCorpus"}))
	}
	_, err := st.DB.Exec("DELETE FROM audit_entries WHERE seq = 2")
	require.NoError(t, err)
	_, err = st.VerifyAudit(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "entry 2 is missing")
}
