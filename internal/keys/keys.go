// Package keys holds the key ring that encrypts PHI at rest: the original
// values of surrogate mappings. Every key has an id; the newest key encrypts
// (AES-256-GCM with a random nonce, the key id bound to the ciphertext as
// additional data) and every key decrypts, so keys can be rotated. Lookups go
// through an HMAC-SHA256 keyed hash under a separate lookup key that does not
// change when the encryption keys rotate, so stored hashes stay valid.
//
// Keys come from a key file (JSON, mode 0600) or from one base64 key in the
// environment (DEIDCORPUS_KEY). A file holds its own random lookup key; an
// environment key derives both its encryption key and its lookup key from the
// one secret (HMAC-SHA256 with distinct labels). Rotation writes a new key
// into a file; an environment key is carried over into the file it rotates to,
// lookup key included, so hashes made under it stay valid.
//
// The audit log's records are chained by a MAC under a key derived from the
// lookup key too (AuditKey): it lives wherever the mapping keys live, outside
// the database, and survives their rotation.
//
// Nothing in this package puts plaintext into an error message.
package keys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Environment variables naming the key.
const (
	FileEnv = "DEIDCORPUS_KEY_FILE" // path of a key file
	KeyEnv  = "DEIDCORPUS_KEY"      // one base64 key of 32 bytes
	// AuditHeadEnv names the file that keeps the audit chain's head outside
	// the database; by default it lies beside the key file.
	AuditHeadEnv = "DEIDCORPUS_AUDIT_HEAD"
)

// KeySize is the size of every key: AES-256 and HMAC-SHA256.
const KeySize = 32

// ErrUnknownKey means a ciphertext names a key the ring does not hold.
var ErrUnknownKey = errors.New("encrypted with a key this key ring does not hold")

// ErrDecrypt means a ciphertext failed authentication: wrong key or altered data.
var ErrDecrypt = errors.New("decryption failed: wrong key or altered data")

// Key is one encryption key.
type Key struct {
	ID      string    `json:"id"`
	Secret  []byte    `json:"key"` // base64 in JSON
	Created time.Time `json:"created"`
}

// Ring is a set of encryption keys and one lookup key. It is safe for
// concurrent use once built.
type Ring struct {
	keys   []Key // oldest first; the last encrypts
	lookup []byte
	aeads  map[string]cipher.AEAD
	// Source says where the ring came from (a file path, or the environment
	// variable's name), for messages. Path is the key file, if any.
	Source string
	Path   string
}

// file is the key file's JSON form.
type file struct {
	Version int    `json:"version"`
	Lookup  []byte `json:"lookup"`
	Keys    []Key  `json:"keys"`
}

func newRing(ks []Key, lookup []byte) (*Ring, error) {
	if len(ks) == 0 {
		return nil, errors.New("no encryption key")
	}
	if len(lookup) != KeySize {
		return nil, fmt.Errorf("the lookup key must be %d bytes, not %d", KeySize, len(lookup))
	}
	r := &Ring{keys: ks, lookup: lookup, aeads: map[string]cipher.AEAD{}}
	for _, k := range ks {
		if k.ID == "" {
			return nil, errors.New("a key has no id")
		}
		if _, dup := r.aeads[k.ID]; dup {
			return nil, fmt.Errorf("key id %q appears twice", k.ID)
		}
		if len(k.Secret) != KeySize {
			return nil, fmt.Errorf("key %s must be %d bytes, not %d", k.ID, KeySize, len(k.Secret))
		}
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		r.aeads[k.ID] = aead
	}
	return r, nil
}

func random(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return b
}

// New makes a ring with one fresh random key and a fresh lookup key.
func New() *Ring {
	r, err := newRing([]Key{{ID: "k1", Secret: random(KeySize), Created: time.Now().UTC().Truncate(time.Second)}}, random(KeySize))
	if err != nil {
		panic(err)
	}
	return r
}

func derive(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("deidcorpus " + label + " v1"))
	return m.Sum(nil)
}

