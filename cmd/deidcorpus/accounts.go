package main

import (
	"context"
	"flag"
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
	register(&command{
		name:    "users",
		summary: "accounts and their roles: add, list, set, assign, unassign",
		subs: []*command{{
			name:    "add",
			summary: "make an account with a role (admin, curator, annotator or researcher)",
			args:    "NAME --role ROLE",
			examples: []string{
				"deidcorpus users add rita --role researcher",
				"deidcorpus users add ann --role annotator",
			},
			setup: setupUsers("add"),
		}, {
			name:     "list",
			summary:  "list the accounts, their roles, status and assigned corpora",
			args:     "[--json]",
			examples: []string{"deidcorpus users list", "deidcorpus users list --json"},
			setup:    setupUsers("list"),
		}, {
			name:    "set",
			summary: "change an account's role, or disable it (its tokens are refused at once) or enable it",
			args:    "NAME [--role ROLE] [--disable|--enable]",
			examples: []string{
				"deidcorpus users set rita --disable",
				"deidcorpus users set rita --enable --role curator",
			},
			setup: setupUsers("set"),
		}, {
			name:     "assign",
			summary:  "give an annotator a corpus to work on (its original text included)",
			args:     "NAME CORPUS",
			examples: []string{"deidcorpus users assign ann corpus-2024"},
			setup:    setupUsers("assign"),
		}, {
			name:     "unassign",
			summary:  "take a corpus away from an annotator",
			args:     "NAME CORPUS",
			examples: []string{"deidcorpus users unassign ann corpus-2024"},
			setup:    setupUsers("unassign"),
		}},
	})
	register(&command{
		name:    "tokens",
		summary: "API tokens: create (shown once), list, revoke",
		subs: []*command{{
			name:    "create",
			summary: "make an API token; it is printed alone on stdout, this once",
			args:    "[--user NAME] [--name LABEL] [--expires 90d]",
			examples: []string{
				"deidcorpus tokens create --user rita --expires 30d",
				"deidcorpus tokens create --user admin --name ci --expires 12h > ci.token",
			},
			setup: setupTokens("create"),
		}, {
			name:    "list",
			summary: "list tokens: prefix, expiry, last use, status",
			args:    "[--user NAME] [--json]",
			examples: []string{
				"deidcorpus tokens list",
				"deidcorpus tokens list --user rita",
			},
			setup: setupTokens("list"),
		}, {
			name:     "revoke",
			summary:  "revoke a token at once (see tokens list for ids)",
			args:     "ID",
			examples: []string{"deidcorpus tokens revoke 55834574850"},
			setup:    setupTokens("revoke"),
		}},
	})
}

// setupUsers is the users subcommands: each takes the flags it uses.
func setupUsers(sub string) func(e *env, fs *flag.FlagSet) action {
	return func(e *env, fs *flag.FlagSet) action {
		db := dbFlag(fs, e)
		var role *string
		asJSON := new(bool)
		if sub == "list" {
			asJSON = fs.Bool("json", false, "print the accounts as JSON")
		}
		if sub == "add" || sub == "set" {
			role = fs.String("role", "", "admin, curator, annotator or researcher")
		}
		var disable, enable *bool
		if sub == "set" {
			disable = fs.Bool("disable", false, "refuse the account's tokens from now on")
			enable = fs.Bool("enable", false, "accept the account's tokens again")
		}
		return func(ctx context.Context, pos []string) error {
			want := map[string][]string{"add": {"NAME"}, "list": nil, "set": {"NAME"}, "assign": {"NAME", "CORPUS"}, "unassign": {"NAME", "CORPUS"}}[sub]
			if len(pos) != len(want) {
				if len(want) == 0 {
					return usageErr("users %s takes no arguments", sub)
				}
				return usageErr("users %s takes %s (got %d arguments)", sub, strings.Join(want, " "), len(pos))
			}
			st, ctx, err := openStore(ctx, e, *db, "cli.users", map[string]any{"subcommand": sub, "user": arg(pos, 0), "corpus": arg(pos, 1)})
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
				u, err = st.CreateUser(ctx, arg(pos, 0), r)
				if err != nil {
					return err
				}
			case "list":
				us, err := st.Users(ctx)
				if err != nil {
					return err
				}
				if *asJSON {
					type row struct {
						Name            string    `json:"name"`
						Role            string    `json:"role"`
						Status          string    `json:"status"`
						AssignedCorpora []string  `json:"assignedCorpora"`
						Created         time.Time `json:"created"`
					}
					rows := make([]row, len(us))
					for i, u := range us {
						rows[i] = row{u.Name, string(u.Role), status(u), []string{}, u.CreatedAt}
						for _, c := range u.Edges.AssignedCorpora {
							rows[i].AssignedCorpora = append(rows[i].AssignedCorpora, c.Name)
						}
					}
					return writeJSON(e.stdout, rows)
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
					return usageErr("--disable and --enable contradict each other")
				case *disable, *enable:
					dp = disable
				}
				if rp == nil && dp == nil {
					return usageErr("users set needs --role, --disable or --enable")
				}
				if u, err = st.UpdateUser(ctx, arg(pos, 0), rp, dp); err != nil {
					return err
				}
			case "assign", "unassign":
				if u, err = st.AssignCorpus(ctx, arg(pos, 0), arg(pos, 1), sub == "assign"); err != nil {
					return err
				}
			}
			fmt.Fprintf(e.stdout, "%s: %s, %s; corpora: %s\n", u.Name, u.Role, status(u), corpusNames(u))
			return nil
		}
	}
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

