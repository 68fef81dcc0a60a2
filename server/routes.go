package server

import (
	"log/slog"
	"net/http"

	"deidcorpus/jobs"
	"deidcorpus/store"
	"deidcorpus/web"
)

// addRoutes is the whole HTTP surface of the server.
func addRoutes(mux *http.ServeMux, logger *slog.Logger, cfg Config, st *store.Store, jm *jobs.Manager) {
	mux.Handle("/graphql", graphqlHandler(logger, cfg, st, jm))
	mux.Handle("GET /graphiql/", graphiqlHandler())
	mux.Handle("GET /graphiql", http.RedirectHandler("/graphiql/", http.StatusMovedPermanently))
	mux.Handle("GET /download/corpora/{name}", handleCorpusDownload(logger, st))
	mux.Handle("GET /download/artifacts/{id}", handleArtifactDownload(logger, st))
	mux.Handle("GET /download/releases/{ref}", handleReleaseDownload(logger, st))
	mux.Handle("GET /healthz", handleHealthz(st))
	mux.Handle("/", web.Handler()) // the dashboard; GET and HEAD only
}
