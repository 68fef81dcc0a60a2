package keys

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRoundTrip(t *testing.T) {
	r := New()
	id, ct := r.Encrypt([]byte("John Smith"), []byte("ad"))
	require.Equal(t, "k1", id)
	require.NotContains(t, string(ct), "John Smith")
	pt, err := r.Decrypt(id, ct, []byte("ad"))
	require.NoError(t, err)
	require.Equal(t, "John Smith", string(pt))

	// A random nonce: the same plaintext encrypts differently each time.
	_, ct2 := r.Encrypt([]byte("John Smith"), []byte("ad"))
	require.NotEqual(t, ct, ct2)
}

func TestTamperDetection(t *testing.T) {
	r := New()
	id, ct := r.Encrypt([]byte("Boston General"), []byte("h1"))
	for i := range ct {
		bad := append([]byte(nil), ct...)
		bad[i] ^= 0x01
		_, err := r.Decrypt(id, bad, []byte("h1"))
		require.ErrorIs(t, err, ErrDecrypt, "byte %d", i)
	}
	_, err := r.Decrypt(id, ct, []byte("h2"))
	require.ErrorIs(t, err, ErrDecrypt, "other additional data")
	_, err = r.Decrypt(id, ct[:10], []byte("h1"))
	require.ErrorIs(t, err, ErrDecrypt, "truncated")
	require.NotContains(t, err.Error(), "Boston")
}

func TestWrongKeyFailsClearly(t *testing.T) {
	a, b := New(), New()
	id, ct := a.Encrypt([]byte("555-0100"), nil)
	_, err := b.Decrypt(id, ct, nil)
	require.ErrorIs(t, err, ErrDecrypt)
	require.NotContains(t, err.Error(), "555-0100")
	_, err = b.Decrypt("k7", ct, nil)
	require.ErrorIs(t, err, ErrUnknownKey)
	require.Contains(t, err.Error(), `"k7"`)
}

func TestRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.key")
	r, err := Create(path)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	_, err = Create(path)
	require.ErrorIs(t, err, os.ErrExist)

	h := r.Hash("Jane Doe")
	oldID, oldCT := r.Encrypt([]byte("Jane Doe"), nil)
	id, err := r.Rotate()
	require.NoError(t, err)
	require.Equal(t, "k2", id)
	require.Equal(t, "k2", r.Current())
	require.NoError(t, r.Save(path))

	r2, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, []string{"k1", "k2"}, r2.IDs())
	require.Equal(t, h, r2.Hash("Jane Doe"), "the lookup hash survives rotation")
	pt, err := r2.Decrypt(oldID, oldCT, nil)
	require.NoError(t, err, "older keys still decrypt")
	require.Equal(t, "Jane Doe", string(pt))
	newID, newCT := r2.Encrypt([]byte("Jane Doe"), nil)
	require.Equal(t, "k2", newID)
	_, err = New().Decrypt(newID, newCT, nil)
	require.Error(t, err)
}

func TestHash(t *testing.T) {
	r := New()
	require.Equal(t, r.Hash("a", "bc"), r.Hash("a", "bc"))
	require.NotEqual(t, r.Hash("a", "bc"), r.Hash("ab", "c"))
	require.NotEqual(t, r.Hash("x"), New().Hash("x"), "keyed")
	require.Len(t, r.Hash("x"), 64)
}

func TestFromBase64AndConfig(t *testing.T) {
	secret := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("s", KeySize)))
	a, err := FromBase64(secret)
	require.NoError(t, err)
	b, err := FromBase64(secret)
	require.NoError(t, err)
	require.Equal(t, a.Current(), b.Current())
	require.True(t, strings.HasPrefix(a.Current(), "env-"))
	require.Equal(t, a.Hash("x"), b.Hash("x"))
	id, ct := a.Encrypt([]byte("x"), nil)
	_, err = b.Decrypt(id, ct, nil)
	require.NoError(t, err)

	_, err = FromBase64("c2hvcnQ=")
	require.ErrorContains(t, err, "32 bytes")
	_, err = FromBase64("!!!")
	require.ErrorContains(t, err, "base64")

	// An environment key carried over into a file keeps its hashes.
	path := filepath.Join(t.TempDir(), "k")
	_, err = a.Rotate()
	require.NoError(t, err)
	require.NoError(t, a.Save(path))
	c, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, b.Hash("x"), c.Hash("x"))
	pt, err := c.Decrypt(id, ct, nil)
	require.NoError(t, err)
	require.Equal(t, "x", string(pt))

	_, _, err = Config{}.Open()
	require.ErrorIs(t, err, ErrNoKey)
	_, _, err = Config{File: filepath.Join(t.TempDir(), "missing")}.Open()
	require.ErrorContains(t, err, "keys init")
	_, _, err = Config{File: path, Key: secret}.Open()
	require.ErrorContains(t, err, "use one")
	def := filepath.Join(t.TempDir(), "db.key")
	r1, created, err := Config{DefaultFile: def}.Open()
	require.NoError(t, err)
	require.True(t, created)
	r2, created, err := Config{DefaultFile: def}.Open()
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, r1.Hash("y"), r2.Hash("y"))

	require.NoError(t, os.WriteFile(path, []byte("{}"), 0o600))
	_, err = Load(path)
	require.ErrorContains(t, err, "version")
}

func TestDecryptErrorsNeverCarryPlaintext(t *testing.T) {
	r := New()
	_, err := r.Decrypt("k1", []byte("Mary Major at 12 Elm Street"), nil)
	require.True(t, errors.Is(err, ErrDecrypt))
	require.NotContains(t, err.Error(), "Mary")
}

// The audit key survives rotation, and an environment key carried into a
// file keeps it; it is none of the ring's other keys.
func TestAuditKeyKeptByRotation(t *testing.T) {
	r, err := FromBase64(base64.StdEncoding.EncodeToString(make([]byte, KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	id, key := r.AuditKey()
	if _, err := r.Rotate(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "k")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	id2, key2 := loaded.AuditKey()
	if id2 != id || string(key2) != string(key) {
		t.Fatalf("audit key changed with rotation: %s -> %s", id, id2)
	}
	if string(key) == string(r.lookup) || string(key) == string(r.keys[0].Secret) {
		t.Fatal("the audit key is another key of the ring")
	}
	if id3, _ := New().AuditKey(); id3 == id {
		t.Fatal("two rings give one audit key id")
	}
}
