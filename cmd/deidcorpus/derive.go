package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/phi"
)

func init() {
	register(&command{
		name:    "derive",
		summary: "make a corpus with labels rewritten by a tag-set mapping",
		args:    "--corpus A --mapping NAME|FILE --out B [--set gold] [--async]",
		examples: []string{
			"deidcorpus derive --corpus meddocan-native --mapping meddocan-i2b2 --out meddocan",
			"deidcorpus derive --corpus notes --mapping my-rules.map --out notes-hipaa",
			"deidcorpus derive --corpus big --mapping i2b2-hipaa --out big-hipaa --async   # a job that a serve or worker process runs",
		},
		setup: setupDerive,
	})
}

func setupDerive(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "source corpus (required)")
	mapping := fs.String("mapping", "", fmt.Sprintf("a built-in mapping (%s) or a mapping file: lines SOURCE TARGET (\"FECHAS DATE\", \"LOCATION/* LOCATION\", \"SEXO -\" drops) "+
		"after @from, @to and @default lines; docs/formats.md (required)", strings.Join(phi.BuiltinMappings(), ", ")))
	out := fs.String("out", "", "corpus to create (required)")
	set := fs.String("set", "gold", "annotation set to map")
	async := fs.Bool("async", false, "queue a derive job, print its id and return")
	return func(ctx context.Context, args []string) error {
		if *corpus == "" || *mapping == "" || *out == "" {
			return usageErr("--corpus, --mapping and --out are required")
		}
		name, text, label, err := phi.ReadMappingArg(*mapping)
		if err != nil {
			return apperr.Wrap(apperr.Invalid, err)
		}
		p := jobs.DeriveParams{Corpus: *corpus, Set: *set, Out: *out, Mapping: name, MappingText: text, MappingLabel: label}
		m, err := p.ResolveMapping()
		if err != nil {
			return apperr.Wrap(apperr.Invalid, err)
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.derive", map[string]any{"corpus": *corpus, "out": *out, "mapping": *mapping})
		if err != nil {
			return err
		}
		defer st.Close()
		if *async {
			_, err = runJob(ctx, e, st, p, true)
			return flagNamed(err, deriveFlags)
		}
		update, finish := progress(e.stderr, "deriving")
		opt := p.Options(m)
		opt.Progress = update
		res, err := st.Derive(ctx, opt)
		finish()
		if err != nil {
			return flagNamed(err, deriveFlags)
		}
		dropped := ""
		if res.Dropped > 0 {
			dropped = fmt.Sprintf(" (%d dropped by the mapping)", res.Dropped)
		}
		fmt.Fprintf(e.stdout, "derived %q from %q with mapping %s: %s, %s%s\n", *out, *corpus, m, counted(res.Documents, "document"),
			counted(res.Spans, "span"), dropped)
		return nil
	}
}

// deriveFlags are the flags of the parameters a derivation's errors begin with.
var deriveFlags = map[string]string{"corpus": "--corpus", "set": "--set", "out": "--out"}
