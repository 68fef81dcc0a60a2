// Package auth decides who may see and do what. It is the one place of
// authorization: the rule of every GraphQL root field, download and CLI
// command (rules.go), and the row filters that keep each role to its
// corpora in every database query (filter.go). The server, the resolvers
// and the CLI ask it; they hold no authorization logic of their own.
//
// Roles: an admin may do everything; a curator works on every corpus, reads
// original text and surrogate mappings, but not the audit log or other
// accounts; an annotator sees and annotates the corpora assigned to it; a
// researcher sees surrogate corpora and releases of them only, never an
// original note or mapping.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"deidcorpus/apperr"
)

// Role is what an account may do.
type Role string

// The roles, from most to least trusted.
const (
	Admin      Role = "admin"
	Curator    Role = "curator"
	Annotator  Role = "annotator"
	Researcher Role = "researcher"
)

// Roles lists every role.
var Roles = []Role{Admin, Curator, Annotator, Researcher}

// ParseRole reads a role name.
func ParseRole(s string) (Role, error) {
	for _, r := range Roles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", apperr.New(apperr.Invalid, "no role %q (roles: admin, curator, annotator, researcher)", s)
}

// Viewer is who a request or command acts for.
type Viewer struct {
	// UserID is the account's id; 0 for the local operator of the CLI.
	UserID int
	// TokenID is the id of the API token the request came with, if any,
	// and TokenExpires when that token expires (nil: never).
	TokenID      int
	TokenExpires *time.Time
	// Name is what the audit log and created-by fields record.
	Name string
	Role Role

	once    sync.Once
	corpora []int // visible corpus ids (filter.go)
	err     error
}

// NewViewer makes a viewer.
func NewViewer(userID int, name string, role Role) *Viewer {
	return &Viewer{UserID: userID, Name: name, Role: role}
}

// SeesSources tells whether ctx's viewer may read where a surrogate corpus
// came from (its source corpus, seed, runs) and why a curator accepted
// unannotated finds: curators and admins. Annotators and researchers read the
// public view of provenance (release.PublicProvenance): an annotator need not
// know a surrogate's source to annotate it, and a release's reason may quote
// the values it accepts.
func SeesSources(ctx context.Context) bool {
	v := FromContext(ctx)
	return v == nil || v.SeesAllCorpora()
}

// SeesAllCorpora tells whether the viewer's queries are unfiltered by corpus.
func (v *Viewer) SeesAllCorpora() bool { return v.Role == Admin || v.Role == Curator }

type viewerKey struct{}

// NewContext returns ctx acting for v.
func NewContext(ctx context.Context, v *Viewer) context.Context {
	return context.WithValue(ctx, viewerKey{}, v)
}

// FromContext returns the viewer ctx acts for, or nil: the process itself
// (a job worker, a store test), which is not filtered, unless ctx is an
// HTTP request's (Anonymous). Every request and CLI command has a viewer:
// the server refuses requests without a token.
func FromContext(ctx context.Context) *Viewer {
	v, _ := ctx.Value(viewerKey{}).(*Viewer)
	return v
}

// requestKey marks a context as an HTTP request's: inside it, no viewer
// means nobody, never the process itself.
type requestKey struct{}

// MarkRequest returns ctx marked as an HTTP request's. The server marks every
// request before anything else sees it, so that a request that reaches the
// store without a viewer (a route that forgot to authenticate, a bypass) is
// refused by Check and the row filters instead of running as the server.
func MarkRequest(ctx context.Context) context.Context {
	return context.WithValue(ctx, requestKey{}, true)
}

// Anonymous tells whether ctx is an HTTP request's without a viewer.
func Anonymous(ctx context.Context) bool {
	marked, _ := ctx.Value(requestKey{}).(bool)
	return marked && FromContext(ctx) == nil
}

// errAnonymous refuses whatever an anonymous request asks for.
func errAnonymous() error {
	return apperr.New(apperr.Unauthorized, "no API token: send Authorization: Bearer TOKEN")
}

// System returns ctx acting for the process itself, unfiltered, even inside
// a request: for the few internal lookups the filters and the store
// themselves need (which accounts exist, the audit chain's tail).
func System(ctx context.Context) context.Context {
	return context.WithValue(context.WithValue(ctx, viewerKey{}, (*Viewer)(nil)), requestKey{}, false)
}

// SystemName is what records name the process itself by (jobs it queues,
// entries it audits); no account may take it. AnonymousName names an HTTP
// request without a viewer, so that nothing it could leave behind is taken
// for the process's.
const (
	SystemName    = "system"
	AnonymousName = "unauthenticated"
)

// Name is the viewer's name for records, or SystemName for the process.
func Name(ctx context.Context) string {
	if v := FromContext(ctx); v != nil {
		return v.Name
	}
	if Anonymous(ctx) {
		return AnonymousName
	}
	return SystemName
}

// TokenPrefix starts every API token, so that a leaked one is recognizable
// (secret scanners, logs).
const TokenPrefix = "dct_"

// NewToken returns a fresh API token: 256 random bits.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics instead)
	return TokenPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// HashToken is what the database keeps of a token. The token has 256 bits of
// entropy, so a plain SHA-256 is as safe as a slow hash and lets the lookup
// be an index hit.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// MaxTokenDays bounds a token's lifetime: a hundred years is "never" enough.
// Tokens made by anyone but an admin last at most MaxOwnTokenDays and always
// expire, so that a leaked token cannot outlive a year by minting itself
// successors.
const (
	MaxTokenDays    = 36500
	MaxOwnTokenDays = 365
)

// TokenLifetime is the lifetime of a token the viewer makes, valid for days
// (0: no expiry, for admins only). A token made with a token by anyone but an
// admin expires no later than the token it was made with.
func (v *Viewer) TokenLifetime(days int) (time.Duration, error) {
	limit := MaxTokenDays
	if v != nil && v.Role != Admin { // nil: the process itself
		limit = MaxOwnTokenDays
		if days == 0 {
			return 0, apperr.New(apperr.Invalid, "only admins make tokens that never expire: give 1 to %d days", limit)
		}
	}
	if days < 0 || days > limit {
		if limit == MaxOwnTokenDays {
			return 0, apperr.New(apperr.Invalid, "a token you make lasts 1 to %d days (not %d)", limit, days)
		}
		return 0, apperr.New(apperr.Invalid, "a token lasts 1 to %d days, or 0 for no expiry (not %d)", limit, days)
	}
	ttl := time.Duration(days) * 24 * time.Hour
	if v != nil && v.Role != Admin && v.TokenExpires != nil {
		ttl = min(ttl, time.Until(*v.TokenExpires))
	}
	return ttl, nil
}

// ShownPrefix is the part of a token kept in clear to recognize it.
func ShownPrefix(token string) string {
	if len(token) > len(TokenPrefix)+6 {
		return token[:len(TokenPrefix)+6]
	}
	return token
}
