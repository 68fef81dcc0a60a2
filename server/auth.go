package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/resolvers"
	"deidcorpus/store"
)

// bearerToken is the API token of an Authorization header, which must use
// the Bearer scheme (RFC 6750; the scheme's name in any case). A header of
// another scheme or none is refused, naming the scheme but never echoing
// what could be a secret.
func bearerToken(h string) (string, error) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	token = strings.TrimSpace(token)
	switch {
	case !ok:
		return "", apperr.New(apperr.Unauthorized, "the Authorization header has no scheme: send Authorization: Bearer TOKEN")
	case !strings.EqualFold(scheme, "Bearer"):
		if len(scheme) > 12 || strings.ContainsFunc(scheme, func(r rune) bool { return !unicode.IsLetter(r) }) {
			scheme = "not a scheme's name" // perhaps the token itself
		}
		return "", apperr.New(apperr.Unauthorized, "the Authorization header's scheme is %q: send Authorization: Bearer TOKEN", scheme)
	case token == "":
		return "", apperr.New(apperr.Unauthorized, "the Authorization header has no token after Bearer")
	}
	return token, nil
}

// authenticate serves next only for requests with a valid API token, acting
// for its account; the rate limit applies per token. It is the one way in to
// every route that reads data: a request without a valid token is answered
// 401 whatever else it says (a websocket's upgrade headers included).
func authenticate(logger *slog.Logger, st *store.Store, limiter *rateLimiter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Get("Authorization")
		if header == "" {
			unauthorized(w, r, apperr.New(apperr.Unauthorized, "send an API token: Authorization: Bearer TOKEN (the first start writes an admin token; `deidcorpus tokens create` makes more)"))
			return
		}
		token, err := bearerToken(header)
		var v *auth.Viewer
		if err == nil {
			v, err = st.Authenticate(r.Context(), token)
		}
		if err != nil {
			if !limiter.allow("addr:" + clientAddress(r)) {
				tooMany(w) // bad tokens are rated per address
				return
			}
			if apperr.CodeOf(err) != apperr.Unauthorized {
				httpError(w, logger, err)
				return
			}
			unauthorized(w, r, err)
			return
		}
		if !limiter.allow("token:" + token) {
			tooMany(w)
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), v)))
	})
}

// graphqlRoute serves the API to requests that authenticate (api), and a
// websocket handshake without an Authorization header to socket, the API
// over a websocket alone, which authenticates in connection_init: browsers
// cannot set a header on a websocket. That is the one request the server
// lets in without a token, and what it reaches first asks for one
// (websocketInit). A handshake with a header is authenticated as any request
// (401 if the token is not good), then refused: a websocket's token goes in
// connection_init and nowhere else, so that every socket takes one way in.
func graphqlRoute(authed func(http.Handler) http.Handler, api, socket http.Handler) http.Handler {
	api = authed(api)
	headerSocket := authed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, string(apperr.Invalid)+": "+websocketTokenHint+", not in an Authorization header", http.StatusBadRequest)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !websocketHandshake(r):
			api.ServeHTTP(w, r)
		case r.Header.Get("Authorization") == "":
			socket.ServeHTTP(w, r)
		default:
			headerSocket.ServeHTTP(w, r)
		}
	})
}

const websocketTokenHint = `a websocket sends its API token in connection_init: {"Authorization": "Bearer TOKEN"}`

// websocketHandshake tells whether r opens a websocket (RFC 6455 4.1): a GET
// asking to upgrade, with a key and a version. Anything less is an ordinary
// request and authenticates as one.
func websocketHandshake(r *http.Request) bool {
	return r.Method == http.MethodGet &&
		strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		headerHasToken(r.Header, "Connection", "upgrade") &&
		r.Header.Get("Sec-WebSocket-Key") != "" &&
		r.Header.Get("Sec-WebSocket-Version") != ""
}

// headerHasToken tells whether a comma-separated header holds token.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// connectionToken holds the token of a websocket connection, which carries
// many operations: each is authenticated anew (a token revoked, an account
// disabled or changed while the connection is open takes effect at once) and
// rated.
type connectionToken struct{}

