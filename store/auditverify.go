package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/auditentry"
	"deidcorpus/internal/keys"
)

// Verifying the audit log. Whoever can write the database can change an
// entry and recompute every plain hash after it, or cut the newest entries;
// neither can make a MAC without the audit key, kept outside the database
// (internal/keys), nor change the head file beside it. So an edited entry
// fails its hash or its MAC, a recomputed chain has consistent hashes and
// wrong MACs, and a cut chain ends before the head file's count.
//
// Entries written before MACs (databases from before this) have plain
// hashes only: the first keyed entry's MAC covers the hash of the one before
// it, and so seals them as they were then; what was changed in them before
// that cannot be detected.

// AuditBreakKind names how the audit log was tampered with.
type AuditBreakKind string

const (
	AuditEdited      AuditBreakKind = "edited"                     // an entry's hash or MAC does not match its content
	AuditRecomputed  AuditBreakKind = "recomputed without the key" // the hashes agree, the MAC does not
	AuditRemoved     AuditBreakKind = "removed"                    // an entry inside the chain is missing
	AuditTruncated   AuditBreakKind = "truncated"                  // the chain ends before the head file's count
	AuditReplaced    AuditBreakKind = "replaced"                   // the entry the head file recorded is another
	AuditStripped    AuditBreakKind = "MAC removed"                // an entry of the keyed chain has no MAC
	AuditWrongKey    AuditBreakKind = "another key"                // MACed under a key this ring does not give
	AuditHeadMissing AuditBreakKind = "head file missing"          // the chain is keyed but the head file has no head for it
	AuditHeadForged  AuditBreakKind = "head file forged"           // the head's seal is not the audit key's
	AuditEmptied     AuditBreakKind = "emptied"                    // no entry, though the database holds what was audited
)

// AuditBreak is the first problem verification found: its kind and the
// entry it is at (for a truncation, the first entry missing).
type AuditBreak struct {
	Kind AuditBreakKind
	Seq  int64
	msg  string
}

func (b *AuditBreak) Error() string { return b.msg }

func broken(kind AuditBreakKind, seq int64, format string, args ...any) error {
	return apperr.Wrap(apperr.Invalid, &AuditBreak{Kind: kind, Seq: seq, msg: fmt.Sprintf(format, args...)})
}

// AuditReport is what verification read, for a report beside its verdict.
type AuditReport struct {
	Entries   int
	LastSeq   int64
	LastHash  string
	KeyedFrom int64      // the first entry with a MAC; 0: none
	KeyID     string     // the audit key of the store's ring; "" without one
	KeySource string     // where the ring comes from
	HeadPath  string     // the head file; "" when none is configured
	Head      *AuditHead // what it says of this database; nil if nothing
	// Lag is the number of entries newer than the head: written by another
	// machine sharing the database, or after a process stopped between
	// its commit and the head file, or the head file is an older copy.
	// Their MACs verify, but cutting them would not show here.
	Lag int64
}

// VerifyAudit verifies the audit log (see CheckAudit) and returns its
// number of entries.
func (s *Store) VerifyAudit(ctx context.Context) (int, error) {
	r, err := s.CheckAudit(ctx)
	return r.Entries, err
}

// CheckAudit recomputes the audit chain's hashes and MACs and compares its
// end with the head file, and returns what it found; the error is an
// *AuditBreak (coded invalid) naming the first entry at fault and how.
func (s *Store) CheckAudit(ctx context.Context) (AuditReport, error) {
	var rep AuditReport
	var key []byte
	ring, kerr := s.KeyRing()
	if kerr == nil {
		rep.KeyID, key = ring.AuditKey()
		rep.KeySource, rep.HeadPath = ring.Source, s.auditHeadPath(ring)
	}
	// The head first: it is written after the entries it counts commit, so
	// read before them it never counts entries this walk will not see.
	var others []string
	if rep.HeadPath != "" {
		var err error
		if rep.Head, others, err = s.readHead(rep.HeadPath); err != nil {
			return rep, err
		}
	}
	w := chainWalk{key: key, keyID: rep.KeyID, keySource: rep.KeySource}
	if rep.Head != nil {
		w.headSeq = rep.Head.Count
	}
	if err := s.walkAudit(ctx, &w); err != nil {
		return rep, err
	}
	if w.keyedFrom > 0 && key == nil {
		return rep, fmt.Errorf("the audit log is keyed from entry %d, and its MACs cannot be checked without the key: %w", w.keyedFrom, kerr)
	}
	rep.Entries, rep.LastSeq, rep.LastHash, rep.KeyedFrom = int(w.prev.Seq), w.prev.Seq, w.prev.Hash, w.keyedFrom
	if rep.Head != nil && (kerr != nil || !s.headSealOK(ring, rep.Head)) {
		if kerr != nil {
			return rep, fmt.Errorf("the audit head file's head cannot be checked without the audit key: %w", kerr)
		}
		return rep, broken(AuditHeadForged, rep.Head.Count, "audit head file %s: its head for this database (%d entries) is not sealed "+
			"under audit key %s: it was written without the key (e.g. the chain's tail cut and the new last entry copied into the head), "+
			"or by a version before heads were sealed. Once that is understood, 'deidcorpus audit anchor' writes a sealed head",
			rep.HeadPath, rep.Head.Count, rep.KeyID)
	}
	if rep.LastSeq == 0 && rep.Head == nil {
		if err := s.checkNotEmptied(ctx); err != nil {
			return rep, err
		}
	}
	err := rep.checkHead(w.headMAC, others)
	if err == nil && rep.Head != nil {
		rep.Lag = rep.LastSeq - rep.Head.Count
	}
	return rep, err
}

