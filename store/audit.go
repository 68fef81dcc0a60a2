package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
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
		if v != nil && v != "" && v != false { // unset flags say nothing
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
// Records are group-committed: a chain step (a transaction that takes the
// chain's lock, reads its tail and appends) writes every record waiting when
// it gets the lock, each still its own entry with its own ids, chained one
// after the other. Two steps are under way at most: one writing, the next
// waiting for the lock, so that the next begins the moment the lock is free
// and takes everything that came meanwhile. Under load a step costs one
// transaction for many readers instead of one each. The lock (SQLite's
// single writer and immediate transactions; a PostgreSQL advisory lock)
// keeps concurrent writers, in this process or others, from forking the
// chain.
func (s *Store) Audit(ctx context.Context, r AuditRecord) error {
	if r.Actor == "" {
		r.Actor = auth.Name(ctx)
	}
	r.IDs = append([]string(nil), r.IDs...)
	sort.Strings(r.IDs)
	req := &auditRequest{rec: r, done: make(chan auditOutcome, 2)}
	a := &s.auditQueue
	a.mu.Lock()
	a.pending = append(a.pending, req)
	lead := a.leaders < maxAuditLeaders
	if lead {
		a.leaders++
		req.leading = true
	}
	a.mu.Unlock()
	for {
		if !lead {
			out := <-req.done
			if !out.lead {
				return out.err
			}
		}
		mine, err := s.auditStep(ctx, req)
		a.mu.Lock()
		req.leading = false
		a.leaders--
		if !mine && err != nil {
			// The step failed before it took anything: give up this
			// record, or a broken database would pass the lead round forever.
			if i := slices.Index(a.pending, req); i >= 0 {
				a.pending = slices.Delete(a.pending, i, i+1)
				mine = true
			}
		}
		// Keep two steps under way while records wait.
		for _, q := range a.pending {
			if a.leaders >= maxAuditLeaders {
				break
			}
			if !q.leading {
				q.leading = true
				a.leaders++
				q.done <- auditOutcome{lead: true}
			}
		}
		a.mu.Unlock()
		if mine {
			return err
		}
		// Another step took this record: its outcome comes on req.done.
		lead = false
	}
}

// maxAuditBatch bounds a chain step, so one step stays a short transaction;
// maxAuditLeaders is the number of steps under way at once.
const (
	maxAuditBatch   = 512
	maxAuditLeaders = 2
)

type auditQueue struct {
	mu      sync.Mutex
	pending []*auditRequest
	leaders int // callers writing a step or waiting for the lock to
}

type auditRequest struct {
	rec     AuditRecord
	done    chan auditOutcome // the lead of a step, then (if another step took the record) its fate
	leading bool              // guarded by auditQueue.mu
}

// auditOutcome ends a caller's wait: its record's fate, or the lead of the
// next step.
type auditOutcome struct {
	err  error
	lead bool
}

// auditStep writes one chain step: once it holds the chain's lock, it takes
// the records waiting and appends them. mine says whether req's record was
// among them; the others' callers get the outcome.
func (s *Store) auditStep(ctx context.Context, req *auditRequest) (mine bool, err error) {
	a := &s.auditQueue
	var batch []*auditRequest
	// The step runs to the end whatever happens to the caller's context: it
	// carries other callers' records.
	ctx = auth.System(context.WithoutCancel(ctx))
	err = func() (err error) {
		defer func() {
			// A panic must not leave records without an outcome.
			if v := recover(); v != nil {
				err = fmt.Errorf("append to the audit log: %v", v)
			}
		}()
		return s.withTx(ctx, func(tx *ent.Tx) error {
			if s.Dialect == dialect.Postgres {
				if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7468347)"); err != nil {
					return err
				}
			}
			a.mu.Lock()
			batch = a.pending[:min(len(a.pending), maxAuditBatch)]
			a.pending = slices.Clone(a.pending[len(batch):])
			a.mu.Unlock()
			if len(batch) == 0 {
				return nil
			}
			return appendAudit(ctx, tx, batch)
		})
	}()
	for _, q := range batch {
		if q == req {
			mine = true
			continue
		}
		q.done <- auditOutcome{err: err}
	}
	return mine, err
}

// appendAudit appends the records of batch, in order, after the chain's
// tail, in tx, which holds the chain's lock.
func appendAudit(ctx context.Context, tx *ent.Tx, batch []*auditRequest) error {
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
	// Bulk inserts in pieces that stay under SQLite's bound on a statement's
	// parameters.
	for len(creates) > 0 {
		n := min(len(creates), 100)
		if err := tx.AuditEntry.CreateBulk(creates[:n]...).Exec(ctx); err != nil {
			return err
		}
		creates = creates[n:]
	}
	return nil
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

// AuditEntries are the newest limit entries of the audit log, newest first.
func (s *Store) AuditEntries(ctx context.Context, limit int) ([]*ent.AuditEntry, error) {
	return s.Client.AuditEntry.Query().Order(ent.Desc(auditentry.FieldSeq)).Limit(limit).All(ctx)
}
