package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"

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

// Audit appends a record to the audit log, chained by hashes and by MACs
// under a key kept outside the database (see auditverify.go), and returns
// once it is committed.
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
		var head *headUpdate
		err = s.withTx(ctx, func(tx *ent.Tx) error {
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
			head, err = s.appendAudit(ctx, tx, batch)
			return err
		})
		if err == nil && head != nil {
			// The entries are in: a head file that cannot be written is
			// the operator's to fix, not a failure of the operations.
			if herr := s.writeHead(ctx, *head); herr != nil {
				s.logger.Error("the audit head file was not written; audit verify will find it behind the database", "err", herr)
			}
		}
		return err
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
// tail, in tx, which holds the chain's lock. Each entry has a plain hash (as
// before MACs) and a MAC under the audit key; without a key ring (a
// PostgreSQL server with no key configured) it has the hash only, which
// verify reports. It returns the head to write once tx commits, if any.
func (s *Store) appendAudit(ctx context.Context, tx *ent.Tx, batch []*auditRequest) (*headUpdate, error) {
	tail, err := tx.AuditEntry.Query().Order(ent.Desc(auditentry.FieldSeq)).First(ctx)
	if ent.IsNotFound(err) {
		tail, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	prev := &ent.AuditEntry{}
	if tail != nil {
		prev = tail
	}
	keyID, key, headPath := s.auditKey()
	var head *headUpdate
	if headPath != "" {
		ok, err := s.planHead(ctx, tx, headPath, keyID, tail)
		if err != nil {
			return nil, err
		}
		if ok {
			head = &headUpdate{path: headPath}
		}
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	creates := make([]*ent.AuditEntryCreate, len(batch))
	for i, q := range batch {
		r := q.rec
		e := &ent.AuditEntry{Seq: prev.Seq + 1, At: at, Actor: r.Actor, Action: r.Action, Target: r.Target, Ids: r.IDs,
			Detail: r.Detail, PrevHash: prev.Hash}
		e.Hash = auditHash(e)
		if key != nil {
			e.MAC, e.MACKey = auditMAC(key, e, prev.MAC), keyID
		}
		creates[i] = tx.AuditEntry.Create().SetSeq(e.Seq).SetAt(at).SetActor(r.Actor).SetAction(r.Action).
			SetTarget(r.Target).SetIds(r.IDs).SetDetail(r.Detail).SetPrevHash(e.PrevHash).SetHash(e.Hash).
			SetMAC(e.MAC).SetMACKey(e.MACKey)
		prev = e
	}
	// Bulk inserts in pieces that stay under SQLite's bound on a statement's
	// parameters.
	for len(creates) > 0 {
		n := min(len(creates), 100)
		if err := tx.AuditEntry.CreateBulk(creates[:n]...).Exec(ctx); err != nil {
			return nil, err
		}
		creates = creates[n:]
	}
	if head != nil {
		head.head = AuditHead{Count: prev.Seq, Hash: prev.Hash, MAC: prev.MAC, KeyID: keyID,
			Written: time.Now().UTC().Truncate(time.Second)}
	}
	return head, nil
}

// auditKey is the key that MACs the audit chain, its id, and the head file
// beside it; without a key ring, none (logged once).
func (s *Store) auditKey() (id string, key []byte, headPath string) {
	r, err := s.KeyRing()
	if err != nil {
		s.warnOnce("audit unkeyed", "audit entries are chained by plain hashes only, which whoever writes the database can recompute: "+
			"no key ring", "err", err)
		return "", nil, ""
	}
	id, key = r.AuditKey()
	return id, key, s.auditHeadPath(r)
}

// auditHash is an entry's plain hash, chained by its prev_hash.
func auditHash(e *ent.AuditEntry) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s", e.Seq, e.At.UTC().Format(time.RFC3339Nano),
		e.Actor, e.Action, e.Target, strings.Join(e.Ids, ","), e.Detail, e.PrevHash)
	return hex.EncodeToString(h.Sum(nil))
}

// auditMAC is an entry's MAC under key: over its fields, each length-
// prefixed, its prev_hash and the previous entry's MAC (empty before the
// first keyed entry, which so seals the plain entries before it).
func auditMAC(key []byte, e *ent.AuditEntry, prevMAC string) string {
	m := hmac.New(sha256.New, key)
	parts := append([]string{"deidcorpus audit v1", strconv.FormatInt(e.Seq, 10), e.At.UTC().Format(time.RFC3339Nano),
		e.Actor, e.Action, e.Target, strconv.Itoa(len(e.Ids))}, e.Ids...)
	for _, p := range append(parts, e.Detail, e.PrevHash, prevMAC) {
		fmt.Fprintf(m, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// AuditEntries are the newest limit entries of the audit log, newest first.
func (s *Store) AuditEntries(ctx context.Context, limit int) ([]*ent.AuditEntry, error) {
	return s.Client.AuditEntry.Query().Order(ent.Desc(auditentry.FieldSeq)).Limit(limit).All(ctx)
}
