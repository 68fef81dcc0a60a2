package server_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/server"
	"deidcorpus/store/storetest"
)

// post sends a GraphQL request with an API token.
func post(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/graphql", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestLimits(t *testing.T) {
	st := storetest.Open(t, storetest.SQLite)
	cfg := server.DefaultConfig
	cfg.MaxDepth = 4
	cfg.MaxComplexity = 50
	cfg.MaxRequestBytes = 4 << 10
	cfg.RatePerSecond, cfg.RateBurst = 20, 20
	// The buckets refill only when the test moves the clock on: the flood
	// below meets exactly a burst's worth of answers, however slow the machine.
	clock := storetest.NewClock()
	cfg.Clock = clock
	ts := httptest.NewServer(server.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), cfg, st, newJobs(t, st)))
	defer ts.Close()
	token := storetest.Token(t, st, "admin", auth.Admin)

	// Deep and complex queries are refused with a message saying why;
	// introspection does not count toward the depth.
	_, body := post(t, ts.URL, token, `{"query":"{ corpora { edges { node { documents { edges { node { id } } } } } } }"}`)
	assert.Contains(t, body, "over the limit of 4")
	_, body = post(t, ts.URL, token, `{"query":"{ __schema { types { fields { type { ofType { ofType { name } } } } } } }"}`)
	assert.NotContains(t, body, "over the limit")
	_, body = post(t, ts.URL, token, `{"query":"{ a: corpora(first: 1) { totalCount } b: corpora(first: 1) { totalCount } c: corpora(first: 1) { totalCount } d: documents { totalCount } e: spans { totalCount } f: jobs { totalCount } g: models { totalCount } h: releases { totalCount } i: patients { totalCount } j: evaluations { totalCount } k: corpora { totalCount } l: corpora { totalCount } m: corpora { totalCount } n: corpora { totalCount } o: corpora { totalCount } p: corpora { totalCount } q: corpora { totalCount } r: corpora { totalCount } s: corpora { totalCount } t: corpora { totalCount } u: corpora { totalCount } v: corpora { totalCount } w: corpora { totalCount } x: corpora { totalCount } y: corpora { totalCount } z: corpora { totalCount } }"}`)
	assert.Contains(t, body, "exceeds the limit of 50")

	// An oversized body is refused before it is read.
	big := `{"query":"{ corpora { totalCount } }","variables":{"x":"` + strings.Repeat("a", 8<<10) + `"}}`
	code, _ := post(t, ts.URL, token, big)
	assert.Equal(t, http.StatusRequestEntityTooLarge, code)

	// A flood with one token is refused with 429 and the server stays up:
	// bounded in count, loopback only.
	clock.Advance(time.Second) // refill the bucket after the requests above
	var ok, limited atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				req, _ := http.NewRequest("POST", ts.URL+"/graphql", bytes.NewReader([]byte(`{"query":"{ corpora { totalCount } }"}`)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusTooManyRequests:
					limited.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("flood: %d answered, %d refused with 429", ok.Load(), limited.Load())
	assert.Equal(t, int32(cfg.RateBurst), ok.Load(), "a burst's worth answered")
	assert.Positive(t, limited.Load(), "the rest refused")
	resp, err := http.Get(ts.URL + "/healthz") // health checks are never rate limited
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the server stays up")
}