// FromBase64 makes a ring from one base64 secret of 32 bytes (the form of
// DEIDCORPUS_KEY). The encryption key, its id and the lookup key all derive
// from it, so the same secret gives the same ring.
func FromBase64(s string) (*Ring, error) {
	s = strings.TrimSpace(s)
	secret, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if secret, err = base64.RawStdEncoding.DecodeString(s); err != nil {
			return nil, fmt.Errorf("%s is not valid base64", KeyEnv)
		}
	}
	if len(secret) != KeySize {
		return nil, fmt.Errorf("%s must hold %d bytes (base64), not %d; make one with: head -c 32 /dev/urandom | base64", KeyEnv, KeySize, len(secret))
	}
	id := "env-" + hex.EncodeToString(derive(secret, "key id")[:4])
	r, err := newRing([]Key{{ID: id, Secret: derive(secret, "encryption")}}, derive(secret, "lookup"))
	if err != nil {
		return nil, err
	}
	r.Source = KeyEnv
	return r, nil
}

// Load reads a key file.
func Load(path string) (*Ring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("key file %s is not a deidcorpus key file: %v", path, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("key file %s has version %d; this program reads version 1", path, f.Version)
	}
	r, err := newRing(f.Keys, f.Lookup)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	r.Source, r.Path = path, path
	return r, nil
}

// Save writes the ring to a key file (mode 0600) atomically: a temporary file
// in the same directory renamed over the old one.
func (r *Ring) Save(path string) error {
	data, err := json.MarshalIndent(file{Version: 1, Lookup: r.lookup, Keys: r.keys}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write key file: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	r.Source, r.Path = path, path
	return nil
}

// Create makes a key file with one fresh key at path, which must not exist.
func Create(path string) (*Ring, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create key file: %w", err)
	}
	f.Close()
	r := New()
	if err := r.Save(path); err != nil {
		os.Remove(path)
		return nil, err
	}
	return r, nil
}

// Rotate adds a fresh key that encrypts from now on; the older keys still
// decrypt and the lookup key stays. It returns the new key's id.
func (r *Ring) Rotate() (string, error) {
	n := 0
	for _, k := range r.keys {
		if v, err := strconv.Atoi(strings.TrimPrefix(k.ID, "k")); err == nil && strings.HasPrefix(k.ID, "k") && v > n {
			n = v
		}
	}
	id := "k" + strconv.Itoa(n+1)
	ks := append(append([]Key(nil), r.keys...), Key{ID: id, Secret: random(KeySize), Created: time.Now().UTC().Truncate(time.Second)})
	nr, err := newRing(ks, r.lookup)
	if err != nil {
		return "", err
	}
	r.keys, r.aeads = nr.keys, nr.aeads
	return id, nil
}

// Current is the id of the key that encrypts.
func (r *Ring) Current() string { return r.keys[len(r.keys)-1].ID }

// IDs lists the key ids, oldest first.
func (r *Ring) IDs() []string {
	out := make([]string, len(r.keys))
	for i, k := range r.keys {
		out[i] = k.ID
	}
	return out
}

// Keys lists the keys' ids and creation times (not their secrets), oldest first.
func (r *Ring) Keys() []Key {
	out := make([]Key, len(r.keys))
	for i, k := range r.keys {
		out[i] = Key{ID: k.ID, Created: k.Created}
	}
	return out
}

// Has tells whether the ring holds a key id.
func (r *Ring) Has(id string) bool { _, ok := r.aeads[id]; return ok }

// Encrypt seals plaintext with the current key and returns the key id and
// the ciphertext (nonce followed by the sealed data). ad is additional data
// the ciphertext is bound to (e.g. the row's lookup hash); Decrypt needs the
// same.
func (r *Ring) Encrypt(plaintext, ad []byte) (keyID string, ciphertext []byte) {
	keyID = r.Current()
	aead := r.aeads[keyID]
	nonce := random(aead.NonceSize())
	return keyID, aead.Seal(nonce, nonce, plaintext, additional(keyID, ad))
}

