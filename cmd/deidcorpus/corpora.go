package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
)

func init() {
	register(&command{
		name:     "corpora",
		summary:  "list the corpora you may see: tag set, kind, how each was made, its check, documents and annotation sets",
		args:     "[--json]",
		examples: []string{"deidcorpus corpora", "deidcorpus corpora --json"},
		setup:    setupCorpora,
		subs: []*command{{
			name:     "delete",
			summary:  "delete a corpus and everything in it: its notes, annotation sets and statistics (curators; audited; releases frozen from it stay)",
			args:     "CORPUS",
			examples: []string{"deidcorpus corpora delete notes-old"},
			setup:    setupCorporaDelete,
		}},
	})
}

func setupCorporaDelete(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return usageErr("corpora delete takes one corpus")
		}
		// The same rule and audit record as GraphQL's deleteCorpus.
		st, ctx, err := openStore(ctx, e, *db, "Mutation.deleteCorpus", map[string]any{"name": args[0]})
		if err != nil {
			return err
		}
		defer st.Close()
		if err := st.DeleteCorpus(ctx, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "deleted corpus %q\n", args[0])
		return nil
	}
}

func setupCorpora(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	asJSON := fs.Bool("json", false, "print the list as JSON")
	return func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usageErr("corpora takes no arguments")
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.corpora", map[string]any{})
		if err != nil {
			return err
		}
		defer st.Close()
		cs, err := st.CorpusList(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(e.stdout, cs)
		}
		if len(cs) == 0 {
			fmt.Fprintln(e.stdout, "no corpora (deidcorpus import makes one)")
			return nil
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "CORPUS\tTAG SET\tKIND\tMADE BY\tCHECK\tDOCUMENTS\tSETS\tCREATED")
		for _, c := range cs {
			if c.UnfinishedImport {
				c.Source += " (unfinished)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", c.Name, c.TagSet, c.Kind, c.Source, c.Check, c.Documents,
				strings.Join(c.Sets, ","), c.Created.Format("2006-01-02 15:04"))
		}
		return tw.Flush()
	}
}
