package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/server"
	"deidcorpus/store"
)

func init() {
	register(&command{
		name:    "serve",
		summary: "run the server: dashboard at /, GraphQL at /graphql, IDE at /graphiql/; also works background jobs",
		args:    "[--addr localhost:8080] [--db DSN] [--demo] [--no-workers]",
		examples: []string{
			"deidcorpus serve --demo",
			"deidcorpus serve --addr :9000 --db postgres://deid@db/deid --no-workers",
		},
		setup: setupServe,
	})
}

func setupServe(e *env, fs *flag.FlagSet) action {
	addr := fs.String("addr", "localhost:8080", "address to listen on (this machine only by default: the server holds original PHI; "+
		"\":8080\" listens on every interface)")
	db := serviceDBFlag(fs, e)
	demo := fs.Bool("demo", false, "load the bundled demo corpus (synthetic patients, no real PHI) if it is missing; on its first start, "+
		"also resynthesize it, release the twin, train a small model and tag and score the twin's test split, as jobs")
	tokenFile := fs.String("admin-token-file", "", "where the first start writes the admin's API token (default: the SQLite database path + .admin-token, else ./deidcorpus.admin-token)")
	noWorkers := fs.Bool("no-workers", false, "do not work background jobs in this process (run 'deidcorpus worker' elsewhere)")
	concurrency, staleAfter := workerFlags(fs)
	cfg := server.DefaultConfig
	maxNote := maxNoteFlag(fs)
	maxImport := maxImportFlag(fs)
	logFormat := logFormatFlag(fs)
	fs.BoolVar(&cfg.LogRequests, "log-requests", false, "log every request (a dashboard's page load is dozens); otherwise requests are logged at debug level only")
	fs.IntVar(&cfg.MaxUploads, "max-uploads", cfg.MaxUploads, "uploads the server takes at once (each may hold a few MB in memory); "+
		"one more waits a few seconds, then is refused with 429")
	return func(ctx context.Context, args []string) error {
		cfg.MaxNoteBytes, cfg.MaxImportBytes = int64(*maxNote), int64(*maxImport)
		// The address first: a port in use ends the start before it makes
		// a database, an admin and a token nobody is told of again.
		ln, err := net.Listen("tcp", *addr)
		if errors.Is(err, syscall.EADDRINUSE) {
			other := ":8081"
			if host, port, err := net.SplitHostPort(*addr); err == nil {
				if n, err := strconv.Atoi(port); err == nil && n > 0 && n < 65535 {
					other = net.JoinHostPort(host, strconv.Itoa(n+1))
				}
			}
			return apperr.New(apperr.Conflict, "%s is in use (another deidcorpus serve?): stop it, or choose another address with --addr, e.g. --addr %s", *addr, other)
		} else if err != nil {
			return err
		}
		defer ln.Close()
		st, logger, err := openServing(ctx, e, *db, *logFormat)
		if err != nil {
			return err
		}
		defer st.Close()
		if *tokenFile == "" {
			*tokenFile = adminTokenFile(*db)
		}
		madeAdmin, err := firstAdmin(ctx, e, st, logger, *db, *tokenFile)
		if err != nil {
			return err
		}
		if *demo {
			created, err := loadDemo(ctx, st)
			if err != nil {
				return fmt.Errorf("load demo corpus: %w", err)
			}
			logger.Info("demo corpus ready", "corpus", demoCorpus, "loaded_now", created)
		}

		jm, err := openManager(ctx, st, logger, !*noWorkers, *concurrency, *staleAfter)
		if err != nil {
			return err
		}
		if err := jm.Start(ctx); err != nil {
			return err
		}
		defer jm.Stop(context.Background())
		if *demo {
			// In the background: the server answers while the demo's jobs
			// run; they are waited for before the store closes.
			demoCtx, stopDemo := context.WithCancel(ctx)
			demoDone := make(chan struct{})
			defer func() { stopDemo(); <-demoDone }()
			go func() {
				defer close(demoDone)
				if err := runDemoJobs(demoCtx, st, jm, logger); err != nil && demoCtx.Err() == nil {
					logger.Error("demo jobs stopped", "error", err.Error())
				}
			}()
		}

		srv := &http.Server{
			Handler:           server.NewServer(logger, cfg, st, jm),
			ReadHeaderTimeout: 10 * time.Second,
		}
		url := "http://" + displayAddr(ln.Addr())
		logger.Info("serving", "dashboard", url+"/", "graphql", url+"/graphql", "ide", url+"/graphiql/", "db", st.Dialect)
		serveSummary(e, st, url, *tokenFile, *demo || madeAdmin)

		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(ln) }()
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		logger.Info("shutting down")
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			// Requests still running after the grace period have their
			// connections closed rather than hold the shutdown.
			srv.Close()
			return err
		}
		return nil
	}
}

