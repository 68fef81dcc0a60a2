package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/jobs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/phi"
	"deidcorpus/store"
)

func init() {
	register(&command{
		name:    "import",
		summary: "import documents and their PHI spans into a corpus (all or nothing)",
		args:    "--corpus NAME [--tagset i2b2-2014|meddocan|open] [--format i2b2] [--split SPLIT] [--set gold] [--replace] PATH...",
		examples: []string{
			"deidcorpus import --corpus notes --tagset i2b2-2014 --split train notes/train/ notes-dev.zip",
			"deidcorpus import --corpus notes --set annotator2 --kind annotator --format brat second-pass/",
			"deidcorpus import --corpus meddocan --tagset meddocan --format brat --split train meddocan/train/brat/",
			"deidcorpus import --corpus notes-back notes-1.0.0.zip   # a release archive: its format, tag set and splits",
			"deidcorpus import --corpus ehr --format csv --columns id=note_id,patient=person_id,date=note_date,type=note_title,text=note_text notes.csv",
			"deidcorpus import --corpus cdm --format omop note.csv note_nlp.csv   # OMOP CDM NOTE (and NOTE_NLP spans)",
		},
		setup: setupImport,
	})
}

func setupImport(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "corpus to import into; created if needed (required)")
	tagset := fs.String("tagset", "", "tag set of a new corpus: i2b2-2014 or meddocan (labels checked, categories filled in), or open (any label); "+
		"default the one a release archive's release.json names, else open")
	format := fs.String("format", "", "input format ("+strings.Join(formats.Names(), ", ")+"); default the one a release "+
		"archive's release.json names (and its tag set, for a new corpus), else "+formats.Default)
	split := fs.String("split", "", "split of every imported document: train, dev, test or unassigned")
	set := fs.String("set", "gold", "annotation set the files' spans go to")
	kind := fs.String("kind", "", "kind of a new annotation set: gold, annotator, adjudicated, system, surrogate")
	corpusKind := fs.String("corpus-kind", "", "kind of a new corpus: original (default) or surrogate, which attests that the text "+
		"holds no real PHI (researchers can see it)")
	replace := fs.Bool("replace", false, "overwrite documents that exist instead of failing")
	async := fs.Bool("async", false, "store the files with a queued import job, print its id and return")
	columns := fs.String("columns", "", "for --format csv, the header's column of each field, FIELD=HEADER,... (fields: "+
		strings.Join(formats.CSVFields, ", ")+"); a field not named is read from the column of its own name")
	maxNote := maxNoteFlag(fs)
	maxImport := maxImportFlag(fs)
	return func(ctx context.Context, args []string) error {
		if *corpus == "" || len(args) == 0 {
			return usageErr("--corpus and at least one PATH are required")
		}
		opt := store.ImportOptions{Corpus: *corpus, TagSet: *tagset, Format: *format, Split: *split, Set: *set, Kind: *kind,
			CorpusKind: *corpusKind, Replace: *replace, MaxNote: int64(*maxNote), MaxImport: int64(*maxImport), Columns: *columns}
		// Checked before the database is opened: a refused import leaves
		// no new, empty database behind.
		if *format != "" {
			if _, err := formatFlag(*format); err != nil {
				return err
			}
		}
		if err := opt.Validate(); err != nil {
			return err
		}
		for _, p := range args {
			if _, err := os.Stat(p); err != nil {
				return fileError(err)
			}
		}
		// Read as the import goes, one file at a time: a corpus can be
		// larger than memory.
		files := formats.Paths(args...)
		st, ctx, err := openStore(ctx, e, *db, "cli.import", map[string]any{"corpus": *corpus, "set": *set, "format": *format, "paths": args})
		if err != nil {
			return err
		}
		defer st.Close()
		if *async {
			jm, err := openManager(ctx, st, nil, false, 0, 0)
			if err != nil {
				return err
			}
			j, err := jm.EnqueueImport(ctx, jobs.NewImportParams(opt), files, auth.Name(ctx))
			if err != nil {
				return fileError(err)
			}
			printQueued(e, j.ID, "import of "+strings.Join(args, " "))
			return nil
		}
		update, finish := progress(e.stderr, "importing")
		opt.Progress = update
		res, err := st.ImportFrom(ctx, opt, files)
		finish()
		if res != nil && res.Detected != nil {
			d := res.Detected
			fmt.Fprintf(e.stderr, "format %s, found from the files (%s of %s); give --format to read them otherwise\n", d.Format,
				counted(d.Files, "file"), strings.Join(d.Exts, " and "))
		}
		if errors.Is(err, formats.ErrNoDocuments) && apperr.CodeOf(err) == apperr.Invalid {
			return apperr.New(apperr.Invalid, "no %s documents in %s", cmp.Or(*format, formats.Default), strings.Join(args, ", "))
		}
		if err != nil {
			return err
		}
		verb := "into existing corpus"
		if res.CreatedCorpus {
			verb = "into new corpus"
		}
		fmt.Fprintf(e.stdout, "imported %s and %s (set %s) %s %q", counted(res.Documents, "document"), counted(res.Spans, "span"), *set, verb, res.Corpus.Name)
		if res.FromRelease != "" {
			var took []string
			if *format == "" {
				took = append(took, "format "+res.Format)
			}
			if *tagset == "" && res.CreatedCorpus && res.Corpus.Tagset != phi.Open {
				took = append(took, "tag set "+res.Corpus.Tagset)
			}
			if len(took) > 0 {
				fmt.Fprintf(e.stdout, " (%s from %s)", strings.Join(took, " and "), res.FromRelease)
			}
		}
		if res.Replaced > 0 {
			fmt.Fprintf(e.stdout, "; %d replaced", res.Replaced)
		}
		if res.Moved > 0 {
			fmt.Fprintf(e.stdout, "; %d moved to the split or note type given", res.Moved)
		}
		if res.WithoutSpans > 0 {
			fmt.Fprintf(e.stdout, "; %s without spans", counted(res.WithoutSpans, "document"))
		}
		if res.Skipped > 0 {
			more := ""
			if res.Skipped > len(res.SkippedNames) {
				more = ", ..."
			}
			fmt.Fprintf(e.stdout, "; %s skipped, which format %s does not read (%s%s)", counted(res.Skipped, "file"), res.Format,
				strings.Join(res.SkippedNames, ", "), more)
		}
		fmt.Fprintln(e.stdout)
		if len(res.Ignored) > 0 {
			fmt.Fprintln(e.stderr, "warning: "+notKept(res.Ignored))
		}
		if res.CreatedCorpus && *tagset == "" && res.Corpus.Tagset == phi.Open {
			// The import succeeded: advice that cannot be computed is no error.
			if labels, err := st.Labels(ctx, res.Corpus, *set); err == nil {
				if res.Format == "i2b2" {
					warnOddLabels(e, res.Corpus, labels)
				}
				hintTagSet(e, res.Corpus, labels)
			}
		}
		return nil
	}
}

