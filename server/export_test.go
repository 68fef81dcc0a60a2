package server

import (
	"io"
	"log/slog"
	"net/http"

	"deidcorpus/jobs"
	"deidcorpus/store"
)

// routeList records the patterns of the routes registered on it.
type routeList []string

func (l *routeList) Handle(pattern string, _ http.Handler) { *l = append(*l, pattern) }

// RoutePatterns lists the pattern of every route the server has, as
// addRoutes registers them.
func RoutePatterns(st *store.Store, jm *jobs.Manager) []string {
	var l routeList
	addRoutes(&l, slog.New(slog.NewTextHandler(io.Discard, nil)), DefaultConfig, st, jm, newRateLimiter(0, 0, nil))
	return l
}
