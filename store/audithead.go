package store

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"deidcorpus/ent"
	"deidcorpus/ent/auditentry"
	"deidcorpus/internal/keys"
)

// The audit chain's head (how many entries it had, and the last one's hash
// and MAC) is kept in a file outside the database, beside the key file: a
// chain cut at its end is still a chain whose every MAC verifies, and only
// a count kept elsewhere shows what is missing.
//
// The head is written after the entries' transaction commits, never before
// (a new head, startHead, names entries committed already): a head ahead of
// the database would report a commit that failed, or a
// crash, as a truncation. Written after, a crash leaves it behind, which
// verification reports as entries newer than the head, not as tampering.
// Writes only move it forward (several steps, processes or machines finish
// in any order), under a lock file beside it, each a temporary file synced
// and renamed over the old one.
//
// One head file may serve several databases (one key file named by
// DEIDCORPUS_KEY_FILE for several): it holds a head per database, named by
// the database's file or PostgreSQL address.

// AuditHead is what the head file says of one database's chain.
type AuditHead struct {
	Count     int64     `json:"count"`      // entries in the chain; the last is entry Count
	Hash      string    `json:"hash"`       // entry Count's hash
	MAC       string    `json:"mac"`        // entry Count's MAC
	KeyID     string    `json:"key_id"`     // the audit key that made it
	KeyedFrom int64     `json:"keyed_from"` // the first entry with a MAC
	Written   time.Time `json:"written"`
	// Seal is an HMAC of the fields above (and the database's name) under
	// the audit key: whoever cuts the chain's tail cannot copy the new
	// tail's count, hash and MAC into the head without the key.
	Seal string `json:"seal"`
}

// sealHead returns h's seal for this database under the ring's audit key.
func (s *Store) sealHead(r *keys.Ring, h AuditHead) string {
	_, key := r.AuditKey()
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "deidcorpus audit head v1\x00%s\x00%d\x00%s\x00%s\x00%s\x00%d\x00%s", s.chainName(), h.Count, h.Hash, h.MAC,
		h.KeyID, h.KeyedFrom, h.Written.UTC().Format(time.RFC3339))
	return hex.EncodeToString(m.Sum(nil))
}

// sealed seals h with the store's ring (loaded already: only a process
// with the key writes keyed entries and heads).
func (s *Store) sealed(h AuditHead) (AuditHead, error) {
	r, err := s.KeyRing()
	if err != nil {
		return h, err
	}
	h.Seal = s.sealHead(r, h)
	return h, nil
}

// headSealOK tells whether h's seal is right under r's audit key.
func (s *Store) headSealOK(r *keys.Ring, h *AuditHead) bool {
	return hmac.Equal([]byte(h.Seal), []byte(s.sealHead(r, *h)))
}

type headFile struct {
	Version int                  `json:"version"`
	Chains  map[string]AuditHead `json:"chains"`
}

// auditHeadPath is the head file of the ring's chain: the one configured,
// else the key file's path + ".audit-head"; "" for a ring with no file
// (DEIDCORPUS_KEY), which then keeps no head.
func (s *Store) auditHeadPath(r *keys.Ring) string {
	if s.keyCfg.AuditHead != "" {
		return s.keyCfg.AuditHead
	}
	if r != nil && r.Path != "" {
		return r.Path + ".audit-head"
	}
	return ""
}

// chainName names the database in a head file: its file's absolute path,
// or its PostgreSQL host, port and database (not the user, password or
// options, which may differ between the processes that share it).
func (s *Store) chainName() string {
	d := ParseDSN(s.DSN)
	if f := d.File(); f != "" {
		if abs, err := filepath.Abs(f); err == nil {
			f = abs
		}
		return "sqlite:" + f
	}
	if u, err := url.Parse(d.URL); d.Postgres && err == nil {
		return "postgres://" + strings.ToLower(u.Hostname()) + ":" + cmp.Or(u.Port(), "5432") + u.Path
	}
	return s.DSN
}

