package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent"
	"deidcorpus/ent/auditentry"
	"deidcorpus/internal/keys"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// openAudited opens a store whose audit head file is head, with n entries.
func openAudited(t *testing.T, b storetest.Backend, head string, n int) *store.Store {
	t.Helper()
	st := storetest.Open(t, b, store.WithAuditHead(head))
	appendN(t, st, n)
	return st
}

func appendN(t *testing.T, st *store.Store, n int) {
	t.Helper()
	for i := range n {
		require.NoError(t, st.Audit(context.Background(), store.AuditRecord{Actor: "ana", Action: "read",
			Target: "Document.text", IDs: []string{fmt.Sprint(i), "x,y"}, Detail: fmt.Sprintf("corpus=c%d", i)}))
	}
}

// requireBreak checks that verification fails with kind at entry seq.
func requireBreak(t *testing.T, st *store.Store, kind store.AuditBreakKind, seq int64, msg string) {
	t.Helper()
	_, err := st.CheckAudit(context.Background())
	require.Error(t, err)
	b, ok := store.IsAuditBreak(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, kind, b.Kind, "%v", err)
	assert.Equal(t, seq, b.Seq, "%v", err)
	assert.Contains(t, err.Error(), msg)
}

func execSQL(t *testing.T, st *store.Store, q string, args ...any) {
	t.Helper()
	_, err := st.DB.Exec(fmt.Sprintf(q, args...))
	require.NoError(t, err)
}

// recompute does what a database writer without the key can: recompute
// every plain hash from entry seq on, as the code that wrote them did.
func recompute(t *testing.T, st *store.Store, seq int64) {
	t.Helper()
	es, err := st.Client.AuditEntry.Query().Order(ent.Asc(auditentry.FieldSeq)).All(context.Background())
	require.NoError(t, err)
	prev := ""
	for _, e := range es {
		if e.Seq >= seq {
			h := sha256.New()
			fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s", e.Seq, e.At.UTC().Format(time.RFC3339Nano),
				e.Actor, e.Action, e.Target, strings.Join(e.Ids, ","), e.Detail, prev)
			e.Hash = hex.EncodeToString(h.Sum(nil))
			execSQL(t, st, "UPDATE audit_entries SET prev_hash = '%s', hash = '%s' WHERE seq = %d", prev, e.Hash, e.Seq)
		}
		prev = e.Hash
	}
}

func TestAuditTampering(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			newStore := func(t *testing.T) (*store.Store, string) {
				head := filepath.Join(t.TempDir(), "audit-head")
				return openAudited(t, b, head, 5), head
			}
			t.Run("intact", func(t *testing.T) {
				st, head := newStore(t)
				rep, err := st.CheckAudit(ctx)
				require.NoError(t, err)
				assert.Equal(t, 5, rep.Entries)
				assert.Equal(t, int64(1), rep.KeyedFrom)
				assert.Equal(t, head, rep.HeadPath)
				require.NotNil(t, rep.Head)
				assert.Equal(t, int64(5), rep.Head.Count)
				assert.Zero(t, rep.Lag)
				fi, err := os.Stat(head)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
			})
			t.Run("edited", func(t *testing.T) {
				st, _ := newStore(t)
				execSQL(t, st, "UPDATE audit_entries SET actor = 'someone-else' WHERE seq = 3")
				requireBreak(t, st, store.AuditEdited, 3, "entry 3: its content was changed")
			})
			t.Run("recomputed", func(t *testing.T) {
				st, _ := newStore(t)
				execSQL(t, st, "UPDATE audit_entries SET detail = 'nothing to see' WHERE seq = 2")
				recompute(t, st, 2)
				requireBreak(t, st, store.AuditRecomputed, 2, "recomputed without the key")
			})
			t.Run("truncated", func(t *testing.T) {
				st, _ := newStore(t)
				execSQL(t, st, "DELETE FROM audit_entries WHERE seq >= 4")
				requireBreak(t, st, store.AuditTruncated, 4, "entries 4 to 5 were removed")
				// The next append keeps the head file as evidence.
				appendN(t, st, 1)
				requireBreak(t, st, store.AuditTruncated, 5, "recorded 5 entries")
				// Cut and written over: the head's entry is another.
				appendN(t, st, 1)
				requireBreak(t, st, store.AuditReplaced, 5, "not the entry the head file")
			})
			t.Run("MACs removed", func(t *testing.T) {
				st, _ := newStore(t)
				execSQL(t, st, "UPDATE audit_entries SET mac = '', mac_key = ''")
				requireBreak(t, st, store.AuditStripped, 1, "says the chain is keyed from it")
			})
			t.Run("head file removed", func(t *testing.T) {
				st, head := newStore(t)
				require.NoError(t, os.Remove(head))
				requireBreak(t, st, store.AuditHeadMissing, 5, "is missing or empty, though the chain is keyed from entry 1")
				// Appends do not make a new one: the loss stays visible
				// until an admin anchors the chain.
				appendN(t, st, 1)
				requireBreak(t, st, store.AuditHeadMissing, 6, "audit anchor")
				old, h, _, err := st.AnchorAudit(ctx)
				require.NoError(t, err)
				assert.Nil(t, old)
				assert.Equal(t, int64(6), h.Count)
				_, err = st.CheckAudit(ctx)
				require.NoError(t, err)
			})
			t.Run("head file older", func(t *testing.T) {
				st, head := newStore(t)
				older, err := os.ReadFile(head)
				require.NoError(t, err)
				appendN(t, st, 2)
				require.NoError(t, os.WriteFile(head, older, 0o600))
				rep, err := st.CheckAudit(ctx)
				require.NoError(t, err, "entries newer than the head verify by their MACs")
				assert.Equal(t, int64(2), rep.Lag)
				assert.Contains(t, strings.Join(rep.Notes(), "\n"), "behind the database")
			})
			t.Run("key rotated", func(t *testing.T) {
				st, _ := newStore(t)
				r, err := st.KeyRing()
				require.NoError(t, err)
				_, err = r.Rotate()
				require.NoError(t, err)
				appendN(t, st, 2)
				n, err := st.VerifyAudit(ctx)
				require.NoError(t, err)
				assert.Equal(t, 7, n)
			})
			t.Run("another key", func(t *testing.T) {
				st, head := newStore(t)
				other, err := store.Open(ctx, st.DSN, store.WithKeyRing(keys.New()), store.WithAuditHead(head))
				require.NoError(t, err)
				defer other.Close()
				_, err = other.CheckAudit(ctx)
				b, ok := store.IsAuditBreak(err)
				require.True(t, ok, "%v", err)
				assert.Equal(t, store.AuditWrongKey, b.Kind)
				assert.Equal(t, int64(1), b.Seq)
			})
		})
	}
}

