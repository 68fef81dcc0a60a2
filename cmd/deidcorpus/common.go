package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"deidcorpus/internal/keys"
	"deidcorpus/store"
)

// dbFlag adds --db, defaulting to $DEIDCORPUS_DB or ./deidcorpus.db.
func dbFlag(fs *flag.FlagSet, e *env) *string {
	def := e.getenv("DEIDCORPUS_DB")
	if def == "" {
		def = store.DefaultDSN
	}
	e.keyFile = fs.String("key-file", "", "key file encrypting the surrogate mappings (env "+keys.FileEnv+
		"; or a base64 key in "+keys.KeyEnv+"; default for SQLite: the database path + .key, made on first use)")
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

func openStore(ctx context.Context, e *env, dsn string) (*store.Store, error) {
	return store.Open(ctx, dsn, store.WithKeys(keyConfig(e)), store.WithLogger(slog.New(slog.NewTextHandler(e.stderr, nil))))
}

// progress returns a callback that draws a progress bar on a terminal and
// stays silent otherwise (logs and pipes get the final summary only).
func progress(w io.Writer, description string) (update func(done, total int), finish func()) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func(int, int) {}, func() {}
	}
	var bar *progressbar.ProgressBar
	update = func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(description),
				progressbar.OptionShowCount(), progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100e6))
		}
		bar.Set(done)
	}
	finish = func() {
		if bar != nil {
			bar.Finish()
			io.WriteString(w, "\n")
		}
	}
	return update, finish
}
