package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"entgo.io/ent/dialect"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/auditentry"
)

// AuditRecord is what one audit entry says.
type AuditRecord struct {
	Actor  string // who; default the context's viewer (auth.Name)
	Action string // read, write or export
	Target string // what was read or written
	IDs    []string
	Detail string // PHI-free context
}

// DescribeArgs renders the arguments of an operation for an audit record,
// sorted "name=value" pairs, the empty ones left out: names of corpora,
// models, releases, files; never text.
func DescribeArgs(args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k, v := range args {
		if v != nil && v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, args[k])
	}
	return strings.Join(parts, " ")
}

// Audit appends a record to the hash-chained audit log. Entries are chained
// under a lock (SQLite's immediate transactions; a PostgreSQL advisory lock),
// so concurrent writers never fork the chain.
func (s *Store) Audit(ctx context.Context, r AuditRecord) error {
	if r.Actor == "" {
		r.Actor = auth.Name(ctx)
	}
	ctx = auth.System(ctx) // the chain's tail is read whoever writes
	ids := append([]string(nil), r.IDs...)
	sort.Strings(ids)
	return s.withTx(ctx, func(tx *ent.Tx) error {
		if s.Dialect == dialect.Postgres {
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7468347)"); err != nil {
				return err
			}
		}
		prev := ""
		var seq int64 = 1
		last, err := tx.AuditEntry.Query().Order(ent.Desc(auditentry.FieldSeq)).First(ctx)
		switch {
		case err == nil:
			prev, seq = last.Hash, last.Seq+1
		case !ent.IsNotFound(err):
			return err
		}
		at := time.Now().UTC().Truncate(time.Microsecond)
		hash := auditHash(seq, at, r.Actor, r.Action, r.Target, ids, r.Detail, prev)
		return tx.AuditEntry.Create().SetSeq(seq).SetAt(at).SetActor(r.Actor).SetAction(r.Action).
			SetTarget(r.Target).SetIds(ids).SetDetail(r.Detail).SetPrevHash(prev).SetHash(hash).Exec(ctx)
	})
}

func auditHash(seq int64, at time.Time, actor, action, target string, ids []string, detail, prev string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s", seq, at.UTC().Format(time.RFC3339Nano),
		actor, action, target, strings.Join(ids, ","), detail, prev)
	return hex.EncodeToString(h.Sum(nil))
}

// VerifyAudit recomputes the chain and reports the number of entries, or the
// first entry that was changed, removed or reordered.
func (s *Store) VerifyAudit(ctx context.Context) (int, error) {
	const page = 5000
	prev := ""
	var seq int64
	n := 0
	for {
		entries, err := s.Client.AuditEntry.Query().Where(auditentry.SeqGT(seq)).
			Order(ent.Asc(auditentry.FieldSeq)).Limit(page).All(ctx)
		if err != nil {
			return n, err
		}
		for _, e := range entries {
			if e.Seq != seq+1 {
				return n, apperr.New(apperr.Invalid, "audit log broken: entry %d is missing (next is %d)", seq+1, e.Seq)
			}
			if e.PrevHash != prev {
				return n, apperr.New(apperr.Invalid, "audit log broken at entry %d: it does not follow entry %d", e.Seq, seq)
			}
			if auditHash(e.Seq, e.At, e.Actor, e.Action, e.Target, e.Ids, e.Detail, e.PrevHash) != e.Hash {
				return n, apperr.New(apperr.Invalid, "audit log broken at entry %d: its content was changed", e.Seq)
			}
			prev, seq = e.Hash, e.Seq
			n++
		}
		if len(entries) < page {
			return n, nil
		}
	}
}
