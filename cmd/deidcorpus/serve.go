package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"deidcorpus/server"
)

func init() {
	register("serve", "run the GraphQL server (and the IDE at /graphiql/)", runServe)
}

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "[--addr :8080] [--db DSN] [--demo]")
	addr := fs.String("addr", ":8080", "address to listen on")
	db := dbFlag(fs, e)
	demo := fs.Bool("demo", false, "load the bundled demo corpus (synthetic patients, no real PHI) if it is missing")
	noWorkers := fs.Bool("no-workers", false, "do not work background jobs in this process (run 'deidcorpus worker' elsewhere)")
	concurrency, staleAfter := workerFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, logger, err := openServing(ctx, e, *db)
	if err != nil {
		return err
	}
	defer st.Close()
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

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           server.NewServer(logger, server.DefaultConfig, st, jm),
		ReadHeaderTimeout: 10 * time.Second,
	}
	url := "http://" + displayAddr(ln.Addr())
	logger.Info("serving", "dashboard", url+"/", "graphql", url+"/graphql", "ide", url+"/graphiql/", "db", st.Dialect)
	fmt.Fprintf(e.stderr, "deidcorpus serving on %s (dashboard %s/, GraphQL %s/graphql, IDE %s/graphiql/)\n", url, url, url, url)

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
		return err
	}
	return nil
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