// checkNotEmptied reports an audit log without entries in a database that
// holds accounts or corpora: making either writes an entry, so the entries
// were deleted (and the head file with them, or it would say so).
func (s *Store) checkNotEmptied(ctx context.Context) error {
	ctx = auth.System(ctx)
	users, err := s.Client.User.Query().Count(ctx)
	if err != nil {
		return err
	}
	corpora, err := s.Client.Corpus.Query().Count(ctx)
	if err != nil {
		return err
	}
	if users+corpora == 0 {
		return nil
	}
	return broken(AuditEmptied, 1, "audit log emptied: it has no entry, but the database holds %d accounts and %d corpora, "+
		"whose making wrote entries: they were deleted, and the head file that counted them removed", users, corpora)
}

// walkAudit reads the chain in order, a page at a time, checking each entry.
func (s *Store) walkAudit(ctx context.Context, w *chainWalk) error {
	const page = 5000
	w.prev = &ent.AuditEntry{}
	for {
		entries, err := s.Client.AuditEntry.Query().Where(auditentry.SeqGT(w.prev.Seq)).
			Order(ent.Asc(auditentry.FieldSeq)).Limit(page).All(ctx)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := w.check(e); err != nil {
				return err
			}
		}
		if len(entries) < page {
			return nil
		}
	}
}

// chainWalk is the state of a walk along the chain.
type chainWalk struct {
	key              []byte
	keyID, keySource string
	prev             *ent.AuditEntry
	keyedFrom        int64
	headSeq          int64  // the entry the head file names
	headMAC          string // its MAC, once read
}

// check checks entry e, which comes after w.prev.
func (w *chainWalk) check(e *ent.AuditEntry) error {
	seq := w.prev.Seq
	switch {
	case e.Seq != seq+1:
		return broken(AuditRemoved, seq+1, "audit log broken: entry %d is missing (next is %d): removed", seq+1, e.Seq)
	case e.MAC == "" && w.keyedFrom > 0:
		return broken(AuditStripped, e.Seq, "audit log broken at entry %d: it has no MAC, though the chain is keyed from entry %d "+
			"(MAC removed, or written by a process without the key)", e.Seq, w.keyedFrom)
	case e.MAC == "":
		if err := w.checkPlain(e); err != nil {
			return err
		}
	default:
		if w.keyedFrom == 0 {
			w.keyedFrom = e.Seq
		}
		if err := w.checkKeyed(e); err != nil {
			return err
		}
	}
	if e.Seq == w.headSeq {
		w.headMAC = e.MAC
	}
	w.prev = e
	return nil
}

// checkPlain checks an entry from before MACs by its hash alone.
func (w *chainWalk) checkPlain(e *ent.AuditEntry) error {
	if e.PrevHash != w.prev.Hash {
		return broken(AuditEdited, e.Seq, "audit log broken at entry %d: it does not follow entry %d", e.Seq, w.prev.Seq)
	}
	if auditHash(e) != e.Hash {
		return broken(AuditEdited, e.Seq, "audit log broken at entry %d: its content was changed (edited: its hash does not match)", e.Seq)
	}
	return nil
}

// checkKeyed checks an entry's MAC, and tells an edit (its hash is wrong
// too) from a chain recomputed without the key (its hashes agree).
func (w *chainWalk) checkKeyed(e *ent.AuditEntry) error {
	if w.key == nil {
		return nil // reported once the walk is over
	}
	if e.MACKey != w.keyID {
		return broken(AuditWrongKey, e.Seq, "audit log broken at entry %d: its MAC names audit key %s, but the key ring (%s) gives %s: "+
			"verify with the key the server uses; if that is this one, the chain was rewritten from entry %d without it",
			e.Seq, e.MACKey, w.keySource, w.keyID, e.Seq)
	}
	if auditMAC(w.key, e, w.prev.MAC) == e.MAC {
		if e.PrevHash != w.prev.Hash || auditHash(e) != e.Hash {
			return broken(AuditEdited, e.Seq, "audit log broken at entry %d: its content was changed (edited: its hash was altered)", e.Seq)
		}
		return nil
	}
	if e.PrevHash != w.prev.Hash || auditHash(e) != e.Hash {
		return broken(AuditEdited, e.Seq, "audit log broken at entry %d: its content was changed (edited: neither its hash nor its MAC matches)", e.Seq)
	}
	if e.Seq == w.keyedFrom && e.Seq > 1 {
		return broken(AuditRecomputed, e.Seq, "audit log broken at entry %d: its content was changed, or an entry before it "+
			"(1 to %d, chained by plain hashes only), and the hashes recomputed without the key (recomputed without the key: "+
			"the plain hashes agree, the MAC does not)", e.Seq, e.Seq-1)
	}
	return broken(AuditRecomputed, e.Seq, "audit log broken at entry %d: its content was changed and the hashes from it on "+
		"recomputed without the key (recomputed without the key: the plain hashes agree, the MAC does not)", e.Seq)
}

