package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/internal/keys"
	"deidcorpus/store"
)

// audit verify tells an intact log, a cut one and a lost head file apart,
// with an exit status for each break; audit anchor accepts the database's
// end once the loss is understood.
func TestAuditVerifyCLITampering(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	st, err := store.Open(context.Background(), db, store.WithKeys(keys.Config{}))
	require.NoError(t, err)
	for range 4 {
		require.NoError(t, st.Audit(context.Background(), store.AuditRecord{Action: "read", Target: "Document.text", IDs: []string{"1"}}))
	}
	code, out, errs := cli(t, "audit", "verify", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "audit log OK: 5 entries")
	assert.Contains(t, out, "entries 1 to 5 are MACed under audit key audit-")
	assert.Contains(t, out, "head file "+db+".key.audit-head: 5 entries")

	_, err = st.DB.Exec("DELETE FROM audit_entries WHERE seq >= 4")
	require.NoError(t, err)
	code, _, errs = cli(t, "audit", "verify", "--db", db)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "audit log truncated: the database ends at entry 4, but the head file")
	assert.Contains(t, errs, "entries were cut; keeping the head file as it is", "the command's own append says so too")

	require.NoError(t, os.Remove(db+".key.audit-head"))
	code, _, errs = cli(t, "audit", "verify", "--db", db)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "audit head file "+db+".key.audit-head is missing or empty, though the chain is keyed from entry 1")

	code, out, errs = cli(t, "audit", "anchor", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "anchored at entry 6 (it had no head for this database)")
	code, _, errs = cli(t, "audit", "verify", "--db", db)
	assert.Equal(t, 0, code, errs)
	st.Close()
}
