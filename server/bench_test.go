package server_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"deidcorpus/auth"
	"deidcorpus/internal/shared"
	"deidcorpus/pipeline/formats"
	"deidcorpus/server"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// BenchmarkAuthorizedQuery measures what accounts cost a request: the same
// GraphQL query over MEDDOCAN train (500 notes, ~11k spans) as an admin
// (token lookup, rule check, no row filter) and as a researcher (row filters
// on every table it touches, here a surrogate copy of the same corpus).
func BenchmarkAuthorizedQuery(b *testing.B) {
	files, err := formats.ReadPaths(shared.Path(b, "meddocan-i2b2/train"))
	if err != nil {
		b.Fatal(err)
	}
	st := storetest.Open(b, storetest.SQLite)
	ctx := context.Background()
	for _, c := range []struct{ name, kind string }{{"orig", "original"}, {"surr", "surrogate"}} {
		if _, err := st.Import(ctx, store.ImportOptions{Corpus: c.name, CorpusKind: c.kind}, files); err != nil {
			b.Fatal(err)
		}
	}
	cfg := server.DefaultConfig
	cfg.RatePerSecond = 0
	h := server.NewServer(slog.New(slog.DiscardHandler), cfg, st, nil)
	const query = `{"query":"{ me { name } corpora { totalCount } documents(first: 50) { totalCount edges { node { id } } } spans(first: 50) { totalCount } }"}`
	for _, role := range []auth.Role{auth.Admin, auth.Researcher} {
		token := storetest.Token(b, st, string(role), role)
		b.Run(string(role), func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("POST", "/graphql", strings.NewReader(query))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 || strings.Contains(rec.Body.String(), "errors") {
					b.Fatal(rec.Code, rec.Body.String())
				}
			}
		})
	}
	// The token lookup alone.
	token := storetest.Token(b, st, "admin", auth.Admin)
	b.Run("authenticate", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.Authenticate(ctx, token); err != nil {
				b.Fatal(err)
			}
		}
	})
}
