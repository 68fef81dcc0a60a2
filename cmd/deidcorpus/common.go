package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/internal/keys"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
)

// dbFlag adds the flags of a command that acts for someone on the database:
// --token, and those of serviceDBFlag.
func dbFlag(fs *flag.FlagSet, e *env) *string {
	e.token = fs.String("token", "", "act as the account of this API token (env DEIDCORPUS_TOKEN); "+
		"without one the command acts as the local operator, with the admin role")
	return serviceDBFlag(fs, e)
}

// serviceDBFlag adds --db, defaulting to $DEIDCORPUS_DB or ./deidcorpus.db,
// and --key-file: the flags of serve, worker and keys init, which act for no
// account.
func serviceDBFlag(fs *flag.FlagSet, e *env) *string {
	def := e.getenv("DEIDCORPUS_DB")
	if def == "" {
		def = store.DefaultDSN
	}
	e.keyFile = fs.String("key-file", "", "key file encrypting the surrogate mappings (env "+keys.FileEnv+
		"; or a base64 key in "+keys.KeyEnv+"; default for SQLite: the database path + .key, made on first use); "+
		"the audit log's head file lies beside it, its path + .audit-head (env "+keys.AuditHeadEnv+" names another)")
	return fs.String("db", def, "database: a SQLite file path or a postgres:// URL (env DEIDCORPUS_DB)")
}

// keyConfig is where the key ring comes from: --key-file, else the environment.
func keyConfig(e *env) keys.Config {
	c := keys.FromEnv(e.getenv)
	if e.keyFile != nil && *e.keyFile != "" {
		c.File, c.Key = *e.keyFile, ""
	}
	return c
}

// openDB opens the database with the command's key ring; the store logs to
// logger.
func openDB(ctx context.Context, e *env, dsn string, logger *slog.Logger) (*store.Store, error) {
	return store.Open(ctx, dsn, store.WithKeys(keyConfig(e)), store.WithLogger(logger),
		store.WithExternalHosts(store.ParseExternalHosts(e.getenv(store.ExternalHostsEnv))))
}

// noteHandler writes a short command's log records as plain notes on
// stderr, "deidcorpus: message (key: value)", between the command's own
// lines; serve and worker log JSON instead.
type noteHandler struct {
	w     io.Writer
	attrs []slog.Attr
}

func (h noteHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h noteHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("deidcorpus: " + r.Message)
	var kv []string
	add := func(a slog.Attr) bool {
		kv = append(kv, a.Key+": "+a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	if len(kv) > 0 {
		b.WriteString(" (" + strings.Join(kv, ", ") + ")")
	}
	b.WriteString("\n")
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h noteHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h.attrs = append(slices.Clip(h.attrs), attrs...)
	return h
}

func (h noteHandler) WithGroup(string) slog.Handler { return h }

// mayCreate tells whether a command (by operation and subcommand) may make
// a new SQLite database: an import, or the first account of a new one. The
// rest read or change what one holds (a token needs an account, which a new
// database has not), and a mistyped --db must not leave an empty database
// (and a new key file) behind it.
func mayCreate(op string, args map[string]any) bool {
	switch op {
	case "cli.import":
		return true
	case "cli.users":
		return args["subcommand"] == "add"
	}
	return false
}

// openStore opens the database for a command that acts for someone (see
// actAs).
func openStore(ctx context.Context, e *env, dsn, op string, args map[string]any) (*store.Store, context.Context, error) {
	st, ctx, audited, err := openStoreAuditLater(ctx, e, dsn, op, args)
	if err != nil {
		return nil, nil, err
	}
	if err := audited(); err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, ctx, nil
}

// openStoreAuditLater is openStore for a command that reads the audit log
// before its own entry is written (audit verify: a cut or emptied chain is
// reported as found, not after an entry appended to it). The command calls
// audited once it has read.
func openStoreAuditLater(ctx context.Context, e *env, dsn, op string, args map[string]any) (st *store.Store, _ context.Context, audited func() error, err error) {
	if f := store.ParseDSN(dsn).File(); f != "" {
		fi, err := os.Stat(f)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !mayCreate(op, args):
			return nil, nil, nil, apperr.New(apperr.NotFound, "no database at %s: --db (or DEIDCORPUS_DB) names it; import or serve makes a new one", f)
		case err == nil && fi.IsDir():
			return nil, nil, nil, apperr.New(apperr.Invalid, "--db %s is a directory; name a database file in it", f)
		}
	}
	if st, err = openDB(ctx, e, dsn, slog.New(noteHandler{w: e.stderr})); err != nil {
		return nil, nil, nil, err
	}
	ctx, rec, err := authorizeAs(ctx, e, st, op, args)
	if err != nil {
		if ctx != nil { // a refusal is audited
			err = cmp.Or(err, st.Audit(ctx, rec))
		}
		st.Close()
		return nil, nil, nil, err
	}
	return st, ctx, func() error { return st.Audit(ctx, rec) }, nil
}

// actAs returns ctx acting for the command's viewer: the account of --token
// (or DEIDCORPUS_TOKEN), else the local operator as an admin (whoever can
// read the database file and its key has the data anyway). The command's
// operation op (a rule of package auth) is checked with args and the command
// is written to the audit log; every query made with the returned context is
// filtered to what the viewer may see.
func actAs(ctx context.Context, e *env, st *store.Store, op string, args map[string]any) (context.Context, error) {
	ctx, rec, err := authorizeAs(ctx, e, st, op, args)
	if ctx == nil {
		return nil, err
	}
	if aerr := st.Audit(ctx, rec); err == nil {
		err = aerr
	}
	return ctx, err
}

// authorizeAs is actAs without the audit entry, which it returns.
func authorizeAs(ctx context.Context, e *env, st *store.Store, op string, args map[string]any) (context.Context, store.AuditRecord, error) {
	v, err := cliViewer(ctx, e, st)
	if err != nil {
		return nil, store.AuditRecord{}, err
	}
	ctx = auth.NewContext(ctx, v)
	err = st.Authorize(ctx, op, args)
	action := "cli"
	if apperr.CodeOf(err) == apperr.Forbidden {
		action = "denied"
	}
	return ctx, store.AuditRecord{Action: action, Target: op, Detail: store.DescribeArgs(args)}, err
}

// cliViewer is who a command acts for.
func cliViewer(ctx context.Context, e *env, st *store.Store) (*auth.Viewer, error) {
	token := e.getenv("DEIDCORPUS_TOKEN")
	if e.token != nil && *e.token != "" {
		token = *e.token
	}
	if token != "" {
		return st.Authenticate(ctx, token)
	}
	who := e.getenv("USER")
	if u, err := user.Current(); who == "" && err == nil {
		who = u.Username
	}
	if who == "" {
		who = "unknown"
	}
	return auth.NewViewer(0, store.LocalPrefix+who, auth.Admin), nil
}

// progress returns a callback that draws a progress bar on a terminal and
// stays silent otherwise (logs and pipes get the final summary only).
func progress(w io.Writer, description string) (update func(done, total int), finish func()) {
	b := newBar(w, description)
	if b != nil {
		b.count = true // documents, files: counts a person reads
	}
	return func(done, total int) { b.set(done, total, "") }, b.finish
}

// bar is a progress bar: the share done and what the work says it is doing
// (a job's message, as the dashboard shows it). Its total may change as the
// work goes from one stage to the next.
type bar struct {
	w           io.Writer
	description string
	throttle    time.Duration
	count       bool // show done/total beside the share (a job's units are its own: its message counts)
	pb          *progressbar.ProgressBar
	total       int
	message     string
}

// newBar is a bar on w when w is a terminal; nil, which draws nothing,
// otherwise.
func newBar(w io.Writer, description string) *bar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &bar{w: w, description: description, throttle: 100 * time.Millisecond}
}