// Decrypt opens a ciphertext made by Encrypt under key keyID.
func (r *Ring) Decrypt(keyID string, ciphertext, ad []byte) ([]byte, error) {
	aead, ok := r.aeads[keyID]
	if !ok {
		return nil, fmt.Errorf("key %q: %w (ring from %s holds %s)", keyID, ErrUnknownKey, r.Source, strings.Join(r.IDs(), ", "))
	}
	n := aead.NonceSize()
	if len(ciphertext) < n+aead.Overhead() {
		return nil, fmt.Errorf("key %q: %w (ciphertext too short)", keyID, ErrDecrypt)
	}
	out, err := aead.Open(nil, ciphertext[:n], ciphertext[n:], additional(keyID, ad))
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", keyID, ErrDecrypt)
	}
	return out, nil
}

func additional(keyID string, ad []byte) []byte {
	return append([]byte(keyID+"\x00"), ad...)
}

// Hash is the keyed hash (HMAC-SHA256 under the lookup key, hex) of the
// parts, each length-prefixed so that different splits differ. Equal inputs
// give equal hashes under every encryption key.
func (r *Ring) Hash(parts ...string) string {
	m := hmac.New(sha256.New, r.lookup)
	for _, p := range parts {
		m.Write([]byte(strconv.Itoa(len(p)) + ":"))
		m.Write([]byte(p))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// AuditKey is the key that chains the audit log's records (HMAC-SHA256) and
// its id, a fingerprint that records name so that verification tells a
// wrong key from a rewritten record. It derives from the lookup key, which
// rotation keeps (so records MACed before a rotation still verify), under
// its own label (so an audit MAC is never a lookup hash of a chosen string).
func (r *Ring) AuditKey() (id string, key []byte) {
	key = derive(r.lookup, "audit chain")
	return "audit-" + hex.EncodeToString(derive(key, "audit key id")[:4]), key
}

// Config says where a ring comes from: an explicit key file, a base64 key
// (DEIDCORPUS_KEY), or, when neither is given, a default key file created on
// first use (SQLite keeps its key next to the database). With none of the
// three, Open fails: PostgreSQL needs an explicit key.
//
// AuditHead is the audit chain's head file when given; otherwise it is the
// key file's path + ".audit-head", and a ring from DEIDCORPUS_KEY has none.
type Config struct {
	File        string
	Key         string
	DefaultFile string
	AuditHead   string
}

// FromEnv fills a Config from DEIDCORPUS_KEY_FILE, DEIDCORPUS_KEY and
// DEIDCORPUS_AUDIT_HEAD.
func FromEnv(getenv func(string) string) Config {
	return Config{File: getenv(FileEnv), Key: getenv(KeyEnv), AuditHead: getenv(AuditHeadEnv)}
}

// ErrNoKey means no key is configured and none may be created.
var ErrNoKey = errors.New("surrogate mappings and original corpora are encrypted and no key is configured: set " + FileEnv +
	" (or --key-file) to a key file, or " + KeyEnv + " to a base64 key of 32 bytes; create a key file with 'deidcorpus keys init --key-file PATH'")

// Open loads the ring the Config names. created tells that it made the
// default key file just now.
func (c Config) Open() (r *Ring, created bool, err error) {
	switch {
	case c.File != "" && c.Key != "":
		return nil, false, fmt.Errorf("both %s and %s are set: use one", FileEnv, KeyEnv)
	case c.File != "":
		r, err = Load(c.File)
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, fmt.Errorf("key file %s does not exist; create it with 'deidcorpus keys init --key-file %s'", c.File, c.File)
		}
		return r, false, err
	case c.Key != "":
		r, err = FromBase64(c.Key)
		return r, false, err
	case c.DefaultFile != "":
		r, err = Load(c.DefaultFile)
		if errors.Is(err, os.ErrNotExist) {
			r, err = Create(c.DefaultFile)
			if errors.Is(err, os.ErrExist) { // another process made it meanwhile
				r, err = Load(c.DefaultFile)
				return r, false, err
			}
			return r, err == nil, err
		}
		return r, false, err
	}
	return nil, false, ErrNoKey
}
