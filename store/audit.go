package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
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

// Audit appends a record to the hash-chained audit log and returns once it
// is committed.
//
// Records are group-committed: while one chain step (a transaction that
// reads the chain's tail and appends) is being written, the records of the
// operations that arrive meanwhile wait, and the next step appends all of
// them at once, each still its own entry with its own ids, chained one after
// the other. Under load a step costs one transaction for many readers instead
// of one each, and no reader waits for more than the step in progress and
// its own. Steps are chained under a lock (SQLite's single writer and
// immediate transactions; a PostgreSQL advisory lock), so concurrent
// writers, in this process or others, never fork the chain.
func (s *Store) Audit(ctx context.Context, r AuditRecord) error {
	if r.Actor == "" {
		r.Actor = auth.Name(ctx)
	}
	r.IDs = append([]string(nil), r.IDs...)
	sort.Strings(r.IDs)
	req := &auditRequest{rec: r, done: make(chan auditOutcome, 1)}
	a := &s.auditQueue
	a.mu.Lock()
	a.pending = append(a.pending, req)
	lead := !a.writing
	a.writing = true
	a.mu.Unlock()
	if !lead {
		out := <-req.done
		if !out.lead {
			return out.err
		}
	}
	// This caller writes the next step. A leader's record is always the
	// first pending (the queue was empty when it came, or it was handed the
	// lead as the first waiting), so the step holds it. The step runs to the
	// end whatever happens to the caller's context: it carries other
	// callers' records.
	a.mu.Lock()
	batch := a.pending[:min(len(a.pending), maxAuditBatch)]
	a.pending = a.pending[len(batch):]
	a.mu.Unlock()
	err := func() (err error) {
		// A panic must not leave the queue without a writer.
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("append to the audit log: %v", v)
			}
		}()
		return s.appendAudit(auth.System(context.WithoutCancel(ctx)), batch)
	}()
	for _, q := range batch[1:] {
		q.done <- auditOutcome{err: err}
	}
	// Hand the next step to the first caller waiting, if any.
	a.mu.Lock()
	if len(a.pending) > 0 {
		a.pending[0].done <- auditOutcome{lead: true}
	} else {
		a.writing = false
	}
	a.mu.Unlock()
	return err
}

// maxAuditBatch bounds a chain step, so one step stays a short transaction.
const maxAuditBatch = 512

type auditQueue struct {
	mu      sync.Mutex
	pending []*auditRequest
	writing bool // a caller is writing a step, or has been handed the next
}

type auditRequest struct {
	rec  AuditRecord
	done chan auditOutcome
}

// auditOutcome ends a caller's wait: its record's fate, or the lead of the
// next step.
type auditOutcome struct {
	err  error
	lead bool
}

// appendAudit writes one chain step: the records of batch, in order, after
// the chain's tail, in one transaction.
func (s *Store) appendAudit(ctx context.Context, batch []*auditRequest) error {
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
		creates := make([]*ent.AuditEntryCreate, len(batch))
		for i, q := range batch {
			r := q.rec
			hash := auditHash(seq, at, r.Actor, r.Action, r.Target, r.IDs, r.Detail, prev)
			creates[i] = tx.AuditEntry.Create().SetSeq(seq).SetAt(at).SetActor(r.Actor).SetAction(r.Action).
				SetTarget(r.Target).SetIds(r.IDs).SetDetail(r.Detail).SetPrevHash(prev).SetHash(hash)
			prev, seq = hash, seq+1
		}
		// Bulk inserts in pieces that stay under SQLite's bound on a
		// statement's parameters.
		for len(creates) > 0 {
			n := min(len(creates), 100)
			if err := tx.AuditEntry.CreateBulk(creates[:n]...).Exec(ctx); err != nil {
				return err
			}
			creates = creates[n:]
		}
		return nil
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