// readHead reads this database's head from the head file at path; nil if
// the file or the database's head in it is missing. others names the
// databases the file holds heads of, for a message when this one is missing.
func (s *Store) readHead(path string) (head *AuditHead, others []string, err error) {
	hf, err := readHeadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if h, ok := hf.Chains[s.chainName()]; ok {
		return &h, nil, nil
	}
	for name := range hf.Chains {
		others = append(others, name)
	}
	return nil, others, nil
}

func readHeadFile(path string) (headFile, error) {
	var hf headFile
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return hf, nil
	}
	if err != nil {
		return hf, fmt.Errorf("read the audit head file: %w", err)
	}
	if err := json.Unmarshal(data, &hf); err != nil || hf.Version != 1 {
		return hf, fmt.Errorf("the audit head file %s is not a deidcorpus audit head file (version 1)", path)
	}
	return hf, nil
}

// headUpdate is a head to write once the entries it names are committed.
type headUpdate struct {
	path string
	head AuditHead
}

// writeHead moves this database's head forward to u.head, unless the file
// holds a head as far on already (another step finished first), or none
// (removed meanwhile: left for verify to report).
func (s *Store) writeHead(ctx context.Context, u headUpdate) error {
	var serr error
	err := s.withHeadLock(ctx, u.path, func(hf *headFile) bool {
		cur, ok := hf.Chains[s.chainName()]
		if !ok || cur.Count >= u.head.Count {
			return false
		}
		u.head.KeyedFrom = cur.KeyedFrom
		hf.Chains[s.chainName()], serr = s.sealed(u.head)
		return serr == nil
	})
	return cmp.Or(serr, err)
}

