package main

import (
	"context"
	"flag"
	"fmt"

	"deidcorpus/auth"
)

// resynthResolve lifts the quarantine of a surrogate corpus whose check
// failed: a curator has reviewed the findings and says why they may stand.
var resynthResolve = &command{
	name:    "resolve",
	summary: "lift the quarantine of a surrogate corpus whose check failed, once its findings are reviewed (curators; the reason stays with the corpus)",
	args:    "CORPUS --reason TEXT",
	examples: []string{
		`deidcorpus resynth resolve notes-r --reason "reviewed: the kept value is an eponym, not PHI"`,
		`deidcorpus resynth resolve notes-r --reason "values checked by hand" --db postgres://deid@db/deid`,
	},
	setup: setupResynthResolve,
}

func setupResynthResolve(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	reason := fs.String("reason", "", "why every finding of the corpus's failed checks may stand (required; kept with the corpus for curators)")
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 || *reason == "" {
			return usageErr("resynth resolve takes a corpus and --reason")
		}
		name := args[0]
		// The audit log names the corpus; the reason, which may quote the
		// values it excuses, stays with the corpus for curators.
		st, ctx, err := openStore(ctx, e, *db, "cli.resynth.resolve", map[string]any{"corpus": name})
		if err != nil {
			return err
		}
		defer st.Close()
		c, err := st.ResolveCheckFindings(ctx, name, *reason, auth.Name(ctx))
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "resolved %s of %q: it is no longer quarantined\n", counted(c.CheckResolution["findings"], "check finding"), c.Name)
		return nil
	}
}
