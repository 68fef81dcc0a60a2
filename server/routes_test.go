package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/ent/auditentry"
	"deidcorpus/server"
	"deidcorpus/store/storetest"
)

// routeRule classifies one route of routes.go. A public route serves files
// of the binary and reads nothing from the database; any other must
// authenticate. request is a request of the route that reads data (for a
// public one, any request of it).
type routeRule struct {
	public  bool
	method  string
	request func(f *authzFixture) (path, body string)
}

// routeRules has a rule for every route: a route added to routes.go without
// one fails TestEveryRouteAuthenticates, so that it is classified on purpose.
var routeRules = map[string]routeRule{
	"/graphql": {method: "POST", request: func(*authzFixture) (string, string) {
		return "/graphql", `{"query": "{ corpora { edges { node { name } } } }"}`
	}},
	"GET /download/corpora/{name}": {method: "GET", request: func(*authzFixture) (string, string) {
		return "/download/corpora/orig", ""
	}},
	"GET /download/artifacts/{id}": {method: "GET", request: func(f *authzFixture) (string, string) {
		return "/download/artifacts/" + f.origArtifact, ""
	}},
	"GET /download/releases/{ref}": {method: "GET", request: func(*authzFixture) (string, string) {
		return "/download/releases/orig-rel@1.0.0", ""
	}},
	"GET /graphiql/": {public: true, method: "GET", request: func(*authzFixture) (string, string) { return "/graphiql/", "" }},
	"GET /graphiql":  {public: true, method: "GET", request: func(*authzFixture) (string, string) { return "/graphiql", "" }},
	"GET /healthz":   {public: true, method: "GET", request: func(*authzFixture) (string, string) { return "/healthz", "" }},
	"/":              {public: true, method: "GET", request: func(*authzFixture) (string, string) { return "/", "" }},
}

// credential is what a request says about who sends it.
type credential struct {
	name   string
	header func(f *authzFixture) string // the Authorization header; "" for none
}

// refusedCredentials are what refused requests say: nothing, a header that is not
// a bearer token, or a token that is unknown, revoked or expired (the last
// two the admin's, so that accepting them would open everything).
func refusedCredentials(revoked, expired string) []credential {
	return []credential{
		{name: "no token", header: func(*authzFixture) string { return "" }},
		{name: "basic scheme", header: func(*authzFixture) string { return "Basic YWRtaW46YWRtaW4=" }},
		{name: "bearer without token", header: func(*authzFixture) string { return "Bearer" }},
		{name: "token without scheme", header: func(f *authzFixture) string { return f.tokens[auth.Admin] }},
		{name: "unknown token", header: func(*authzFixture) string { return "Bearer " + auth.NewToken() }},
		{name: "not a token", header: func(*authzFixture) string { return "Bearer admin" }},
		{name: "revoked token", header: func(*authzFixture) string { return "Bearer " + revoked }},
		{name: "expired token", header: func(*authzFixture) string { return "Bearer " + expired }},
	}
}