// set shows done of total and message (kept from the last call when
// empty); nothing while the total is unknown.
func (b *bar) set(done, total int, message string) {
	if b == nil || total <= 0 {
		return
	}
	if b.pb == nil {
		opts := []progressbar.Option{progressbar.OptionSetWriter(b.w), progressbar.OptionSetDescription(b.description),
			progressbar.OptionSetWidth(30), progressbar.OptionThrottle(b.throttle)}
		if b.count {
			opts = append(opts, progressbar.OptionShowCount())
		}
		b.pb = progressbar.NewOptions(total, opts...)
		b.total = total
	}
	if total != b.total {
		b.pb.ChangeMax(total)
		b.total = total
	}
	if message != "" && message != b.message {
		b.message = message
		b.pb.Describe(b.description + ": " + message)
	}
	b.pb.Set(min(done, total))
}

func (b *bar) finish() {
	if b != nil && b.pb != nil {
		b.pb.Finish()
		io.WriteString(b.w, "\n")
	}
}

// readFiles reads the files, directories and .zip archives a command names.
func readFiles(paths ...string) ([]formats.File, error) {
	files, err := formats.ReadPaths(paths...)
	return files, fileError(err)
}

// fileError codes an error reading a file the user named: a missing one is
// not found (exit status 3), any other invalid input (2); an error that has
// its code keeps it.
func fileError(err error) error {
	var coded *apperr.Error
	if errors.As(err, &coded) {
		return err
	}
	code := apperr.Invalid
	if errors.Is(err, fs.ErrNotExist) {
		code = apperr.NotFound
	}
	// "notes/: no such file or directory", not "stat notes/: ...": the
	// system call that found it is not the user's business.
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != "" {
		return &apperr.Error{Code: code, Msg: pe.Path + ": " + pe.Err.Error(), Err: err}
	}
	return apperr.Wrap(code, err)
}

// newOutDir refuses an --out directory that holds files: files written into
// it would mix with, or silently replace, what is there.
func newOutDir(dir string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return apperr.New(apperr.Conflict, "--out %s is not empty: the files are written into an empty or new directory", dir)
	}
	return nil
}

// counted writes a count with its noun, singular for one: "1 document",
// "3 documents". n is an int or a number decoded from JSON.
func counted(n any, noun string) string {
	s := number(n)
	if s != "1" {
		noun += "s"
	}
	return s + " " + noun
}

// number writes a number decoded from JSON (a float64) as an integer when
// it is one.
func number(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return fmt.Sprint(v)
}