// withHeadLock runs change on the head file under its lock (this process's
// steps, then other processes'), and writes the file if change says so.
func (s *Store) withHeadLock(ctx context.Context, path string, change func(*headFile) bool) error {
	s.headMu.Lock()
	defer s.headMu.Unlock()
	unlock, err := lockFile(ctx, path+".lock")
	if err != nil {
		return fmt.Errorf("lock the audit head file: %w", err)
	}
	defer unlock()
	hf, err := readHeadFile(path)
	if err != nil {
		return err
	}
	if hf.Chains == nil {
		hf = headFile{Version: 1, Chains: map[string]AuditHead{}}
	}
	if !change(&hf) {
		return nil
	}
	data, err := json.MarshalIndent(hf, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileSynced(path, append(data, '\n')); err != nil {
		return fmt.Errorf("write the audit head file: %w", err)
	}
	return nil
}

// writeFileSynced replaces path by data (mode 0600) so that a crash leaves
// the old file or the new one: a synced temporary file renamed over it,
// then the directory synced so that the rename lasts.
func writeFileSynced(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// planHead decides, in the transaction appending keyed entries after the
// tail (nil for an empty chain), which holds the chain's lock, whether the
// head file may be moved to the new last entry: not when it shows that
// entries were cut or replaced, nor when it is missing though the chain was
// keyed already (both kept as they are, as evidence, for verify to report).
func (s *Store) planHead(ctx context.Context, tx *ent.Tx, path, keyID string, tail *ent.AuditEntry) (ok bool, err error) {
	head, _, err := s.readHead(path)
	if err != nil {
		return false, err
	}
	if tail == nil {
		tail = &ent.AuditEntry{}
	}
	switch {
	case head == nil && tail.MAC != "":
		s.warnOnce("audit head missing", "the audit head file holds no head for this database though its audit chain is keyed: "+
			"not writing a new one; run 'deidcorpus audit verify', then 'deidcorpus audit anchor'", "headFile", path)
		return false, nil
	case head == nil:
		return true, s.startHead(ctx, path, keyID, tail)
	case head.Count > tail.Seq:
		s.warnOnce("audit truncated", "the audit log has fewer entries than its head file recorded: entries were cut; "+
			"keeping the head file as it is; run 'deidcorpus audit verify'", "headFile", path)
		return false, nil
	case !s.headSealed(head):
		s.warnOnce("audit head forged", "the audit head file's head for this database has no valid seal: "+
			"it was written without the audit key (or before heads were sealed); keeping it as it is; run 'deidcorpus audit verify'",
			"headFile", path)
		return false, nil
	case head.Count == 0:
		return true, nil
	}
	mac := tail.MAC
	if head.Count < tail.Seq {
		e, err := tx.AuditEntry.Query().Where(auditentry.Seq(head.Count)).Only(ctx)
		if err != nil {
			return false, err
		}
		mac = e.MAC
	}
	if mac != head.MAC {
		s.warnOnce("audit replaced", "the audit log's entry that its head file recorded was replaced: "+
			"keeping the head file as it is; run 'deidcorpus audit verify'", "headFile", path, "entry", head.Count)
		return false, nil
	}
	return true, nil
}

// startHead writes the head of a chain whose first keyed entries are being
// appended after tail (empty, or plain entries from before MACs): before
// they commit, naming the end that is committed, so that a step that comes
// after this one but reads the file before its head is written finds one.
func (s *Store) startHead(ctx context.Context, path, keyID string, tail *ent.AuditEntry) error {
	var serr error
	err := s.withHeadLock(ctx, path, func(hf *headFile) bool {
		if _, ok := hf.Chains[s.chainName()]; ok {
			return false
		}
		hf.Chains[s.chainName()], serr = s.sealed(AuditHead{Count: tail.Seq, Hash: tail.Hash, KeyID: keyID, KeyedFrom: tail.Seq + 1,
			Written: time.Now().UTC().Truncate(time.Second)})
		return serr == nil
	})
	return cmp.Or(serr, err)
}

// headSealed tells whether head carries a valid seal under the store's key.
func (s *Store) headSealed(head *AuditHead) bool {
	r, err := s.KeyRing()
	return err == nil && s.headSealOK(r, head)
}

// warnOnce logs a problem of the audit log once per process: every request
// appends, and a log line per request would bury it.
func (s *Store) warnOnce(kind, msg string, args ...any) {
	if _, loaded := s.auditWarned.LoadOrStore(kind, true); !loaded {
		s.logger.Error(msg, args...)
	}
}

// AnchorAudit writes this database's head into the head file from its
// chain's current end, replacing what the file held for it: after a head
// file was lost, on a machine that shares a PostgreSQL database and has no
// head yet, or once a reported truncation is understood. It returns the
// head it replaced (nil if none) and the new one.
func (s *Store) AnchorAudit(ctx context.Context) (old *AuditHead, head AuditHead, path string, err error) {
	r, err := s.KeyRing()
	if err != nil {
		return nil, head, "", err
	}
	if path = s.auditHeadPath(r); path == "" {
		return nil, head, "", fmt.Errorf("no audit head file: the key comes from %s; set %s to a file outside the database", keys.KeyEnv, keys.AuditHeadEnv)
	}
	last, err := s.Client.AuditEntry.Query().Order(ent.Desc(auditentry.FieldSeq)).First(ctx)
	if err == nil && last.MAC == "" {
		err = fmt.Errorf("the audit log's last entry %d has no MAC: nothing to anchor to", last.Seq)
	}
	var first *ent.AuditEntry
	if err == nil {
		first, err = s.Client.AuditEntry.Query().Where(auditentry.MACNEQ("")).Order(ent.Asc(auditentry.FieldSeq)).First(ctx)
	}
	if err != nil {
		return nil, head, path, err
	}
	head = AuditHead{Count: last.Seq, Hash: last.Hash, MAC: last.MAC, KeyID: last.MACKey, KeyedFrom: first.Seq,
		Written: time.Now().UTC().Truncate(time.Second)}
	head.Seal = s.sealHead(r, head)
	err = s.withHeadLock(ctx, path, func(hf *headFile) bool {
		if h, ok := hf.Chains[s.chainName()]; ok {
			old = &h
		}
		hf.Chains[s.chainName()] = head
		return true
	})
	return old, head, path, err
}
