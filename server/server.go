// Package server is deidcorpus's HTTP surface: the GraphQL API, the embedded
// GraphQL IDE, downloads and health checks. routes.go lists every route.
package server

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"deidcorpus/auth"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/formats"
	"deidcorpus/resolvers"
	"deidcorpus/store"
)

// Config tunes the server and its limits.
type Config struct {
	// MaxUploadBytes bounds one multipart request (imports).
	MaxUploadBytes int64
	// UploadMemory is how long a multipart request may be for its files to
	// be held in memory; a longer one's are spooled to temporary files,
	// which the import reads where it needs (see spooledUploads).
	UploadMemory int64
	// MaxUploads bounds the multipart requests (uploads) in flight, each of
	// which may hold UploadMemory of its files and a note being imported
	// in memory; one more waits up to UploadWait for its turn, then is
	// refused with 429. 0 turns the bound off.
	MaxUploads int
	UploadWait time.Duration
	// MaxNoteBytes is the most bytes a note of an uploaded file may take
	// (0: formats.DefaultMaxNote).
	MaxNoteBytes int64
	// MaxImportBytes is the most bytes the files of one import may hold
	// once decompressed (0: formats.DefaultMaxImport).
	MaxImportBytes int64
	// MaxRequestBytes bounds any other request's body.
	MaxRequestBytes int64
	// MaxComplexity and MaxDepth bound a GraphQL operation; MaxTokens,
	// MaxFields and MaxRepeats bound its query before it is validated (see
	// selectionLimit).
	MaxComplexity int
	MaxDepth      int
	MaxTokens     int
	MaxFields     int
	MaxRepeats    int
	// RatePerSecond and RateBurst bound each client's requests (by token,
	// else by address); 0 turns the limit off.
	RatePerSecond, RateBurst int
	// RequestTimeout bounds a request that is not a stream (websocket, SSE).
	RequestTimeout time.Duration
	// LogRequests logs every request at level info; otherwise at debug,
	// which a server's default level leaves out (a dashboard's page load is
	// dozens of requests).
	LogRequests bool
	// Clock refills the rate limit's buckets; nil is the wall clock (tests
	// move one on by hand rather than sleep).
	Clock Clock
}

// Clock tells the time.
type Clock interface{ Now() time.Time }

// DefaultConfig is what `serve` uses unless told otherwise.
var DefaultConfig = Config{
	MaxUploadBytes: 512 << 20, UploadMemory: 8 << 20, MaxRequestBytes: 8 << 20,
	MaxUploads: 4, UploadWait: 5 * time.Second, MaxNoteBytes: formats.DefaultMaxNote,
	MaxImportBytes: formats.DefaultMaxImport,
	MaxComplexity:  5000, MaxDepth: 12, MaxTokens: 10_000, MaxFields: 2000, MaxRepeats: 10,
	RatePerSecond: 50, RateBurst: 200,
	RequestTimeout: 2 * time.Minute,
}

//go:embed assets
var assets embed.FS

// NewServer returns the HTTP handler of the whole server. jm enqueues and
// watches jobs; whether this process also works them is the caller's choice.
func NewServer(logger *slog.Logger, cfg Config, st *store.Store, jm *jobs.Manager) http.Handler {
	mux := http.NewServeMux()
	limiter := newRateLimiter(cfg.RatePerSecond, cfg.RateBurst, cfg.Clock)
	addRoutes(mux, logger, cfg, st, jm, limiter)
	return markRequests(logRequests(logger, cfg.LogRequests, limitRequests(cfg, limiter, mux)))
}

// markRequests marks every request's context as a request's before anything
// else sees it: package auth then refuses whatever one without a viewer asks
// of the store, rather than taking it for the process itself.
func markRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(auth.MarkRequest(r.Context())))
	})
}