// checkHead compares the chain's end with the head file; headMAC is the
// MAC of the entry it names.
func (rep *AuditReport) checkHead(headMAC string, others []string) error {
	h := rep.Head
	switch {
	case rep.HeadPath == "":
		return nil
	case h == nil && rep.KeyedFrom == 0:
		return nil // nothing keyed yet: the first keyed entry writes the head
	case h == nil:
		return broken(AuditHeadMissing, rep.LastSeq, "audit head file %s %s, though the chain is keyed from entry %d: it was removed, "+
			"or restored from a copy older than the keyed chain, or (on a PostgreSQL database several machines share) this machine "+
			"was never anchored. Entries cut from the end cannot be detected; once that is understood, 'deidcorpus audit anchor' "+
			"writes a new head", rep.HeadPath, missingWhat(others), rep.KeyedFrom)
	case rep.LastSeq < h.Count:
		return broken(AuditTruncated, rep.LastSeq+1, "audit log truncated: the database ends at entry %d, but the head file %s "+
			"(written %s) recorded %d entries: entries %d to %d were removed", rep.LastSeq, rep.HeadPath,
			h.Written.Format("2006-01-02 15:04:05Z"), h.Count, rep.LastSeq+1, h.Count)
	case rep.LastSeq >= h.KeyedFrom && (rep.KeyedFrom == 0 || rep.KeyedFrom > h.KeyedFrom):
		return broken(AuditStripped, h.KeyedFrom, "audit log broken at entry %d: the head file %s says the chain is keyed from it, "+
			"but it has no MAC (MAC removed, and the hashes recomputed)", h.KeyedFrom, rep.HeadPath)
	case headMAC != h.MAC:
		return broken(AuditReplaced, h.Count, "audit log broken at entry %d: it is not the entry the head file %s recorded "+
			"(written %s): the chain was replaced from there on, e.g. the database restored from an older backup and written since",
			h.Count, rep.HeadPath, h.Written.Format("2006-01-02 15:04:05Z"))
	}
	return nil
}

func missingWhat(others []string) string {
	if len(others) == 0 {
		return "is missing or empty"
	}
	slices.Sort(others)
	return "holds no head for this database (it holds " + strings.Join(others, ", ") + ": was the database moved?)"
}

// IsAuditBreak returns the break err reports, if it is one.
func IsAuditBreak(err error) (*AuditBreak, bool) {
	var b *AuditBreak
	ok := errors.As(err, &b)
	return b, ok
}

// Notes say, for a chain that verified, what protects which entries, and
// what verification could not see.
func (r AuditReport) Notes() []string {
	var out []string
	switch {
	case r.Entries == 0:
		return nil
	case r.KeyedFrom == 0:
		out = append(out, "no entry has a MAC: the chain is plain SHA-256, which whoever writes the database can recompute "+
			"(entries get MACs once a process with the key appends)")
	case r.KeyedFrom == 1:
		out = append(out, fmt.Sprintf("entries 1 to %d are MACed under audit key %s (from %s)", r.LastSeq, r.KeyID, r.KeySource))
	default:
		out = append(out, fmt.Sprintf("entries %d to %d are MACed under audit key %s (from %s); entries 1 to %d predate MACs: "+
			"entry %d seals them as they were when it was written, and a change made to them before then cannot be detected",
			r.KeyedFrom, r.LastSeq, r.KeyID, r.KeySource, r.KeyedFrom-1, r.KeyedFrom))
	}
	switch {
	case r.HeadPath == "" && r.KeyID != "":
		out = append(out, "no audit head file: the key comes from "+keys.KeyEnv+" and "+keys.AuditHeadEnv+
			" is not set, so entries cut from the end of the log cannot be detected")
	case r.Head == nil:
	case r.Lag == 0:
		out = append(out, fmt.Sprintf("head file %s: %d entries, last written %s: the database ends there", r.HeadPath,
			r.Head.Count, r.Head.Written.Format("2006-01-02 15:04:05Z")))
	default:
		out = append(out, fmt.Sprintf("head file %s is behind the database: it recorded %d entries (written %s); entries %d to %d "+
			"are newer (another machine sharing the database wrote them, or a process stopped before updating the file, "+
			"or the file was restored from an older copy): their MACs verify, but cutting them would not be detected here",
			r.HeadPath, r.Head.Count, r.Head.Written.Format("2006-01-02 15:04:05Z"), r.Head.Count+1, r.LastSeq))
	}
	return out
}
