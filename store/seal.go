package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/internal/keys"
	"deidcorpus/pipeline"
)

// An original corpus's note text and its spans' text, comments and source
// ids are sealed at rest: AES-256-GCM under a data key of the corpus's own,
// itself stored wrapped (encrypted) by the key ring's current key in the
// corpus row (data_key, data_key_id). A sealed value is base64 of nonce and
// ciphertext, kept in the value's own column, so that PostgreSQL's text
// columns hold it and no table changes shape; its additional data names the
// field and the corpus, so a value copied into another column or corpus
// does not open. Surrogate corpora have no data key and stay in clear. An
// empty value stays empty.
//
// Every write of those fields seals here (the ent hooks of installSeals and
// rowInsert.seal for raw inserts) and every read opens here (the
// interceptor of installSeals for ent's rows, corpusSeal.open for the raw
// readers), so the rest of the store, and all above it, see clear text.

// Sealed fields, named in each value's additional data.
const (
	fieldDocText    = "document text"
	fieldSpanText   = "span text"
	fieldSpanNote   = "span comment"
	fieldSpanSource = "span source id"
)

// corpusSeal seals and opens one corpus's values; a nil one is a corpus in
// clear, whose values pass through.
type corpusSeal struct {
	corpusID int
	aead     cipher.AEAD
}

// sealCache keeps the corpora's unwrapped data keys and the corpus of each
// annotation set, which never change once made.
type sealCache struct {
	mu      sync.RWMutex
	corpora map[int]*corpusSeal
	sets    map[int]int
}

// dataKeyAD binds a wrapped data key to its purpose.
var dataKeyAD = []byte("deidcorpus corpus data key")

func newCorpusSeal(id int, key []byte) (*corpusSeal, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &corpusSeal{corpusID: id, aead: aead}, nil
}

// newDataKey draws a corpus's data key and wraps it under the ring.
func newDataKey(r *keys.Ring) (key, wrapped []byte, keyID string) {
	key = make([]byte, keys.KeySize)
	rand.Read(key) // never fails (crypto/rand)
	keyID, wrapped = r.Encrypt(key, dataKeyAD)
	return key, wrapped, keyID
}

func (c *corpusSeal) ad(field string) []byte {
	return []byte(field + "\x00corpus " + strconv.Itoa(c.corpusID))
}

// tagID is a span id as annotation tools number them ("T12", "P3"): a
// counter, no PHI (surrogate corpora keep them too), left in clear. A
// sealed value is base64 of 28 bytes or more, never this short: open tells
// the two apart by the form alone. Every other id is sealed: an id can
// carry an original (issue 60, finding 1).
var tagID = regexp.MustCompile(`^[A-Za-z]{0,3}[0-9]{1,9}$`)

// clearByForm tells that a value of field is kept in clear by its form.
func clearByForm(field string, v []byte) bool {
	return field == fieldSpanSource && len(v) <= 12 && tagID.Match(v)
}

// seal returns what a column stores for a value of field.
func (c *corpusSeal) seal(field, plain string) string {
	if c == nil || plain == "" || clearByForm(field, []byte(plain)) {
		return plain
	}
	nonce := make([]byte, c.aead.NonceSize(), c.aead.NonceSize()+len(plain)+c.aead.Overhead())
	rand.Read(nonce)
	return base64.RawStdEncoding.EncodeToString(c.aead.Seal(nonce, nonce, []byte(plain), c.ad(field)))
}

// open returns the clear value of a column's stored value of field.
func (c *corpusSeal) open(field string, stored []byte) ([]byte, error) {
	if c == nil || len(stored) == 0 || clearByForm(field, stored) {
		return stored, nil
	}
	raw := make([]byte, base64.RawStdEncoding.DecodedLen(len(stored)))
	n, err := base64.RawStdEncoding.Decode(raw, stored)
	ns := c.aead.NonceSize()
	if err != nil || n < ns+c.aead.Overhead() {
		return nil, fmt.Errorf("corpus %d: a %s is not sealed as its corpus's values are", c.corpusID, field)
	}
	out, err := c.aead.Open(raw[ns:ns], raw[:ns], raw[ns:n], c.ad(field))
	if err != nil {
		return nil, fmt.Errorf("corpus %d: a %s: %w", c.corpusID, field, keys.ErrDecrypt)
	}
	return out, nil
}

// openString is open for a string column.
func (c *corpusSeal) openString(field, stored string) (string, error) {
	if c == nil || stored == "" {
		return stored, nil
	}
	b, err := c.open(field, []byte(stored))
	return string(b), err
}

