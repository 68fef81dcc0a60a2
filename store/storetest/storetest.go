// Package storetest opens throwaway stores for tests: a SQLite file in a
// temporary directory, and, when DEIDCORPUS_TEST_POSTGRES names a server, a
// fresh PostgreSQL database dropped after the test.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"deidcorpus/auth"
	"deidcorpus/internal/keys"
	"deidcorpus/store"
)

// PostgresEnv names the environment variable holding an administrative
// PostgreSQL DSN (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable).
const PostgresEnv = "DEIDCORPUS_TEST_POSTGRES"

// Backend is a database kind tests run against.
type Backend string

const (
	SQLite   Backend = "sqlite"
	Postgres Backend = "postgres"
)

// Backends lists SQLite and, when configured, PostgreSQL. Without PostgreSQL
// it logs why, so a laptop run says what it did not test.
func Backends(tb testing.TB) []Backend {
	if os.Getenv(PostgresEnv) == "" {
		tb.Logf("%s is not set: PostgreSQL variant skipped", PostgresEnv)
		return []Backend{SQLite}
	}
	return []Backend{SQLite, Postgres}
}

// DSN returns the DSN of a new, empty database of the given backend.
func DSN(tb testing.TB, b Backend) string {
	tb.Helper()
	if b == SQLite {
		return filepath.Join(tb.TempDir(), "test.db")
	}
	admin := os.Getenv(PostgresEnv)
	if admin == "" {
		tb.Skipf("%s is not set: PostgreSQL test skipped", PostgresEnv)
	}
	buf := make([]byte, 6)
	rand.Read(buf)
	name := "deidcorpus_test_" + hex.EncodeToString(buf)
	db, err := sql.Open("pgx", admin)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		db.Close()
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		db.Close()
	})
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// Open opens a new, empty store of the given backend, closed after the test.
// Its surrogate mappings are encrypted under a key of its own, derived from
// the test's name: resynthesis draws from the seed keyed by it, so a test
// gives the same output on every run. opts come after its own.
func Open(tb testing.TB, b Backend, opts ...store.Option) *store.Store {
	tb.Helper()
	secret := sha256.Sum256([]byte("deidcorpus test key " + tb.Name()))
	ring, err := keys.FromBase64(base64.StdEncoding.EncodeToString(secret[:]))
	if err != nil {
		tb.Fatal(err)
	}
	// Tests' external taggers are httptest servers on the loopback address.
	s, err := store.Open(context.Background(), DSN(tb, b),
		append([]store.Option{store.WithKeyRing(ring), store.WithExternalHosts([]string{"127.0.0.1"})}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Token makes an account with a role (or finds the one of that name) and
// returns a new API token of it.
func Token(tb testing.TB, s *store.Store, name string, role auth.Role) string {
	tb.Helper()
	ctx := context.Background()
	if _, err := s.UserByName(ctx, name); err != nil {
		if _, err := s.CreateUser(ctx, name, role); err != nil {
			tb.Fatal(err)
		}
	}
	token, _, err := s.CreateToken(ctx, name, "test", 0)
	if err != nil {
		tb.Fatal(err)
	}
	return token
}

// Clock is a clock a test moves on by hand (store.WithClock, a server's
// Config.Clock): what expires or refills does so without a sleep.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a clock at the wall clock's time, standing still.
func NewClock() *Clock { return &Clock{now: time.Now()} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// SharedKey is one fixed key for the stores of a test that open one
// database as several processes would (PostgreSQL has no default key file,
// and its original corpora are sealed under the key).
func SharedKey() store.Option {
	return store.WithKeys(keys.Config{Key: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, keys.KeySize))})
}