// A database from before MACs: its plain entries keep verifying, the first
// keyed entry seals them, and a change to them recomputed afterwards shows
// at that entry.
func TestAuditUpgradeFromPlainChain(t *testing.T) {
	ctx := context.Background()
	head := filepath.Join(t.TempDir(), "audit-head")
	st := openAudited(t, storetest.SQLite, head, 3)
	execSQL(t, st, "UPDATE audit_entries SET mac = '', mac_key = ''")
	require.NoError(t, os.Remove(head))
	rep, err := st.CheckAudit(ctx)
	require.NoError(t, err, "a plain chain with no head file verifies as before")
	assert.Zero(t, rep.KeyedFrom)

	appendN(t, st, 2)
	rep, err = st.CheckAudit(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(4), rep.KeyedFrom)
	assert.Equal(t, int64(4), rep.Head.KeyedFrom)
	assert.Contains(t, strings.Join(rep.Notes(), "\n"), "entries 1 to 3 predate MACs")

	execSQL(t, st, "UPDATE audit_entries SET target = 'elsewhere' WHERE seq = 2")
	recompute(t, st, 2)
	requireBreak(t, st, store.AuditRecomputed, 4, "or an entry before it (1 to 3")
}

// Two processes (a server and a CLI command) append to one SQLite file and
// one head file at once; or two machines share a PostgreSQL database and
// each keeps its own head file: the chain verifies on each, the second
// machine once anchored, and a head behind the database is a note, not an
// alarm.
func TestAuditSeveralWriters(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			secret := sha256.Sum256([]byte("shared key"))
			ring, err := keys.FromBase64(base64.StdEncoding.EncodeToString(secret[:]))
			require.NoError(t, err)
			a := storetest.Open(t, b, store.WithKeyRing(ring), store.WithAuditHead(filepath.Join(dir, "a")))
			open := func(head string) *store.Store {
				s, err := store.Open(ctx, a.DSN, store.WithKeyRing(ring), store.WithAuditHead(head))
				require.NoError(t, err)
				t.Cleanup(func() { s.Close() })
				return s
			}
			sameMachine := open(filepath.Join(dir, "a"))
			var wg sync.WaitGroup
			for _, s := range []*store.Store{a, sameMachine} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					appendN(t, s, 40)
				}()
			}
			wg.Wait()
			for _, s := range []*store.Store{a, sameMachine} {
				rep, err := s.CheckAudit(ctx)
				require.NoError(t, err)
				assert.Equal(t, 80, rep.Entries)
				assert.Zero(t, rep.Lag)
			}

			other := open(filepath.Join(dir, "b"))
			appendN(t, other, 2)
			requireBreak(t, other, store.AuditHeadMissing, 82, "never anchored")
			_, _, _, err = other.AnchorAudit(ctx)
			require.NoError(t, err)
			appendN(t, a, 3)
			rep, err := other.CheckAudit(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(3), rep.Lag)
			rep, err = a.CheckAudit(ctx)
			require.NoError(t, err)
			assert.Zero(t, rep.Lag)
		})
	}
}
