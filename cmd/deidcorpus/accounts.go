package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/store"
)

func init() {
	register("users", "accounts and their roles: add, list, set, assign, unassign", runUsers)
	register("tokens", "API tokens: create (shown once), list, revoke", runTokens)
}

func runUsers(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, "usage: deidcorpus users add NAME --role ROLE | list | set NAME [--role ROLE] [--disable|--enable] | assign NAME CORPUS | unassign NAME CORPUS")
		return apperr.New(apperr.Invalid, "a users subcommand is required")
	}
	sub, args := args[0], args[1:]
	fs := newFlags(e, "users "+sub, "see `deidcorpus users`")
	db := dbFlag(fs, e)
	role := fs.String("role", "", "add, set: admin, curator, annotator or researcher")
	disable := fs.Bool("disable", false, "set: refuse the account's tokens from now on")
	enable := fs.Bool("enable", false, "set: accept the account's tokens again")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	want := map[string]int{"add": 1, "list": 0, "set": 1, "assign": 2, "unassign": 2}
	n, ok := want[sub]
	if !ok {
		return apperr.New(apperr.Invalid, "unknown users subcommand %q (add, list, set, assign, unassign)", sub)
	}
	if len(pos) != n {
		return apperr.New(apperr.Invalid, "users %s takes %d argument(s), not %d", sub, n, len(pos))
	}
	arg := func(i int) string {
		if i < len(pos) {
			return pos[i]
		}
		return ""
	}
	st, ctx, err := openStore(ctx, e, *db, "cli.users", map[string]any{"subcommand": sub, "user": arg(0), "corpus": arg(1)})
	if err != nil {
		return err
	}
	defer st.Close()
	var u *ent.User
	switch sub {
	case "add":
		r, err := auth.ParseRole(*role)
		if err != nil {
			return err
		}
		u, err = st.CreateUser(ctx, arg(0), r)
		if err != nil {
			return err
		}
	case "list":
		us, err := st.Users(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tROLE\tSTATUS\tASSIGNED CORPORA\tCREATED")
		for _, u := range us {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Name, u.Role, status(u), corpusNames(u), u.CreatedAt.Format(time.DateTime))
		}
		return tw.Flush()
	case "set":
		var rp *auth.Role
		if *role != "" {
			r, err := auth.ParseRole(*role)
			if err != nil {
				return err
			}
			rp = &r
		}
		var dp *bool
		switch {
		case *disable && *enable:
			return apperr.New(apperr.Invalid, "--disable and --enable contradict each other")
		case *disable, *enable:
			dp = disable
		}
		if rp == nil && dp == nil {
			return apperr.New(apperr.Invalid, "users set needs --role, --disable or --enable")
		}
		if u, err = st.UpdateUser(ctx, arg(0), rp, dp); err != nil {
			return err
		}
	case "assign", "unassign":
		if u, err = st.AssignCorpus(ctx, arg(0), arg(1), sub == "assign"); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "%s: %s, %s; corpora: %s\n", u.Name, u.Role, status(u), corpusNames(u))
	return nil
}

func status(u *ent.User) string {
	if u.Disabled {
		return "disabled"
	}
	return "enabled"
}

func corpusNames(u *ent.User) string {
	names := make([]string, len(u.Edges.AssignedCorpora))
	for i, c := range u.Edges.AssignedCorpora {
		names[i] = c.Name
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ",")
}

func runTokens(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, "usage: deidcorpus tokens create [--user NAME] [--name LABEL] [--expires 90d] | list [--user NAME] | revoke ID")
		return apperr.New(apperr.Invalid, "a tokens subcommand is required")
	}
	sub, args := args[0], args[1:]
	fs := newFlags(e, "tokens "+sub, "see `deidcorpus tokens`")
	db := dbFlag(fs, e)
	user := fs.String("user", "", "create, list: the account (default: your own; admins: any)")
	label := fs.String("name", "", "create: what the token is for")
	expires := fs.String("expires", "90d", `create: lifetime, as days ("30d") or a duration ("12h"); "0" for none`)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	st, ctx, err := openStore(ctx, e, *db, "cli.tokens", map[string]any{"subcommand": sub, "user": *user})
	if err != nil {
		return err
	}
	defer st.Close()
	owner := *user
	if v := auth.FromContext(ctx); owner == "" && v.UserID != 0 {
		owner = v.Name
	} else if owner == "" && sub == "create" {
		return apperr.New(apperr.Invalid, "the local operator has no account: name one with --user (see users list)")
	}
	switch sub {
	case "create":
		ttl, err := parseLifetime(auth.FromContext(ctx), *expires)
		if err != nil {
			return err
		}
		secret, t, err := st.CreateToken(ctx, owner, *label, ttl)
		if err != nil {
			return err
		}
		// The token alone on stdout, so that it can be captured; the rest
		// on stderr.
		fmt.Fprintln(e.stdout, secret)
		fmt.Fprintf(e.stderr, "token %d for %s (%s), %s; it is shown this once: keep it secret\n",
			t.ID, owner, t.Edges.User.Role, expiry(t))
		return nil
	case "list":
		if *user == "" && auth.FromContext(ctx).Role == auth.Admin {
			owner = ""
		}
		ts, err := st.Tokens(ctx, owner)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tUSER\tPREFIX\tNAME\tCREATED\tEXPIRES\tLAST USED\tSTATUS")
		for _, t := range ts {
			fmt.Fprintf(tw, "%d\t%s\t%s…\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Edges.User.Name, t.Prefix, t.Name,
				t.CreatedAt.Format(time.DateOnly), dateOr(t.ExpiresAt, "never"), dateOr(t.LastUsedAt, "-"), store.TokenStatus(t, time.Now()))
		}
		return tw.Flush()
	case "revoke":
		if len(pos) != 1 {
			return apperr.New(apperr.Invalid, "tokens revoke takes one token id (see tokens list)")
		}
		id, err := strconv.Atoi(pos[0])
		if err != nil {
			return apperr.New(apperr.Invalid, "token id %q is not a number", pos[0])
		}
		t, err := st.RevokeToken(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "token %d (%s…) of %s revoked\n", t.ID, t.Prefix, t.Edges.User.Name)
		return nil
	}
	return apperr.New(apperr.Invalid, "unknown tokens subcommand %q (create, list, revoke)", sub)
}

// parseLifetime reads "90d", "12h", "30m" or "0", within what the viewer
// may give a token.
func parseLifetime(v *auth.Viewer, s string) (time.Duration, error) {
	if s == "0" {
		return v.TokenLifetime(0)
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return 0, apperr.New(apperr.Invalid, "--expires %q: days must be a positive whole number", s)
		}
		return v.TokenLifetime(n)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, apperr.New(apperr.Invalid, `--expires %q: give days ("30d"), a duration ("12h") or "0"`, s)
	}
	if _, err := v.TokenLifetime(int((d + 24*time.Hour - 1) / (24 * time.Hour))); err != nil {
		return 0, err
	}
	return d, nil
}

func expiry(t *ent.Token) string {
	if t.ExpiresAt == nil {
		return "never expires"
	}
	return "expires " + t.ExpiresAt.Format(time.DateTime)
}

func dateOr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.Format(time.DateOnly)
}