// unauthorized answers 401, as a GraphQL error for the API.
func unauthorized(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="deidcorpus"`)
	if r.URL.Path != "/graphql" {
		http.Error(w, string(apperr.Unauthorized)+": "+err.Error(), http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
		"message": err.Error(), "extensions": map[string]any{"code": string(apperr.Unauthorized)},
	}}})
}

// websocketInit authenticates a websocket connection by the token of its
// connection_init payload ({"Authorization": "Bearer TOKEN"}), the only one
// it has: its upgrade request carried none (graphqlRoute).
func websocketInit(st *store.Store) transport.WebsocketInitFunc {
	return func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		if p.Authorization() == "" {
			return refuseSocket(ctx, apperr.New(apperr.Unauthorized, "send an API token: "+websocketTokenHint))
		}
		token, err := bearerToken(p.Authorization())
		if err != nil {
			return refuseSocket(ctx, err)
		}
		v, err := st.Authenticate(ctx, token)
		if err != nil {
			return refuseSocket(ctx, err)
		}
		return context.WithValue(auth.NewContext(ctx, v), connectionToken{}, token), nil, nil
	}
}

// refuseSocket closes a connection that did not authenticate with
// graphql-transport-ws's 4403 and the reason, the one message that protocol
// sends a client there (a close reason holds at most 123 bytes).
func refuseSocket(ctx context.Context, err error) (context.Context, *transport.InitPayload, error) {
	reason := err.Error()
	if apperr.CodeOf(err) != apperr.Unauthorized {
		reason = "the token could not be checked"
	}
	for len(reason) > 123 {
		_, size := utf8.DecodeLastRuneInString(reason)
		reason = reason[:len(reason)-size]
	}
	ctx = transport.WithWebsocketCloseCode(transport.AppendCloseReason(ctx, reason), 4403)
	return ctx, nil, err
}

// authorizeGraphQL checks every root field of an operation against its rule
// (package auth) before any of it runs: an operation asking for one thing
// its viewer may not have is refused whole, and the refusal is written to
// the audit log.
func authorizeGraphQL(srv *handler.Server, st *store.Store, limiter *rateLimiter, logger *slog.Logger) {
	present := resolvers.ErrorPresenter(logger)
	refuse := func(ctx context.Context, err error, path ast.Path) graphql.ResponseHandler {
		gerr := present(ctx, err)
		gerr.Path = path
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{gerr}})
	}
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		if oc.Operation == nil {
			return next(ctx)
		}
		if token, ok := ctx.Value(connectionToken{}).(string); ok {
			v, err := st.Authenticate(ctx, token)
			if err != nil {
				return refuse(ctx, err, nil)
			}
			if !limiter.allow("token:" + token) {
				return refuse(ctx, apperr.New(apperr.TooMany, "too many requests: slow down"), nil)
			}
			ctx = auth.NewContext(ctx, v) // a fresh viewer: role, assignments as they are now
		}
		if auth.FromContext(ctx) == nil {
			// Every way in authenticates first; this is the net under them.
			return refuse(ctx, apperr.New(apperr.Unauthorized, "no API token"), nil)
		}
		for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, nil) {
			if strings.HasPrefix(f.Name, "__") {
				continue // introspection
			}
			op := rootType(oc.Operation.Operation) + "." + f.Name
			err := st.Authorize(ctx, op, f.ArgumentMap(oc.Variables))
			if err == nil {
				continue
			}
			// An object hidden from the viewer is refused as not found:
			// audited as a denial too (ids are easily guessed).
			if code := apperr.CodeOf(err); code == apperr.Forbidden || code == apperr.NotFound {
				if err := st.Audit(context.WithoutCancel(ctx), store.AuditRecord{Action: "denied", Target: op, Detail: err.Error()}); err != nil {
					logger.Error("write audit log", "target", op, "err", err)
				}
			}
			return refuse(ctx, err, ast.Path{ast.PathName(f.Alias)})
		}
		return next(ctx)
	})
}

func rootType(op ast.Operation) string {
	switch op {
	case ast.Mutation:
		return "Mutation"
	case ast.Subscription:
		return "Subscription"
	}
	return "Query"
}