// adminTokenFile is where the first start writes the admin's token by
// default: beside a SQLite database, else in the working directory.
func adminTokenFile(dsn string) string {
	if f := store.ParseDSN(dsn).File(); f != "" {
		return f + ".admin-token"
	}
	return "deidcorpus.admin-token"
}

// firstAdmin makes an admin account when the database has no enabled admin
// (store.EnsureAdmin), and writes its API token to path (readable by the
// owner only), saying where. When the admin's name is taken by an account
// that is disabled or of another role, it prints the commands that make it
// an admin again.
func firstAdmin(ctx context.Context, e *env, st *store.Store, logger *slog.Logger, db, path string) (bool, error) {
	token, err := st.EnsureAdmin(ctx)
	if err != nil {
		return false, err
	}
	if token == "" { // an admin exists, or the name is taken: say so if none can manage accounts
		if ok, err := st.HasAdmin(ctx); err != nil || ok {
			return false, err
		}
		logger.Warn("no enabled admin account: accounts cannot be managed from the API or the dashboard")
		fmt.Fprintf(e.stderr, "deidcorpus serve: no enabled admin account, and the account %q is disabled or no admin; make it one with:\n"+
			"  deidcorpus users set %s --enable --role admin --db %s\n  deidcorpus tokens create --user %s --db %s\n",
			store.FirstAdminName, store.FirstAdminName, db, store.FirstAdminName, db)
		return false, nil
	}
	// Through a new file renamed into place: owner-only from the start, and
	// a stale file of an older database is replaced whole.
	tmp := path + ".new"
	os.Remove(tmp)
	if err := os.WriteFile(tmp, []byte(token+"\n"), 0o600); err != nil {
		return false, fmt.Errorf("write the first admin's token: %w (give --admin-token-file)", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("write the first admin's token: %w", err)
	}
	logger.Info("made the admin account", "user", store.FirstAdminName, "token_file", path)
	fmt.Fprintf(e.stderr, "no admin account yet: made the account %q (admin); its API token is in %s\n", store.FirstAdminName, path)
	return true, nil
}

// displayAddr makes a listen address clickable: ":8080" becomes
// "localhost:8080".
func displayAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// serveSummary tells the person who started the server, in a few lines above
// the log, where it is, how to sign in (a link that signs the browser in as
// the admin on a first start or the demo's, else where the token is and how
// to make one) and which key file to back up.
func serveSummary(e *env, st *store.Store, url, tokenFile string, link bool) {
	fmt.Fprintf(e.stderr, "deidcorpus serving on %s (dashboard %s/, GraphQL %s/graphql, IDE %s/graphiql/)\n", url, url, url, url)
	token, err := os.ReadFile(tokenFile)
	switch {
	case err == nil && link:
		fmt.Fprintf(e.stderr, "  sign in as admin: %s/#token=%s\n", url, strings.TrimSpace(string(token)))
	case err == nil:
		fmt.Fprintf(e.stderr, "  sign in with the admin's token in %s (%s/#token=TOKEN), or make one: deidcorpus tokens create --user NAME\n", tokenFile, url)
	default:
		fmt.Fprintf(e.stderr, "  sign in with a token: deidcorpus tokens create --user NAME (accounts: deidcorpus users -h)\n")
	}
	if r, err := st.KeyRing(); err == nil && r.Path != "" {
		fmt.Fprintf(e.stderr, "  the key file %s encrypts the surrogate mappings: back it up, never with the database's backups\n", r.Path)
	}
	fmt.Fprintf(e.stderr, "  requests are logged with --log-requests only; Ctrl-C stops\n")
}
