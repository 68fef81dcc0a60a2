package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"deidcorpus/apperr"
	"deidcorpus/internal/keys"
	"deidcorpus/store"
)

func init() {
	register(&command{
		name:    "keys",
		summary: "the keys encrypting the surrogate mappings and check reports: init, status, rotate",
		subs: []*command{{
			name:    "init",
			summary: "make a key file with one new key (mode 0600); back it up, but never with the database's backups",
			args:    "[--db DSN] [--key-file PATH]",
			examples: []string{"deidcorpus keys init                # deidcorpus.db.key, beside the default database",
				"deidcorpus keys init --key-file /etc/deidcorpus/mappings.key"},
			setup: setupKeys("init"),
		}, {
			name:    "status",
			summary: "list the key ring's keys and how many mappings each encrypts",
			args:    "[--db DSN] [--key-file PATH]",
			examples: []string{
				"deidcorpus keys status",
				"deidcorpus keys status --db postgres://deid@db/deid --key-file /etc/deidcorpus/mappings.key",
			},
			setup: setupKeys("status"),
		}, {
			name:    "rotate",
			summary: "add a new key and re-encrypt every mapping and check report with it, in one transaction",
			args:    "[--db DSN] [--key-file PATH]",
			examples: []string{
				"deidcorpus keys rotate",
				"DEIDCORPUS_KEY=... deidcorpus keys rotate --key-file new.key",
			},
			setup: setupKeys("rotate"),
		}},
	})
}

func setupKeys(sub string) func(e *env, fs *flag.FlagSet) action {
	return func(e *env, fs *flag.FlagSet) action {
		var db *string
		if sub == "init" {
			db = serviceDBFlag(fs, e)
		} else {
			db = dbFlag(fs, e)
		}
		return func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usageErr("keys %s takes no arguments", sub)
			}
			switch sub {
			case "init":
				path := cmp.Or(keyConfig(e).File, store.DefaultKeyFile(*db))
				if path == "" {
					return usageErr("keys init needs --key-file PATH (or %s): a PostgreSQL database has no default key file", keys.FileEnv)
				}
				r, err := keys.Create(path)
				if errors.Is(err, os.ErrExist) {
					return apperr.New(apperr.Conflict, "key file %s exists already", path)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "created key file %s (key %s); back it up, but never with the database's backups: whoever holds both reads the surrogate mappings\n", path, r.Current())
				return nil
			case "status":
				st, ctx, err := openStore(ctx, e, *db, "cli.keys", map[string]any{"subcommand": sub})
				if err != nil {
					return err
				}
				defer st.Close()
				return keyStatus(ctx, e, st)
			}
			return rotateKeys(ctx, e, *db)
		}
	}
}

// keyStatus lists the ring's keys and how many mappings each encrypts, and
// the key ids the database uses that the ring lacks.
func keyStatus(ctx context.Context, e *env, st *store.Store) error {
	r, err := st.KeyRing()
	if err != nil {
		return err
	}
	use, err := st.KeyUsage(ctx)
	if err != nil {
		return err
	}
	count := map[string]int{}
	for _, u := range use {
		count[u.KeyID] = u.Mappings
	}
	fmt.Fprintf(e.stdout, "key ring: %s\n", r.Source)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tCREATED\tMAPPINGS\t")
	for _, k := range r.Keys() {
		created, note := "-", ""
		if !k.Created.IsZero() {
			created = k.Created.Format("2006-01-02 15:04:05Z")
		}
		if k.ID == r.Current() {
			note = "encrypts new mappings"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", k.ID, created, count[k.ID], note)
	}
	var problems []string
	for _, u := range use {
		if u.Problem != "" {
			fmt.Fprintf(tw, "%s\t-\t%d\tCANNOT BE DECRYPTED: %s\n", u.KeyID, u.Mappings, u.Problem)
			problems = append(problems, u.KeyID+" ("+u.Problem+")")
		}
	}
	tw.Flush()
	if len(problems) > 0 {
		return apperr.New(apperr.Invalid, "the key ring cannot open the database's mappings under %s", strings.Join(problems, "; "))
	}
	return nil
}

// rotateKeys adds a new key to the key file, then re-encrypts every mapping
// with it in one transaction. The file is written first: should the
// re-encryption fail, the old keys are all still there and it can be rerun.
// A key from DEIDCORPUS_KEY is carried over into a new key file named by
// --key-file (then use DEIDCORPUS_KEY_FILE instead of DEIDCORPUS_KEY).
func rotateKeys(ctx context.Context, e *env, dsn string) error {
	cfg := keyConfig(e)
	envKey := e.getenv(keys.KeyEnv)
	var ring *keys.Ring
	path := cfg.File
	if path != "" && envKey != "" {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			r, err := keys.FromBase64(envKey)
			if err != nil {
				return apperr.Wrap(apperr.Invalid, err)
			}
			ring = r
		}
	} else if cfg.Key != "" {
		return apperr.New(apperr.Invalid, "the key in %s cannot be rotated in place: name a new key file with --key-file PATH, "+
			"which gets that key and a new one; then set %s=PATH instead of %s", keys.KeyEnv, keys.FileEnv, keys.KeyEnv)
	}
	opts := []store.Option{store.WithKeys(cfg), store.WithLogger(slog.New(noteHandler{w: e.stderr}))}
	if ring != nil {
		opts = []store.Option{store.WithKeyRing(ring)}
	}
	st, err := store.Open(ctx, dsn, opts...)
	if err != nil {
		return err
	}
	defer st.Close()
	if ctx, err = actAs(ctx, e, st, "cli.keys", map[string]any{"subcommand": "rotate"}); err != nil {
		return err
	}
	if ring == nil {
		if ring, err = st.KeyRing(); err != nil {
			return err
		}
		path = ring.Path
	}
	if path == "" {
		return apperr.New(apperr.Invalid, "this database has no key file to rotate")
	}
	old := ring.Current()
	id, err := ring.Rotate()
	if err != nil {
		return err
	}
	if err := ring.Save(path); err != nil {
		return err
	}
	n, err := st.Reencrypt(ctx, ring)
	if err != nil {
		return fmt.Errorf("key %s is in %s, but re-encrypting the mappings failed (rerun 'deidcorpus keys rotate' or keep using the older keys): %w", id, path, err)
	}
	fmt.Fprintf(e.stdout, "added key %s to %s (was %s); re-encrypted %s and %s, wrapped again the data keys of %s\n", id, path, old,
		counted(n.Mappings, "mapping"), counted(n.Artifacts, "check report"), counted(n.Corpora, "original corpus"))
	return keyStatus(ctx, e, st)
}

// announceKeys loads the key ring when a server or worker starts, so that a
// new SQLite key file is made (and logged) at once, a broken key file stops
// the start, and a database without a key says so before a job needs it.
func announceKeys(st *store.Store, logger *slog.Logger) error {
	r, err := st.KeyRing()
	if errors.Is(err, keys.ErrNoKey) {
		logger.Warn("no key for the surrogate mappings: resynthesis and mapping queries will fail until one is set", "error", err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	logger.Info("surrogate mappings key ring", "source", r.Source, "current", r.Current())
	return nil
}
