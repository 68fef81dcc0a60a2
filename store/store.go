// Package store keeps corpora in the project's database (embedded SQLite by
// default, PostgreSQL for several machines) and is the one place where ent rows
// become pipeline values and back. Its public methods are the services the
// CLI, the GraphQL resolvers and the jobs call; each owns its transaction.
package store

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "modernc.org/sqlite"             // registers "sqlite"

	"deidcorpus/auth"
	"deidcorpus/ent"
	_ "deidcorpus/ent/runtime" // schema defaults, validators and hooks (the release immutability hook)
	"deidcorpus/internal/keys"
)

// DefaultDSN is the database used when none is given.
const DefaultDSN = "deidcorpus.db"

// Store is an open database.
type Store struct {
	// Client reads for the GraphQL resolvers, whose generated queries
	// (pagination, filters, field collection) are ent's. Everything else,
	// and every write, goes through the store's methods.
	Client *ent.Client
	// DB is the database, for the job queue's driver, which must share the
	// transactions that write job rows (JobTx); on SQLite it is the one
	// write connection (see writer.go), which River and every write
	// transaction share.
	DB      *sql.DB
	readDB  *sql.DB // SQLite: the read pool
	Dialect string  // dialect.SQLite or dialect.Postgres
	DSN     string

	inserts sync.Map // *rowInsert -> its INSERT of spanBatch rows (insert.go)

	auditQueue      auditQueue // records waiting for the next chain step (audit.go)
	headMu          sync.Mutex // this process's writers of the audit head file (audithead.go)
	auditWarned     sync.Map   // problems of the audit log logged already, by kind
	stopCheckpoints func()     // SQLite: ends the WAL checkpoints (checkpoint.go)
	statsCache      statsCache // statistics by corpus content version (statscache.go)
	chunkSize       int        // bytes of a stored file's chunk (chunks.go)

	keyCfg keys.Config
	// externalHosts are the hosts external taggers may be reached at.
	externalHosts []string
	logger        *slog.Logger
	clock         Clock // see WithClock
	ringMu        sync.Mutex
	ring          *keys.Ring // loaded on first use (see Keys)
	seals         sealCache  // the corpora's data keys (seal.go)
}

// pgIdleConns is the number of idle PostgreSQL connections kept for reuse.
const pgIdleConns = 32

// Option configures Open.
type Option func(*options)

type options struct {
	keys      keys.Config
	keysSet   bool
	auditHead string
	ring      *keys.Ring
	logger    *slog.Logger
	chunkSize int
	clock     Clock
	// externalHosts: see WithExternalHosts.
	externalHosts []string
}

// WithKeys says where the key ring encrypting the surrogate mappings comes
// from. Without it, Open reads DEIDCORPUS_KEY_FILE and DEIDCORPUS_KEY from the
// process environment. When neither names a key, a SQLite database keeps its
// key in a file next to it (DSN path + ".key"), made on first use; PostgreSQL
// then refuses to read or write mappings.
func WithKeys(c keys.Config) Option {
	return func(o *options) { o.keys, o.keysSet = c, true }
}

// WithAuditHead keeps the audit chain's head in the file at path instead of
// beside the key file (see audithead.go); tests, and rings with no file.
func WithAuditHead(path string) Option { return func(o *options) { o.auditHead = path } }

// WithKeyRing uses a ring made by the caller (tests).
func WithKeyRing(r *keys.Ring) Option { return func(o *options) { o.ring = r } }

// WithChunkSize stores files (release snapshots, artifacts) in chunks of n
// bytes instead of 4 MiB: tests store their small files in many chunks.
func WithChunkSize(n int) Option { return func(o *options) { o.chunkSize = n } }

