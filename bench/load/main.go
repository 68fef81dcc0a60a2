// Command load is a bounded loopback load test of the API: it imports a
// corpus into a fresh database (SQLite in a temporary directory, or a
// PostgreSQL DSN), serves the API on 127.0.0.1, and has N clients (each with
// one of 8 admin tokens) send a fixed number of requests, each one of
// three queries in turn: a 20-note page with the notes' text (every read
// audited), the corpus statistics by category and type, and the corpus list.
// It prints requests per second and latency percentiles per query.
//
//	go run ./bench/load                       # SQLite, 16 clients
//	go run ./bench/load -db postgres://postgres@127.0.0.1:5432/test?sslmode=disable
//
// It only ever listens on and connects to the loopback interface, and stops
// after -requests requests or -timeout, whichever comes first.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"deidcorpus/auth"
	"deidcorpus/internal/shared"
	"deidcorpus/pipeline/formats"
	"deidcorpus/server"
	"deidcorpus/store"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

var queries = []struct{ name, body string }{
	{"page20+text", `{"query":"{ documents(first: 20) { edges { node { id externalID text } } } }"}`},
	{"statistics", `{"query":"query($c: ID!) { corpusStatistics(corpus: $c) { documents spans groups { total unique } } }","variables":{"c":"%s"}}`},
	{"corpora", `{"query":"{ corpora(first: 20) { totalCount edges { node { id name kind } } } }"}`},
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	dsn := fs.String("db", "", "PostgreSQL server DSN (a fresh database is made on it and dropped); default a SQLite file in a temporary directory")
	clients := fs.Int("clients", 16, "concurrent clients")
	requests := fs.Int("requests", 6000, "requests in all")
	timeout := fs.Duration("timeout", 60*time.Second, "stop after this long even if requests remain")
	corpus := fs.String("corpus", "meddocan-i2b2/dev", "corpus to import, inside the shared data directory")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the load phase (server and clients) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, ok := shared.Dir()
	if !ok {
		return errors.New("no shared data directory (set DEIDCORPUS_DATA)")
	}
	files, err := formats.ReadPaths(filepath.Join(dir, *corpus))
	if err != nil {
		return err
	}
	db, cleanup, err := freshDB(*dsn)
	if err != nil {
		return err
	}
	defer cleanup()
	ctx = auth.System(ctx)
	st, err := store.Open(ctx, db, store.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Import(ctx, store.ImportOptions{Corpus: "load"}, files); err != nil {
		return err
	}
	c, err := st.CorpusByName(ctx, "load")
	if err != nil {
		return err
	}
	var tokens []string
	for i := range 8 {
		name := fmt.Sprintf("admin%d", i)
		if _, err := st.CreateUser(ctx, name, auth.Admin); err != nil {
			return err
		}
		tok, _, err := st.CreateToken(ctx, name, "load", time.Hour)
		if err != nil {
			return err
		}
		tokens = append(tokens, tok)
	}
	auditedBefore, err := st.Client.AuditEntry.Query().Count(ctx)
	if err != nil {
		return err
	}

	cfg := server.DefaultConfig
	cfg.RatePerSecond = 0 // one client here is many users: measure the server, not the limiter
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: server.NewServer(slog.New(slog.DiscardHandler), cfg, st, nil)}
	go srv.Serve(ln)
	defer srv.Shutdown(context.WithoutCancel(ctx))
	endpoint := "http://" + ln.Addr().String() + "/graphql"
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *clients}, Timeout: 30 * time.Second}

	type sample struct {
		query int
		d     time.Duration
		err   error
	}
	var next atomic.Int64
	samples := make([][]sample, *clients)
	deadline := time.Now().Add(*timeout)
	var wg sync.WaitGroup
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cpu0 := processCPU()
	start := time.Now()
	for w := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := tokens[w%len(tokens)]
			for {
				i := next.Add(1) - 1
				if i >= int64(*requests) || time.Now().After(deadline) {
					return
				}
				q := int(i) % len(queries)
				body := queries[q].body
				if q == 1 {
					body = fmt.Sprintf(body, fmt.Sprint(c.ID))
				}
				t0 := time.Now()
				err := post(hc, endpoint, token, body)
				samples[w] = append(samples[w], sample{q, time.Since(t0), err})
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0

	byQuery := make([][]time.Duration, len(queries))
	var all []time.Duration
	errs := 0
	var firstErr error
	for _, ss := range samples {
		for _, s := range ss {
			if s.err != nil {
				errs++
				firstErr = cmpErr(firstErr, s.err)
				continue
			}
			byQuery[s.query] = append(byQuery[s.query], s.d)
			all = append(all, s.d)
		}
	}
	auditedAfter, err := st.Client.AuditEntry.Query().Count(ctx)
	if err != nil {
		return err
	}
	n, err := st.VerifyAudit(ctx)
	if err != nil {
		return fmt.Errorf("audit verify: %w", err)
	}
	kind := "sqlite"
	if *dsn != "" {
		kind = "postgres"
	}
	fmt.Fprintf(stdout, "%s, %d clients, %d notes: %d requests in %s = %.0f req/s, %d errors; %d audit entries written, chain of %d verified\n",
		kind, *clients, len(files), len(all)+errs, elapsed.Round(time.Millisecond), float64(len(all)+errs)/elapsed.Seconds(), errs,
		auditedAfter-auditedBefore, n)
	// On a shared machine req/s follows the CPU the process got; the CPU
	// per request does not.
	fmt.Fprintf(stdout, "process CPU (server, clients, SQLite; not PostgreSQL's): %.2f ms per request, %.2f of %d cores on average\n",
		float64(cpu.Microseconds())/1000/float64(len(all)+errs), cpu.Seconds()/elapsed.Seconds(), runtime.NumCPU())
	fmt.Fprintf(stdout, "%-12s %6s %8s %8s %8s %8s\n", "query", "n", "p50", "p90", "p99", "max")
	for i, q := range queries {
		printRow(stdout, q.name, byQuery[i])
	}
	printRow(stdout, "all", all)
	if firstErr != nil {
		fmt.Fprintln(stdout, "first error:", firstErr)
	}
	return nil
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func printRow(w io.Writer, name string, ds []time.Duration) {
	if len(ds) == 0 {
		fmt.Fprintf(w, "%-12s %6d\n", name, 0)
		return
	}
	slices.Sort(ds)
	p := func(q float64) string {
		return ds[min(len(ds)-1, int(q*float64(len(ds))))].Round(100 * time.Microsecond).String()
	}
	fmt.Fprintf(w, "%-12s %6d %8s %8s %8s %8s\n", name, len(ds), p(0.5), p(0.9), p(0.99), ds[len(ds)-1].Round(100*time.Microsecond))
}

func post(hc *http.Client, endpoint, token, body string) error {
	req, err := http.NewRequest("POST", endpoint, bytes.NewBufferString(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var out struct {
		Errors []json.RawMessage `json:"errors"`
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, data)
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Errors) > 0 {
		return fmt.Errorf("%.300s", data)
	}
	return nil
}

// freshDB returns the DSN of an empty database: a new database on the given
// PostgreSQL server, or a SQLite file in a temporary directory.
func freshDB(admin string) (string, func(), error) {
	if admin == "" {
		dir, err := os.MkdirTemp("", "deidcorpus-load-")
		if err != nil {
			return "", nil, err
		}
		return filepath.Join(dir, "load.db"), func() { os.RemoveAll(dir) }, nil
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", nil, err
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
		return "", nil, fmt.Errorf("the load test runs on loopback only, not %s", h)
	}
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return "", nil, err
	}
	buf := make([]byte, 6)
	rand.Read(buf)
	name := "deidcorpus_load_" + hex.EncodeToString(buf)
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		db.Close()
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		db.Close()
	}, nil
}