// notKept says what an import's files held that it could not keep.
func notKept(ignored map[string]int) string {
	var parts []string
	for _, kind := range slices.Sorted(maps.Keys(ignored)) {
		parts = append(parts, counted(ignored[kind], kind))
	}
	return fmt.Sprintf("not kept: %s (deidcorpus keeps text-bound spans and their notes only; the files still hold them)",
		strings.Join(parts, ", "))
}

// hintTagSet says, after a new corpus of the open tag set (--tagset not
// given) took labels that are all of a tag set a corpus may declare but
// under other categories (BRAT gives none: the category is the type),
// which tag set would have given them their categories.
func hintTagSet(e *env, c *ent.Corpus, labels [][2]string) {
	for _, name := range phi.Names() {
		ts, _ := phi.Lookup(name)
		if ts == nil {
			continue
		}
		all, differ := true, ""
		for _, l := range labels {
			cat, ok := ts.CategoryOf(l[1])
			all = all && ok
			if ok && cat != l[0] && differ == "" {
				differ = fmt.Sprintf("%s under %s, not %s", l[1], l[0], cat)
			}
		}
		if all && differ != "" {
			fmt.Fprintf(e.stderr, "note: corpus %q holds %s's types, but under the open tag set their categories are as read (%s). "+
				"Imported with --tagset %s (delete the corpus first) they get %s's, which i2b2 XML exports and the scorers' per-category tables need.\n",
				c.Name, name, differ, name, name)
			return
		}
	}
}

// warnOddLabels warns, after i2b2 XML went into a new corpus of the open tag
// set (--tagset not given), about labels that are not i2b2 2014's beside
// others that are: most likely misspelt types, which the open tag set
// accepts and which resynthesis's policy has no rule for. A corpus of
// another tag set altogether (no i2b2 2014 label) is taken as meant.
func warnOddLabels(e *env, c *ent.Corpus, labels [][2]string) {
	ts, _ := phi.Lookup(phi.I2B22014)
	var odd [][2]string
	known := 0
	for _, l := range labels {
		if _, _, err := phi.Normalize(ts, l[0], l[1]); err != nil {
			odd = append(odd, l)
		} else {
			known++
		}
	}
	if len(odd) == 0 || known == 0 || ofOneTagSet(odd) {
		return
	}
	names := make([]string, len(odd))
	for i, l := range odd {
		names[i] = pipeline.Span{Category: l[0], Type: l[1]}.Label()
	}
	slices.Sort(names)
	fmt.Fprintf(e.stderr, "warning: corpus %q holds %s that i2b2 2014 does not know (%s) beside %d it knows. The corpus has the open tag set, "+
		"which checks no label; misspelt types would be kept as they are, and resynthesis's policy has no rule for them. "+
		"Fix them and import again with --tagset i2b2-2014 (delete the corpus first), or map them with derive.\n",
		c.Name, counted(len(odd), "label"), strings.Join(names, ", "), known)
}

// ofOneTagSet reports whether a built-in mapping from another tag set to
// i2b2 2014 names every one of the labels: they are that tag set's
// (MEDDOCAN's, CCHMC's...), not misspelt.
func ofOneTagSet(labels [][2]string) bool {
	for _, name := range phi.BuiltinMappings() {
		m, err := phi.LoadMapping(name)
		if err != nil || m.To != phi.I2B22014 || m.From == phi.I2B22014 {
			continue
		}
		all := true
		for _, l := range labels {
			all = all && m.Names(l[0], l[1])
		}
		if all {
			return true
		}
	}
	return false
}