// WithLogger sets where the store logs (the creation of a key file); default
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// Clock tells the time: the store reads the lifetimes of API tokens on it.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// WithClock reads token lifetimes on c instead of the wall clock (tests: a
// token expires when the test moves c on, not after a sleep).
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// Open connects to dsn (a PostgreSQL URL, or a SQLite file path, optionally
// with "file:" and query parameters) and brings the schema up to date.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	if dsn == "" {
		dsn = DefaultDSN
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if !o.keysSet {
		o.keys = keys.FromEnv(os.Getenv)
	}
	if o.auditHead != "" {
		o.keys.AuditHead = o.auditHead
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	s := &Store{DSN: dsn, keyCfg: o.keys, logger: o.logger, ring: o.ring, chunkSize: cmp.Or(o.chunkSize, chunkSize), clock: o.clock,
		externalHosts: o.externalHosts}
	if s.clock == nil {
		s.clock = realClock{}
	}
	d := ParseDSN(dsn)
	if f := d.File(); f != "" {
		s.keyCfg.DefaultFile = DefaultKeyFile(dsn)
		if err := createPrivate(f); err != nil {
			return nil, fmt.Errorf("open database: %w", err)
		}
	}
	var err error
	if d.Postgres {
		s.Dialect = dialect.Postgres
		s.DB, err = sql.Open("pgx", dsn)
		if err == nil {
			// database/sql keeps 2 idle connections by default: under
			// concurrent requests every other query would open a new
			// PostgreSQL connection (a server process each).
			s.DB.SetMaxIdleConns(pgIdleConns)
		}
	} else {
		s.Dialect = dialect.SQLite
		// One write connection, and a pool of readers beside it (WAL); an
		// in-memory database is one connection's, so it has only the one.
		s.DB, err = sql.Open("sqlite", d.sqlite())
		if err == nil {
			s.DB.SetMaxOpenConns(1)
			s.DB.SetMaxIdleConns(1)
			s.DB.SetConnMaxIdleTime(0)
		}
		if err == nil && d.File() != "" {
			s.readDB, err = sql.Open("sqlite", d.sqlite())
		}
		if err == nil && s.readDB != nil {
			s.readDB.SetMaxOpenConns(readerConns)
			s.readDB.SetMaxIdleConns(readerConns)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// Processes that open a new database at once (a server and its
	// workers) migrate it one after another: two creating one table fail on
	// its name. A SQLite file is locked before the first connection, whose
	// switch to WAL mode another process's migration would make busy.
	unlock := func() {}
	if s.Dialect == dialect.SQLite {
		if unlock, err = s.LockMigrations(ctx); err != nil {
			s.closeDBs()
			return nil, err
		}
	}
	defer func() { unlock() }()
	if err := s.DB.PingContext(ctx); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("connect to database %s: %w", redact(dsn), err)
	}
	if s.Dialect == dialect.Postgres {
		if unlock, err = s.LockMigrations(ctx); err != nil {
			s.closeDBs()
			return nil, err
		}
	}
	if s.readDB != nil {
		s.Client = ent.NewClient(ent.Driver(newRoutedDriver(s.Dialect, s.DB, s.readDB)))
		s.startCheckpoints()
	} else {
		s.Client = ent.NewClient(ent.Driver(entsql.OpenDB(s.Dialect, s.DB)))
	}
	if err := s.migrate(ctx, func() { auth.Install(s.Client); s.installSeals() }); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the database.
func (s *Store) Close() error {
	if s.stopCheckpoints != nil {
		s.stopCheckpoints()
	}
	return s.Client.Close()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.DB.PingContext(ctx) }

// Authorize checks that the account in ctx may do op with args (package
// auth's rule table), reading what the rule needs.
func (s *Store) Authorize(ctx context.Context, op string, args map[string]any) error {
	return auth.Check(ctx, s.Client, op, args)
}

func (s *Store) closeDBs() {
	s.DB.Close()
	if s.readDB != nil {
		s.readDB.Close()
	}
}

// redact hides a password in a DSN for messages.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// rebind turns "?" placeholders into "$n" for PostgreSQL.
func (s *Store) rebind(query string) string {
	if s.Dialect != dialect.Postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// withTx runs fn in a transaction, rolling back on error or panic; its
// error has its code (Coded).
func (s *Store) withTx(ctx context.Context, fn func(tx *ent.Tx) error) (err error) {
	defer func() { err = Coded(err) }()
	tx, err := s.Client.Tx(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if v := recover(); v != nil {
			tx.Rollback()
			panic(v)
		}
	}()
	if err := fn(tx); err != nil {
		// A cancelled context has rolled the transaction back already.
		if rerr := tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			return fmt.Errorf("%w (rollback: %v)", err, rerr)
		}
		return err
	}
	return tx.Commit()
}

// createPrivate makes a new SQLite database file readable by its owner only,
// as the key and token files beside it are: it holds the notes' original
// text. SQLite gives its WAL and shared-memory files the database file's
// permissions. An existing file is left as it is.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// DefaultKeyFile is where a SQLite database keeps its mapping keys unless
// told otherwise: beside it, its path + ".key". PostgreSQL has none ("").
func DefaultKeyFile(dsn string) string {
	if f := ParseDSN(dsn).File(); f != "" {
		return f + ".key"
	}
	return ""
}

// migrationLock is the key of the PostgreSQL advisory lock that processes
// migrating a database take in turn.
const migrationLock = 7468348

// LockMigrations waits until no other process migrates the database, and
// keeps others waiting until the returned function runs: on PostgreSQL an
// advisory lock; on a SQLite file an exclusive flock of its directory (not
// of the file, whose SQLite locks a second descriptor's close would drop).
func (s *Store) LockMigrations(ctx context.Context) (unlock func(), err error) {
	if s.Dialect != dialect.Postgres {
		f := ParseDSN(s.DSN).File()
		if f == "" { // in memory: this process's alone
			return func() {}, nil
		}
		unlock, err := lockDir(ctx, filepath.Dir(f))
		if err != nil {
			return nil, fmt.Errorf("wait for other processes migrating the database: %w", err)
		}
		return unlock, nil
	}
	conn, err := s.DB.Conn(ctx)
	if err == nil {
		_, err = conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLock)
		if err != nil {
			conn.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("wait for other processes migrating the database: %w", err)
	}
	return func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock); err != nil {
			// Not back into the pool still holding the lock: closed.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}, nil
}
