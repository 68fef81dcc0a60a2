package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"deidcorpus/apperr"
)

// depthLimit refuses operations nested deeper than max fields. Introspection
// fields (__schema, __type) do not count: the IDE's introspection query is
// deep by nature and cheap.
type depthLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = depthLimit{}

func (depthLimit) ExtensionName() string                   { return "DepthLimit" }
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (d depthLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Doc.Operations.ForName(opCtx.OperationName)
	if op == nil {
		return nil
	}
	if depth := selectionDepth(op.SelectionSet, opCtx.Doc.Fragments, map[string]bool{}); depth > d.max {
		err := gqlerror.Errorf("operation is nested %d fields deep, over the limit of %d", depth, d.max)
		err.Extensions = map[string]any{"code": "invalid"}
		return err
	}
	return nil
}

func selectionDepth(set ast.SelectionSet, frags ast.FragmentDefinitionList, visiting map[string]bool) int {
	deepest := 0
	for _, sel := range set {
		d := 0
		switch s := sel.(type) {
		case *ast.Field:
			if strings.HasPrefix(s.Name, "__") {
				continue
			}
			d = 1 + selectionDepth(s.SelectionSet, frags, visiting)
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet, frags, visiting)
		case *ast.FragmentSpread:
			if visiting[s.Name] {
				continue // a cycle; the validator reports it
			}
			if f := frags.ForName(s.Name); f != nil {
				visiting[s.Name] = true
				d = selectionDepth(f.SelectionSet, frags, visiting)
				delete(visiting, s.Name)
			}
		}
		deepest = max(deepest, d)
	}
	return deepest
}

// limitRequests bounds a JSON request's body, gives each request without a
// stream (not a websocket, not server-sent events) a deadline, and refuses
// clients that send more than the rate allows with 429. Requests with a token
// are rated per token once it is known good (authenticate), others per
// address.
func limitRequests(cfg Config, limiter *rateLimiter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && r.Header.Get("Authorization") == "" && !limiter.allow("addr:"+clientAddress(r)) {
			tooMany(w)
			return
		}
		streaming := strings.EqualFold(r.Header.Get("Upgrade"), "websocket") ||
			strings.Contains(r.Header.Get("Accept"), "text/event-stream")
		// Uploads are bounded by the multipart transport (MaxUploadBytes).
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") && r.Body != nil {
			if r.ContentLength > cfg.MaxRequestBytes {
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, cfg.MaxRequestBytes)
		}
		if !streaming && cfg.RequestTimeout > 0 {
			ctx, cancel := context.WithTimeout(r.Context(), cfg.RequestTimeout)
			defer cancel()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

func tooMany(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, "too many requests: slow down", http.StatusTooManyRequests)
}

// clientAddress is the client's address, without its port.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// rateLimiter is a token bucket per client.
type rateLimiter struct {
	mu      sync.Mutex
	rate    float64
	burst   float64
	buckets map[string]*bucket
	clock   Clock
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimiter(perSecond, burst int, clock Clock) *rateLimiter {
	if clock == nil {
		clock = wallClock{}
	}
	return &rateLimiter{rate: float64(perSecond), burst: float64(burst), buckets: map[string]*bucket{}, clock: clock}
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (l *rateLimiter) allow(key string) bool {
	if l.rate <= 0 {
		return true
	}
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) > 100_000 {
			l.buckets = map[string]*bucket{} // forget idle clients rather than grow without bound
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// uploadSlots bounds the uploads in flight, so that clients uploading at
// once cannot make memory grow without bound; nil bounds nothing.
type uploadSlots chan struct{}

func newUploadSlots(n int) uploadSlots {
	if n <= 0 {
		return nil
	}
	return make(uploadSlots, n)
}

// acquire takes a slot, waiting up to wait for one; false if none came in
// time or the client went away.
func (s uploadSlots) acquire(ctx context.Context, wait time.Duration) bool {
	if s == nil {
		return true
	}
	select {
	case s <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case s <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func (s uploadSlots) release() {
	if s != nil {
		<-s
	}
}

// tooManyUploads refuses an upload that found no slot, as GraphQL errors
// are written, with the status of a rate limit.
func tooManyUploads(w http.ResponseWriter, slots int) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "5")
	w.WriteHeader(http.StatusTooManyRequests)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
		"message":    fmt.Sprintf("the server is busy with %d uploads, as many as it takes at once: try again in a few seconds", slots),
		"extensions": map[string]any{"code": string(apperr.TooMany)},
	}}})
}
