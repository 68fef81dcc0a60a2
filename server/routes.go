package server

import (
	"log/slog"
	"net/http"

	"deidcorpus/jobs"
	"deidcorpus/store"
	"deidcorpus/web"
)

// router is where addRoutes registers routes: the server's mux, or a test's
// list of them (export_test.go), so that a test tries every route there is.
type router interface {
	Handle(pattern string, h http.Handler)
}

// addRoutes is the whole HTTP surface of the server.
// The API and downloads need an API token (authenticate), the one way in:
// a request without a valid token is refused with 401 whatever else it
// says. The one exception is a websocket handshake on /graphql, which sends
// its token in connection_init (graphqlRoute). Package auth decides what each
// account may reach. The other routes serve files of the binary and read
// nothing from the database.
func addRoutes(mux router, logger *slog.Logger, cfg Config, st *store.Store, jm *jobs.Manager, limiter *rateLimiter) {
	authed := func(h http.Handler) http.Handler { return authenticate(logger, st, limiter, h) }
	api, socket := graphqlHandlers(logger, cfg, st, jm, limiter)
	mux.Handle("/graphql", graphqlRoute(authed, api, socket))
	mux.Handle("GET /graphiql/", graphiqlHandler())
	mux.Handle("GET /graphiql", http.RedirectHandler("/graphiql/", http.StatusMovedPermanently))
	mux.Handle("GET /download/corpora/{name}", authed(handleCorpusDownload(logger, st)))
	mux.Handle("GET /download/artifacts/{id}", authed(handleArtifactDownload(logger, st)))
	mux.Handle("GET /download/releases/{ref}", authed(handleReleaseDownload(logger, st)))
	mux.Handle("GET /healthz", handleHealthz(st))
	mux.Handle("/", web.Handler()) // the dashboard; GET and HEAD only
}
