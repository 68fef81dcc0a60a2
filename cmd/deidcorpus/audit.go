package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"deidcorpus/store"
)

func init() {
	register(&command{
		name:    "audit",
		summary: "the append-only audit log, chained by MACs under a key outside the database: list it, verify it (admins)",
		subs: []*command{{
			name:    "list",
			summary: "the newest entries: who read or changed what, when",
			args:    "[--limit 50] [--json]",
			examples: []string{
				"deidcorpus audit list",
				"deidcorpus audit list --limit 500 --json   # every entry whole: ids, detail, hashes",
			},
			setup: setupAudit("list"),
		}, {
			name: "verify",
			summary: "recompute the chain's hashes and MACs and compare its end with the head file beside the key; " +
				"names the first entry at fault and how: edited, recomputed without the key, removed, truncated, replaced",
			examples: []string{"deidcorpus audit verify",
				"DEIDCORPUS_AUDIT_HEAD=/etc/deidcorpus/audit-head deidcorpus audit verify --db postgres://deid@db/deid"},
			setup: setupAudit("verify"),
		}, {
			name: "anchor",
			summary: "write the head file anew from the database's last entry, after a lost head file, on a new machine " +
				"sharing a PostgreSQL database, or once a reported truncation is understood (run verify first)",
			examples: []string{"deidcorpus audit anchor"},
			setup:    setupAudit("anchor"),
		}},
	})
}

func setupAudit(sub string) func(e *env, fs *flag.FlagSet) action {
	return func(e *env, fs *flag.FlagSet) action {
		db := dbFlag(fs, e)
		limit, asJSON := new(int), new(bool)
		if sub == "list" {
			limit = fs.Int("limit", 50, "the newest N entries")
			asJSON = fs.Bool("json", false, "print the entries whole, as JSON (the table clips ids and detail)")
		}
		return func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usageErr("audit %s takes no arguments", sub)
			}
			if sub == "verify" {
				return verifyAudit(ctx, e, *db)
			}
			st, ctx, err := openStore(ctx, e, *db, "cli.audit", map[string]any{"subcommand": sub})
			if err != nil {
				return err
			}
			defer st.Close()
			switch sub {
			case "anchor":
				return anchorAudit(ctx, e, st)
			}
			entries, err := st.AuditEntries(ctx, *limit)
			if err != nil {
				return err
			}
			if *asJSON {
				type entry struct {
					Seq      int64     `json:"seq"`
					At       time.Time `json:"at"`
					Actor    string    `json:"actor"`
					Action   string    `json:"action"`
					Target   string    `json:"target"`
					IDs      []string  `json:"ids"`
					Detail   string    `json:"detail,omitempty"`
					PrevHash string    `json:"prevHash"`
					Hash     string    `json:"hash"`
				}
				out := make([]entry, len(entries))
				for i, a := range entries {
					out[i] = entry{Seq: a.Seq, At: a.At, Actor: a.Actor, Action: a.Action, Target: a.Target, IDs: a.Ids,
						Detail: a.Detail, PrevHash: a.PrevHash, Hash: a.Hash}
				}
				return writeJSON(e.stdout, out)
			}
			tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "SEQ\tAT\tACTOR\tACTION\tTARGET\tIDS\tDETAIL")
			for _, a := range entries {
				row := fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%s", a.Seq, a.At.Format(time.DateTime), a.Actor, a.Action, a.Target,
					clip(strings.Join(a.Ids, ","), 60))
				if a.Detail != "" { // a last cell is not padded: no trailing blanks
					row += "\t" + clip(a.Detail, 100)
				}
				fmt.Fprintln(tw, row)
			}
			return tw.Flush()
		}
	}
}

// verifyAudit verifies the chain and its end, prints the last entry's hash
// and what protects which entries; a break is the command's error. It reads
// the chain before it writes its own entry: appended first, that entry would
// start a new chain in an emptied log, and stand in a cut chain's place.
func verifyAudit(ctx context.Context, e *env, dsn string) error {
	st, ctx, audited, err := openStoreAuditLater(ctx, e, dsn, "cli.audit", map[string]any{"subcommand": "verify"})
	if err != nil {
		return err
	}
	defer st.Close()
	rep, err := st.CheckAudit(ctx)
	if aerr := audited(); err == nil {
		err = aerr
	}
	if err != nil {
		return err
	}
	if rep.Entries == 0 {
		fmt.Fprintln(e.stdout, "audit log: empty")
		return nil
	}
	fmt.Fprintf(e.stdout, "audit log OK: %d entries, chain intact; last entry %d, hash %s\n", rep.Entries, rep.LastSeq, rep.LastHash)
	for _, n := range rep.Notes() {
		fmt.Fprintln(e.stdout, "  "+n)
	}
	return nil
}

// anchorAudit writes the head file from the chain's end.
func anchorAudit(ctx context.Context, e *env, st *store.Store) error {
	old, head, path, err := st.AnchorAudit(ctx)
	if err != nil {
		return err
	}
	was := "it had no head for this database"
	if old != nil {
		was = fmt.Sprintf("it recorded %d entries, written %s", old.Count, old.Written.Format(time.DateTime))
	}
	fmt.Fprintf(e.stdout, "audit head file %s: anchored at entry %d (%s)\n", path, head.Count, was)
	return nil
}

// clip shortens a column's text to n bytes, marking the cut, on a rune
// boundary; tabs and line breaks become spaces, which keep the table.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
