package main

import (
	"context"
	"encoding/json"
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
	assert.Contains(t, out, "audit log OK: 4 entries", "verify reads the chain before it writes its own entry")
	assert.Contains(t, out, "entries 1 to 4 are MACed under audit key audit-")
	assert.Contains(t, out, "head file "+db+".key.audit-head: 4 entries")

	// Entries 4 and 5 (verify's own) are cut: the report names both.
	_, err = st.DB.Exec("DELETE FROM audit_entries WHERE seq >= 4")
	require.NoError(t, err)
	code, _, errs = cli(t, "audit", "verify", "--db", db)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "audit log truncated: the database ends at entry 3, but the head file")
	assert.Contains(t, errs, "recorded 5 entries: entries 4 to 5 were removed")
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

// An emptied log whose head file was removed too is not reported OK: the
// database holds an account, whose making was audited.
func TestAuditVerifyCLIEmptied(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	code, _, errs := cli(t, "users", "add", "ada", "--role", "admin", "--db", db)
	require.Equal(t, 0, code, errs)
	code, out, errs := cli(t, "audit", "verify", "--db", db)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "audit log OK")

	st, err := store.Open(context.Background(), db, store.WithKeys(keys.Config{}))
	require.NoError(t, err)
	_, err = st.DB.Exec("DELETE FROM audit_entries")
	require.NoError(t, err)
	st.Close()
	require.NoError(t, os.Remove(db+".key.audit-head"))
	code, out, errs = cli(t, "audit", "verify", "--db", db)
	assert.Equal(t, 2, code, out)
	assert.Contains(t, errs, "audit log emptied: it has no entry, but the database holds 1 accounts and 0 corpora")
	assert.NotContains(t, out, "OK")
}

// Cutting the chain's tail and copying the new last entry's count, hash and
// MAC into the head file (no key needed for that) fails: the head's seal
// is made under the audit key.
func TestAuditVerifyCLIForgedHead(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	st, err := store.Open(context.Background(), db, store.WithKeys(keys.Config{}))
	require.NoError(t, err)
	defer st.Close()
	for range 5 {
		require.NoError(t, st.Audit(context.Background(), store.AuditRecord{Action: "read", Target: "Document.text", IDs: []string{"1"}}))
	}
	_, err = st.DB.Exec("DELETE FROM audit_entries WHERE seq >= 4")
	require.NoError(t, err)
	var hash, mac string
	require.NoError(t, st.DB.QueryRow("SELECT hash, mac FROM audit_entries WHERE seq = 3").Scan(&hash, &mac))
	path := db + ".key.audit-head"
	var hf struct {
		Version int                        `json:"version"`
		Chains  map[string]store.AuditHead `json:"chains"`
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &hf))
	require.Len(t, hf.Chains, 1)
	for name, h := range hf.Chains {
		require.Equal(t, int64(5), h.Count)
		h.Count, h.Hash, h.MAC = 3, hash, mac
		hf.Chains[name] = h
	}
	data, err = json.Marshal(hf)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))

	code, out, errs := cli(t, "audit", "verify", "--db", db)
	assert.Equal(t, 2, code, out)
	assert.Contains(t, errs, "(3 entries) is not sealed under audit key audit-")
	assert.NotContains(t, out, "OK")
}
