package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"deidcorpus/store"
)

// resynthIDs lists the pairs of a surrogate corpus's note and patient ids
// with its source's: the surrogate names them by keyed pseudonyms, and only
// curators may read which record number each stands for (export
// --source-ids writes the surrogate under its source's ids).
var resynthIDs = &command{
	name:    "ids",
	summary: "list a surrogate corpus's note and patient ids beside its source's (curators; the source's ids are record numbers)",
	args:    "CORPUS [--json]",
	examples: []string{
		"deidcorpus resynth ids notes-r",
		"deidcorpus resynth ids notes-r --json > notes-r-ids.json",
	},
	setup: setupResynthIDs,
}

func setupResynthIDs(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	asJSON := fs.Bool("json", false, "print the pairs as JSON: [{kind, source, surrogate}]")
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return usageErr("resynth ids takes one surrogate corpus")
		}
		opArgs := map[string]any{"corpus": args[0]}
		st, ctx, err := openStore(ctx, e, *db, "cli.resynth.ids", opArgs)
		if err != nil {
			return err
		}
		defer st.Close()
		pairs, err := st.SurrogateIDs(ctx, args[0], store.IDFilter{})
		if err != nil {
			return err
		}
		if err := st.Audit(ctx, store.AuditRecord{Action: "read", Target: "cli.resynth.ids", IDs: []string{store.DescribeArgs(opArgs)}}); err != nil {
			return err
		}
		if *asJSON {
			if pairs == nil {
				pairs = []store.IDPair{}
			}
			return writeJSON(e.stdout, pairs)
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tSOURCE ID\tSURROGATE ID")
		for _, p := range pairs {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Kind, p.Source, p.Surrogate)
		}
		return tw.Flush()
	}
}
