package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
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

// Many operations auditing at once: their records are group-committed, and
// still each operation has exactly one entry, with every id it read, and the
// chain verifies.
func TestAuditConcurrentReaders(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b)
			const readers, each = 32, 20
			var wg sync.WaitGroup
			errs := make(chan error, readers*each)
			for r := range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						ids := []string{fmt.Sprintf("doc-%d-%d-b", r, i), fmt.Sprintf("doc-%d-%d-a", r, i)}
						errs <- st.Audit(ctx, store.AuditRecord{Actor: fmt.Sprintf("reader-%d", r), Action: "read",
							Target: "Document.text", IDs: ids, Detail: fmt.Sprint(i)})
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			n, err := st.VerifyAudit(ctx)
			require.NoError(t, err)
			assert.Equal(t, readers*each, n)

			entries, err := st.Client.AuditEntry.Query().All(ctx)
			require.NoError(t, err)
			seen := map[string]bool{}
			for _, e := range entries {
				key := e.Actor + "/" + e.Detail
				assert.False(t, seen[key], "one entry per operation: %s twice", key)
				seen[key] = true
				var r, i int
				_, err := fmt.Sscanf(e.Actor+" "+e.Detail, "reader-%d %d", &r, &i)
				require.NoError(t, err)
				assert.Equal(t, []string{fmt.Sprintf("doc-%d-%d-a", r, i), fmt.Sprintf("doc-%d-%d-b", r, i)}, e.Ids)
			}
			assert.Len(t, seen, readers*each)
		})
	}
}

// BenchmarkAuditConcurrent appends audit records from 16 goroutines per
// core, as 16 dashboard users reading notes at once; "+head" also writes
// the head file (synced) after each chain step.
func BenchmarkAuditConcurrent(b *testing.B) {
	for _, be := range []storetest.Backend{storetest.SQLite, storetest.Postgres} {
		for _, head := range []bool{false, true} {
			name := string(be)
			var opts []store.Option
			if head {
				name += "+head"
				opts = append(opts, store.WithAuditHead(filepath.Join(b.TempDir(), "audit-head")))
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				st := storetest.Open(b, be, opts...)
				b.SetParallelism(16 / max(1, runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := st.Audit(ctx, store.AuditRecord{Action: "read", Target: "Document.text", IDs: []string{"1", "2"}}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
