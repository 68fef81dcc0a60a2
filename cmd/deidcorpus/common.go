package main

import (
	"context"
	"flag"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"deidcorpus/store"
)

// dbFlag adds --db, defaulting to $DEIDCORPUS_DB or ./deidcorpus.db.
func dbFlag(fs *flag.FlagSet, e *env) *string {
	def := e.getenv("DEIDCORPUS_DB")
	if def == "" {
		def = store.DefaultDSN
	}
	return fs.String("db", def, "database: a SQLite file path or a postgres:// URL (env DEIDCORPUS_DB)")
}

func openStore(ctx context.Context, dsn string) (*store.Store, error) {
	return store.Open(ctx, dsn)
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