// corpusSeal returns the seal of a corpus: nil for a corpus in clear (or
// gone). It fails, saying what to configure, when the corpus is sealed and
// the store has no key that unwraps its data key.
func (s *Store) corpusSeal(ctx context.Context, corpusID int) (*corpusSeal, error) {
	s.seals.mu.RLock()
	c, ok := s.seals.corpora[corpusID]
	s.seals.mu.RUnlock()
	if ok {
		return c, nil
	}
	var wrapped []byte
	var keyID string
	err := s.reader().QueryRowContext(ctx, s.rebind(`SELECT data_key, data_key_id FROM corpora WHERE id = ?`), corpusID).
		Scan(&wrapped, &keyID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(wrapped) > 0 {
		if c, err = s.unwrapDataKey(corpusID, keyID, wrapped); err != nil {
			return nil, err
		}
	}
	s.keepSeal(corpusID, c)
	return c, nil
}

// unwrapDataKey opens a corpus's wrapped data key with the ring.
func (s *Store) unwrapDataKey(corpusID int, keyID string, wrapped []byte) (*corpusSeal, error) {
	r, err := s.KeyRing()
	if err != nil {
		return nil, fmt.Errorf("corpus %d holds original notes, sealed at rest: %w", corpusID, err)
	}
	key, err := r.Decrypt(keyID, wrapped, dataKeyAD)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, fmt.Errorf("corpus %d holds original notes, sealed at rest, and the key ring does not open its data key: %w", corpusID, err))
	}
	return newCorpusSeal(corpusID, key)
}

func (s *Store) keepSeal(corpusID int, c *corpusSeal) {
	s.seals.mu.Lock()
	if s.seals.corpora == nil {
		s.seals.corpora, s.seals.sets = map[int]*corpusSeal{}, map[int]int{}
	}
	s.seals.corpora[corpusID] = c
	s.seals.mu.Unlock()
}

// setSeal returns the seal of an annotation set's corpus.
func (s *Store) setSeal(ctx context.Context, setID int) (*corpusSeal, error) {
	s.seals.mu.RLock()
	corpusID, ok := s.seals.sets[setID]
	s.seals.mu.RUnlock()
	if !ok {
		err := s.reader().QueryRowContext(ctx, s.rebind(`SELECT corpus_id FROM annotation_sets WHERE id = ?`), setID).Scan(&corpusID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		s.keepSet(setID, corpusID)
	}
	return s.corpusSeal(ctx, corpusID)
}

func (s *Store) keepSet(setID, corpusID int) {
	s.seals.mu.Lock()
	if s.seals.sets == nil {
		s.seals.corpora, s.seals.sets = map[int]*corpusSeal{}, map[int]int{}
	}
	s.seals.sets[setID] = corpusID
	s.seals.mu.Unlock()
}

// openSpan opens a span row's sealed fields in place.
func (c *corpusSeal) openSpan(sp *ent.Span) (err error) {
	if c == nil {
		return nil
	}
	if sp.Text, err = c.openString(fieldSpanText, sp.Text); err != nil {
		return err
	}
	if sp.Comment, err = c.openString(fieldSpanNote, sp.Comment); err != nil {
		return err
	}
	sp.SourceID, err = c.openString(fieldSpanSource, sp.SourceID)
	return err
}

// wantsDataKey tells whether a corpus about to be created holds original
// notes: every corpus but a surrogate one.
func wantsDataKey(m *ent.CorpusMutation) bool {
	k, ok := m.Kind()
	return !ok || k != corpus.KindSurrogate
}

// openPipelineSpan opens a span read raw (loadSpans) in place.
func (c *corpusSeal) openPipelineSpan(sp *pipeline.Span) (err error) {
	if sp.Text, err = c.openString(fieldSpanText, sp.Text); err != nil {
		return err
	}
	if sp.Comment, err = c.openString(fieldSpanNote, sp.Comment); err != nil {
		return err
	}
	sp.ID, err = c.openString(fieldSpanSource, sp.ID)
	return err
}

// keyFileLost refuses to make a new default key file for a SQLite database
// whose corpora are sealed under the key file it had: a new key would open
// none of them, and the corpora would read as undecryptable instead of as
// what they are, a database whose key file is missing.
func (s *Store) keyFileLost(cfg keys.Config) error {
	if cfg.File != "" || cfg.Key != "" || cfg.DefaultFile == "" {
		return nil
	}
	if _, err := os.Stat(cfg.DefaultFile); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var sealed int
	err := s.reader().QueryRow(`SELECT COUNT(*) FROM corpora WHERE data_key_id <> ''`).Scan(&sealed)
	if err != nil || sealed == 0 {
		return nil // a new database, or one with nothing sealed: the key file is made
	}
	return apperr.New(apperr.Invalid, "%d corpora of this database hold original notes sealed under its key file %s, which is missing: "+
		"restore the key file (or name it with %s or --key-file); without it they cannot be read", sealed, cfg.DefaultFile, keys.FileEnv)
}
