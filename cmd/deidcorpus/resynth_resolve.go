package main

import (
	"context"
	"fmt"

	"deidcorpus/apperr"
	"deidcorpus/auth"
)

// runResynthResolve lifts the quarantine of a surrogate corpus whose check
// failed: `deidcorpus resynth resolve CORPUS --reason TEXT`.
func runResynthResolve(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "resynth resolve", "CORPUS --reason TEXT")
	db := dbFlag(fs, e)
	reason := fs.String("reason", "", "why every finding of the corpus's failed checks may stand (required; kept with the corpus for curators)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *reason == "" {
		fs.Usage()
		return apperr.New(apperr.Invalid, "resynth resolve takes a corpus and --reason")
	}
	name := pos[0]
	// The audit log names the corpus; the reason, which may quote the values
	// it excuses, stays with the corpus for curators.
	st, ctx, err := openStore(ctx, e, *db, "cli.resynth.resolve", map[string]any{"corpus": name})
	if err != nil {
		return err
	}
	defer st.Close()
	c, err := st.ResolveCheckFindings(ctx, name, *reason, auth.Name(ctx))
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "resolved %v check findings of %q: it is no longer quarantined\n", c.CheckResolution["findings"], c.Name)
	return nil
}