// graphqlHandlers returns the API over HTTP (POST, GET, server-sent events,
// uploads), for requests authenticated by their header, and the API over a
// websocket only, for connections that authenticate in connection_init: a
// request let through without a header can reach nothing but that.
func graphqlHandlers(logger *slog.Logger, cfg Config, st *store.Store, jm *jobs.Manager, limiter *rateLimiter) (api, socket http.Handler) {
	schema := resolvers.NewSchema(st, jm, resolvers.WithMaxNote(cfg.MaxNoteBytes), resolvers.WithMaxImport(cfg.MaxImportBytes))
	api = newGraphQLServer(logger, cfg, schema, st, limiter,
		transport.SSE{}, transport.Options{}, transport.GET{}, transport.POST{},
		spooledUploads{MultipartForm: transport.MultipartForm{MaxUploadSize: cfg.MaxUploadBytes, MaxMemory: cfg.UploadMemory},
			slots: newUploadSlots(cfg.MaxUploads), wait: cfg.UploadWait})
	// The default websocket implementation refuses cross-origin browser
	// pages. A socket that has not authenticated within InitTimeout is closed.
	socket = newGraphQLServer(logger, cfg, schema, st, limiter, transport.Websocket{
		KeepAlivePingInterval: 10 * time.Second, InitTimeout: 10 * time.Second, InitFunc: websocketInit(st),
	})
	return api, socket
}

func newGraphQLServer(logger *slog.Logger, cfg Config, schema graphql.ExecutableSchema, st *store.Store, limiter *rateLimiter, transports ...graphql.Transport) *handler.Server {
	srv := handler.New(schema)
	for _, t := range transports {
		srv.AddTransport(t)
	}
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	// After the persisted query is found, before the executor parses it.
	srv.Use(selectionLimit{tokens: cfg.MaxTokens, fields: cfg.MaxFields, repeats: cfg.MaxRepeats})
	srv.SetParserTokenLimit(cfg.MaxTokens)
	srv.Use(extension.FixedComplexityLimit(cfg.MaxComplexity))
	srv.Use(depthLimit{max: cfg.MaxDepth})
	srv.Use(pageLimit{})
	srv.SetErrorPresenter(resolvers.ErrorPresenter(logger))
	authorizeGraphQL(srv, st, limiter, logger)
	auditGraphQL(srv, st, logger)
	return srv
}

// spooledUploads is gqlgen's multipart transport, which holds the files of
// a request shorter than MaxMemory in memory and spools a longer one's to
// temporary files, judging by the length the request declares. A request
// of unknown length (chunked, or HTTP/2 without a content-length) would be
// held in memory whatever its size, up to MaxUploadSize: it is taken to be
// as long as a request may be, and MaxUploadSize still stops it there.
// Before any of it is read, a request waits for one of the slots (see
// Config.MaxUploads).
type spooledUploads struct {
	transport.MultipartForm
	slots uploadSlots
	wait  time.Duration
}

func (t spooledUploads) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if !t.slots.acquire(r.Context(), t.wait) {
		tooManyUploads(w, cap(t.slots))
		return
	}
	defer t.slots.release()
	if r.ContentLength < 0 {
		r = r.WithContext(r.Context()) // a copy: what the caller holds stays as it came
		r.ContentLength = t.MaxUploadSize
	}
	t.MultipartForm.Do(w, r, exec)
}

func graphiqlHandler() http.Handler {
	sub, err := fs.Sub(assets, "assets/graphiql")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return http.StripPrefix("/graphiql/", http.FileServerFS(sub))
}

// handleHealthz answers whether the database answers: it is public, so it
// is given a ping and nothing that reads.
func handleHealthz(db interface{ Ping(context.Context) error }) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := db.Ping(r.Context()); err != nil {
			http.Error(w, "database unavailable", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
}

// statusRecorder remembers a response's status for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer
// (websocket hijacking).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush passes flushes through: server-sent events assert http.Flusher
// directly rather than through a ResponseController.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func logRequests(logger *slog.Logger, all bool, next http.Handler) http.Handler {
	level := slog.LevelDebug
	if all {
		level = slog.LevelInfo
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		logger.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
			"duration_ms", float64(time.Since(start).Microseconds())/1000)
	})
}
