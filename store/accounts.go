package store

import (
	"context"
	"strings"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/token"
	"deidcorpus/ent/user"
)

// CreateUser makes an account.
func (s *Store) CreateUser(ctx context.Context, name string, role auth.Role) (*ent.User, error) {
	if strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\n:") {
		return nil, apperr.New(apperr.Invalid, "account name %q must be non-empty, without spaces or ':'", name)
	}
	// "anonymous" is the actor of audit entries from before accounts.
	if name == auth.SystemName || name == auth.AnonymousName || name == "anonymous" {
		return nil, apperr.New(apperr.Invalid, "account name %q is reserved", name)
	}
	if _, err := auth.ParseRole(string(role)); err != nil {
		return nil, err
	}
	u, err := s.Client.User.Create().SetName(name).SetRole(user.Role(role)).Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, apperr.New(apperr.Conflict, "an account named %q exists", name)
	}
	return u, err
}

// UserByName returns an account or a not_found error.
func (s *Store) UserByName(ctx context.Context, name string) (*ent.User, error) {
	u, err := s.Client.User.Query().Where(user.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no account named %q", name)
	}
	return u, err
}

// Users lists the accounts by name, with their assigned corpora.
func (s *Store) Users(ctx context.Context) ([]*ent.User, error) {
	return s.Client.User.Query().WithAssignedCorpora().Order(ent.Asc(user.FieldName)).All(ctx)
}

// UpdateUser changes an account's role or disables (enables) it; nil leaves
// a field as it is. The last enabled admin cannot be demoted or disabled.
func (s *Store) UpdateUser(ctx context.Context, name string, role *auth.Role, disabled *bool) (*ent.User, error) {
	var out *ent.User
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		u, err := tx.User.Query().Where(user.Name(name)).Only(ctx)
		if ent.IsNotFound(err) {
			return apperr.New(apperr.NotFound, "no account named %q", name)
		}
		if err != nil {
			return err
		}
		up := u.Update()
		if role != nil {
			if _, err := auth.ParseRole(string(*role)); err != nil {
				return err
			}
			up.SetRole(user.Role(*role))
		}
		if disabled != nil {
			up.SetDisabled(*disabled)
		}
		if out, err = up.Save(ctx); err != nil {
			return err
		}
		if u.Role != user.RoleAdmin || u.Disabled {
			return nil
		}
		admins, err := tx.User.Query().Where(user.RoleEQ(user.RoleAdmin), user.Disabled(false)).Count(auth.System(ctx))
		if err != nil {
			return err
		}
		if admins == 0 {
			return apperr.New(apperr.Conflict, "%s is the last enabled admin: make another admin first", name)
		}
		return nil
	})
	return out, err
}

// AssignCorpus gives an account (an annotator) access to a corpus, or takes
// it away.
func (s *Store) AssignCorpus(ctx context.Context, userName, corpusName string, assign bool) (*ent.User, error) {
	u, err := s.UserByName(ctx, userName)
	if err != nil {
		return nil, err
	}
	if assign && u.Role != user.RoleAnnotator {
		return nil, apperr.New(apperr.Invalid, "%s is a %s: only annotators work on assigned corpora (change the role first)", u.Name, u.Role)
	}
	c, err := s.CorpusByName(ctx, corpusName)
	if err != nil {
		return nil, err
	}
	up := u.Update()
	if assign {
		up.AddAssignedCorporaIDs(c.ID)
	} else {
		up.RemoveAssignedCorporaIDs(c.ID)
	}
	if _, err := up.Save(ctx); err != nil {
		return nil, err
	}
	return s.Client.User.Query().Where(user.ID(u.ID)).WithAssignedCorpora(func(q *ent.CorpusQuery) {
		q.Order(ent.Asc(corpus.FieldName))
	}).Only(ctx)
}

// CreateToken makes an API token for an account, valid for ttl (0: no
// expiry). The token itself is returned once and never stored.
func (s *Store) CreateToken(ctx context.Context, userName, label string, ttl time.Duration) (string, *ent.Token, error) {
	if ttl < 0 {
		return "", nil, apperr.New(apperr.Invalid, "a token's lifetime must be positive (or 0 for none)")
	}
	u, err := s.UserByName(ctx, userName)
	if err != nil {
		return "", nil, err
	}
	secret := auth.NewToken()
	create := s.Client.Token.Create().SetUserID(u.ID).SetName(label).
		SetHash(auth.HashToken(secret)).SetPrefix(auth.ShownPrefix(secret))
	if ttl > 0 {
		create.SetExpiresAt(s.clock.Now().Add(ttl))
	}
	t, err := create.Save(ctx)
	if err != nil {
		return "", nil, err
	}
	t.Edges.User = u
	return secret, t, nil
}

// Tokens lists tokens, newest first: an account's, or every one when
// userName is empty.
func (s *Store) Tokens(ctx context.Context, userName string) ([]*ent.Token, error) {
	q := s.Client.Token.Query().WithUser().Order(ent.Desc(token.FieldID))
	if userName != "" {
		q.Where(token.HasUserWith(user.Name(userName)))
	}
	return q.All(ctx)
}