// upgradeHeaders are the header sets tried with every credential: none, the
// finding's bare "Upgrade: websocket", and a whole websocket handshake.
var upgradeHeaders = []struct {
	name      string
	handshake bool
	header    map[string]string
}{
	{name: "plain"},
	{name: "upgrade header", header: map[string]string{"Upgrade": "websocket"}},
	{name: "websocket handshake", handshake: true, header: map[string]string{"Upgrade": "websocket", "Connection": "Upgrade",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"}},
}

// TestEveryRouteAuthenticates tries every route of the server with every
// kind of refused credential, with and without a websocket's upgrade
// headers, and with each role's token: every route that reads data answers
// 401 to all the refused ones; a public route serves the same bytes to
// anyone, whatever the database holds.
func TestEveryRouteAuthenticates(t *testing.T) {
	cfg := server.DefaultConfig
	cfg.RatePerSecond = 0 // the test sends many bad tokens from one address
	clock := storetest.NewClock()
	cfg.Clock = clock
	f := newAuthzFixtureConfig(t, storetest.SQLite, cfg)
	ctx := context.Background()
	revoked, _, err := f.st.CreateToken(ctx, "admin", "revoked", 0)
	require.NoError(t, err)
	expired, _, err := f.st.CreateToken(ctx, "admin", "expired", time.Hour)
	require.NoError(t, err)
	// Past its hour; the fixture's tokens have no end.
	clock.Advance(2 * time.Hour)
	toks, err := f.st.Tokens(ctx, "admin")
	require.NoError(t, err)
	for _, tk := range toks {
		if tk.Name == "revoked" {
			_, err = f.st.RevokeToken(ctx, tk.ID)
			require.NoError(t, err)
		}
	}
	refused := refusedCredentials(revoked, expired)

	// An empty server answers the public routes as the fixture's does.
	_, empty, _ := newServer(t, storetest.SQLite)

	patterns := server.RoutePatterns(f.st, nil)
	require.NotEmpty(t, patterns)
	for _, pattern := range patterns {
		rule, ok := routeRules[pattern]
		if !assert.True(t, ok, "route %q has no rule in routeRules: say whether it is public (reads nothing from the database) or authenticated", pattern) {
			continue
		}
		path, body := rule.request(f)
		for _, up := range upgradeHeaders {
			for _, c := range refused {
				name := fmt.Sprintf("%s, %s, %s", pattern, up.name, c.name)
				status, got := send(t, f.ts.URL, rule.method, path, body, c.header(f), up.header, up.handshake)
				if rule.public {
					wantStatus, want := send(t, empty.URL, rule.method, path, body, "", up.header, up.handshake)
					assert.Equal(t, wantStatus, status, name)
					assert.Equal(t, want, got, "%s: a public route serves the same to anyone, whatever the database holds", name)
					continue
				}
				if up.handshake && pattern == "/graphql" && c.header(f) == "" {
					continue // the one request let in without a header: TestWebsocketRefusesBadInit
				}
				assert.Equal(t, http.StatusUnauthorized, status, "%s: %s", name, got)
				assert.NotContains(t, got, "orig", name)
			}
			for _, r := range auth.Roles {
				if rule.public {
					continue
				}
				name := fmt.Sprintf("%s, %s, %s", pattern, up.name, r)
				status, got := send(t, f.ts.URL, rule.method, path, body, "Bearer "+f.tokens[r], up.header, up.handshake)
				switch {
				case up.handshake && pattern == "/graphql":
					// A websocket's token goes in connection_init only.
					assert.Equal(t, http.StatusBadRequest, status, name)
					assert.Contains(t, got, "connection_init", name)
				case up.header != nil && pattern == "/graphql":
					// gqlgen's POST transport leaves upgrades to the websocket one.
					assert.Equal(t, http.StatusBadRequest, status, "%s: %s", name, got)
				case r == auth.Admin:
					assert.Equal(t, http.StatusOK, status, "%s: %s", name, got)
				default:
					assert.NotEqual(t, http.StatusUnauthorized, status, "%s: %s", name, got)
				}
			}
		}
	}
	for pattern := range routeRules {
		assert.Contains(t, patterns, pattern, "routeRules has a rule for a route the server does not have")
	}

	// Downloads are audited under the account that made them, and nothing
	// refused left a record (as the process or anybody).
	records, err := f.st.Client.AuditEntry.Query().Where(auditentry.TargetHasPrefix("download.")).All(auth.System(ctx))
	require.NoError(t, err)
	var actors []string
	for _, e := range records {
		actors = append(actors, e.Actor)
	}
	slices.Sort(actors)
	actors = slices.Compact(actors)
	assert.Equal(t, []string{"admin", "curator"}, actors, "the accounts whose downloads were served (3 header sets each)")
	assert.Len(t, records, 2*3*3, "admin and curator: 3 download routes with 3 header sets")
}

// send makes one request and returns its status and body. A websocket
// handshake that the server accepts (101) is closed at once.
func send(t *testing.T, base, method, path, body, authorization string, header map[string]string, handshake bool) (int, string) {
	t.Helper()
	if handshake {
		method = "GET" // a handshake is a GET
	}
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp.StatusCode, ""
	}
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(got)
}

// TestWebsocketRefusesBadInit: a websocket handshake without a header is let
// in, to the websocket transport alone, and is closed unless its
// connection_init carries a good token; no operation runs before that.
func TestWebsocketRefusesBadInit(t *testing.T) {
	clock := storetest.NewClock()
	cfg := server.DefaultConfig
	cfg.Clock = clock
	st, ts, _ := newServerConfig(t, storetest.SQLite, cfg)
	ctx := context.Background()
	revoked, row, err := st.CreateToken(ctx, "admin", "revoked", 0)
	require.NoError(t, err)
	_, err = st.RevokeToken(ctx, row.ID)
	require.NoError(t, err)
	expired, _, err := st.CreateToken(ctx, "admin", "expired", time.Hour)
	require.NoError(t, err)
	clock.Advance(2 * time.Hour)
	f := &authzFixture{tokens: map[auth.Role]string{auth.Admin: ts.Token}}
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/graphql"
	query := map[string]any{"query": "{ corpora { totalCount } me { name } }"}

	for _, c := range refusedCredentials(revoked, expired) {
		payload := map[string]any{}
		if h := c.header(f); h != "" {
			payload["Authorization"] = h
		}
		msgs, closed := websocketSession(t, url, map[string]any{"type": "connection_init", "payload": payload},
			map[string]any{"id": "1", "type": "subscribe", "payload": query})
		assert.Empty(t, msgs, "%s: no acknowledgement, no operation", c.name)
		assert.Equal(t, websocket.StatusCode(4403), websocket.CloseStatus(closed), "%s: %v", c.name, closed)
		assert.Contains(t, strings.ToLower(closed.Error()), "token", c.name)
	}
	// An operation before connection_init runs nothing either.
	msgs, _ := websocketSession(t, url, map[string]any{"id": "1", "type": "subscribe", "payload": query})
	assert.Empty(t, msgs, "an operation before connection_init")
	// A good token in connection_init opens it.
	msgs, _ = websocketSession(t, url, map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + ts.Token}},
		map[string]any{"id": "1", "type": "subscribe", "payload": query})
	require.Len(t, msgs, 2, "%v", msgs)
	assert.Equal(t, "connection_ack", msgs[0]["type"])
	assert.Contains(t, fmt.Sprint(msgs[1]), "name:admin")
}

// websocketSession opens a graphql-transport-ws connection without a
// header, sends msgs and returns what the server sent (keep-alives left
// out) until it closed the connection (and how) or sent the first result.
func websocketSession(t *testing.T, url string, msgs ...map[string]any) ([]map[string]any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	require.NoError(t, err)
	defer conn.CloseNow()
	for _, m := range msgs {
		if err := wsjson.Write(ctx, conn, m); err != nil {
			break // closed already
		}
	}
	var got []map[string]any
	for {
		var m map[string]any
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			require.NotErrorIs(t, err, context.DeadlineExceeded, "the server neither answered nor closed")
			return got, err
		}
		if m["type"] == "ping" {
			continue
		}
		got = append(got, m)
		if m["type"] == "next" {
			return got, nil
		}
	}
}
