package server

import (
	"log/slog"
	"net/http"

	"deidcorpus/jobs"
	"deidcorpus/store"
	"deidcorpus/web"
)

// addRoutes is the whole HTTP surface of the server.
// The API and downloads need an API token (authenticate); package auth
// decides what each account may reach through them.
func addRoutes(mux *http.ServeMux, logger *slog.Logger, cfg Config, st *store.Store, jm *jobs.Manager, limiter *rateLimiter) {
	authed := func(h http.Handler) http.Handler { return authenticate(logger, st, limiter, h) }
	mux.Handle("/graphql", authed(graphqlHandler(logger, cfg, st, jm, limiter)))
	mux.Handle("GET /graphiql/", graphiqlHandler())
	mux.Handle("GET /graphiql", http.RedirectHandler("/graphiql/", http.StatusMovedPermanently))
	mux.Handle("GET /download/corpora/{name}", authed(handleCorpusDownload(logger, st)))
	mux.Handle("GET /download/artifacts/{id}", authed(handleArtifactDownload(logger, st)))
	mux.Handle("GET /download/releases/{ref}", authed(handleReleaseDownload(logger, st)))
	mux.Handle("GET /healthz", handleHealthz(st))
	mux.Handle("/", web.Handler()) // the dashboard; GET and HEAD only
}