// RevokeToken makes a token unusable from now on.
func (s *Store) RevokeToken(ctx context.Context, id int) (*ent.Token, error) {
	t, err := s.Client.Token.Query().Where(token.ID(id)).WithUser().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no token %d", id)
	}
	if err != nil {
		return nil, err
	}
	if t.RevokedAt != nil {
		return t, nil
	}
	u := t.Edges.User
	if t, err = t.Update().SetRevokedAt(time.Now()).Save(ctx); err != nil {
		return nil, err
	}
	t.Edges.User = u
	return t, nil
}

// lastUsedGranularity bounds how often a token's last use is written: not on
// every request.
const lastUsedGranularity = time.Minute

// Authenticate returns the viewer an API token acts for; an unknown,
// revoked or expired token, or a disabled account, is an unauthorized error.
func (s *Store) Authenticate(ctx context.Context, secret string) (*auth.Viewer, error) {
	ctx = auth.System(ctx)
	if !strings.HasPrefix(secret, auth.TokenPrefix) {
		return nil, apperr.New(apperr.Unauthorized, "that is not a deidcorpus API token (they start with %s)", auth.TokenPrefix)
	}
	t, err := s.Client.Token.Query().Where(token.Hash(auth.HashToken(secret))).WithUser().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.Unauthorized, "unknown API token %s…", auth.ShownPrefix(secret))
	}
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	switch {
	case t.RevokedAt != nil:
		return nil, apperr.New(apperr.Unauthorized, "API token %s… was revoked on %s", t.Prefix, t.RevokedAt.UTC().Format(time.DateOnly))
	case t.ExpiresAt != nil && now.After(*t.ExpiresAt):
		return nil, apperr.New(apperr.Unauthorized, "API token %s… expired on %s", t.Prefix, t.ExpiresAt.UTC().Format(time.DateOnly))
	case t.Edges.User.Disabled:
		return nil, apperr.New(apperr.Unauthorized, "account %s is disabled", t.Edges.User.Name)
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) > lastUsedGranularity {
		if err := s.Client.Token.UpdateOneID(t.ID).SetLastUsedAt(now).Exec(ctx); err != nil {
			s.logger.Warn("record a token's last use", "token", t.Prefix, "err", err)
		}
	}
	u := t.Edges.User
	v := auth.NewViewer(u.ID, u.Name, auth.Role(u.Role))
	v.TokenID, v.TokenExpires = t.ID, t.ExpiresAt
	return v, nil
}

// TokenStatus is active, expired or revoked.
func TokenStatus(t *ent.Token, now time.Time) string {
	switch {
	case t.RevokedAt != nil:
		return "revoked"
	case t.ExpiresAt != nil && now.After(*t.ExpiresAt):
		return "expired"
	}
	return "active"
}

// LocalPrefix starts the name of the CLI's local operator ("local:alice"),
// who acts with the admin role; account names cannot hold ':'.
const LocalPrefix = "local:"

// JobViewer is who a job runs as: the account that queued it, as it is now
// (a job runs with what its creator may see when it runs, not when it was
// queued), the local operator, or nil for the process itself (created by
// "system" or by no one). A deleted or disabled account is unauthorized.
func (s *Store) JobViewer(ctx context.Context, createdBy string) (*auth.Viewer, error) {
	switch {
	case createdBy == "" || createdBy == auth.SystemName:
		return nil, nil
	case strings.HasPrefix(createdBy, LocalPrefix):
		return auth.NewViewer(0, createdBy, auth.Admin), nil
	}
	u, err := s.Client.User.Query().Where(user.Name(createdBy)).Only(auth.System(ctx))
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.Unauthorized, "the account %s that queued this job no longer exists", createdBy)
	}
	if err != nil {
		return nil, err
	}
	if u.Disabled {
		return nil, apperr.New(apperr.Unauthorized, "the account %s that queued this job is disabled", createdBy)
	}
	return auth.NewViewer(u.ID, u.Name, auth.Role(u.Role)), nil
}

// FirstAdminName is the account the first start makes.
const FirstAdminName = "admin"

// EnsureAdmin makes an admin account, FirstAdminName with one token, when the
// database has no enabled admin and no account of that name: on a first
// start, and on a database whose only accounts were added from the command
// line (a researcher's) before a server ran, which no one could otherwise
// manage from the dashboard. It returns the token, or "" when an enabled
// admin exists or the name is taken (HasAdmin tells which).
func (s *Store) EnsureAdmin(ctx context.Context) (string, error) {
	ctx = auth.System(ctx)
	if ok, err := s.HasAdmin(ctx); err != nil || ok {
		return "", err
	}
	if taken, err := s.Client.User.Query().Where(user.Name(FirstAdminName)).Exist(ctx); err != nil || taken {
		return "", err
	}
	if _, err := s.CreateUser(ctx, FirstAdminName, auth.Admin); err != nil {
		return "", err
	}
	secret, _, err := s.CreateToken(ctx, FirstAdminName, "made at first start", 0)
	return secret, err
}

// HasAdmin reports whether an enabled admin account exists: one that can
// manage accounts from the API and the dashboard.
func (s *Store) HasAdmin(ctx context.Context) (bool, error) {
	return s.Client.User.Query().Where(user.RoleEQ(user.RoleAdmin), user.Disabled(false)).Exist(auth.System(ctx))
}