// setupTokens is the tokens subcommands: each takes the flags it uses.
func setupTokens(sub string) func(e *env, fs *flag.FlagSet) action {
	return func(e *env, fs *flag.FlagSet) action {
		db := dbFlag(fs, e)
		user := new(string)
		switch sub {
		case "create":
			user = fs.String("user", "", "the account (default: your own; admins: any)")
		case "list":
			user = fs.String("user", "", "the account (default: your own; admins: any; the local operator, who has no account, sees every account's)")
		}
		var label, expires *string
		asJSON := new(bool)
		if sub == "list" {
			asJSON = fs.Bool("json", false, "print the tokens as JSON (never their secrets, which are not stored)")
		}
		if sub == "create" {
			label = fs.String("name", "", "what the token is for")
			expires = fs.String("expires", "90d", `lifetime, as days ("30d") or a duration ("12h"); "0" for none`)
		}
		return func(ctx context.Context, pos []string) error {
			if want := map[string]int{"create": 0, "list": 0, "revoke": 1}[sub]; len(pos) != want {
				if sub == "revoke" {
					return usageErr("tokens revoke takes one token id (see tokens list)")
				}
				return usageErr("tokens %s takes no arguments", sub)
			}
			if sub == "create" { // its form first, before any database is opened (the viewer's limit below)
				if _, err := parseLifetime(nil, *expires); err != nil {
					return err
				}
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
				return usageErr("the local operator has no account: name one with --user (see users list)")
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
				if *asJSON {
					type row struct {
						ID       int        `json:"id"`
						User     string     `json:"user"`
						Prefix   string     `json:"prefix"`
						Name     string     `json:"name"`
						Created  time.Time  `json:"created"`
						Expires  *time.Time `json:"expires"`
						LastUsed *time.Time `json:"lastUsed"`
						Status   string     `json:"status"`
					}
					rows := make([]row, len(ts))
					for i, t := range ts {
						rows[i] = row{t.ID, t.Edges.User.Name, t.Prefix, t.Name, t.CreatedAt, t.ExpiresAt, t.LastUsedAt,
							store.TokenStatus(t, time.Now())}
					}
					return writeJSON(e.stdout, rows)
				}
				tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tUSER\tPREFIX\tNAME\tCREATED\tEXPIRES\tLAST USED\tSTATUS")
				for _, t := range ts {
					fmt.Fprintf(tw, "%d\t%s\t%s…\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Edges.User.Name, t.Prefix, t.Name,
						t.CreatedAt.Format(time.DateOnly), dateOr(t.ExpiresAt, "never"), dateOr(t.LastUsedAt, "-"), store.TokenStatus(t, time.Now()))
				}
				return tw.Flush()
			}
			id, err := strconv.Atoi(pos[0])
			if err != nil {
				return usageErr("token id %q is not a number", pos[0])
			}
			t, err := st.RevokeToken(ctx, id)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "token %d (%s…) of %s revoked\n", t.ID, t.Prefix, t.Edges.User.Name)
			return nil
		}
	}
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
