package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	entrelease "deidcorpus/ent/release"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/release"
	"deidcorpus/store"
)

func init() {
	register("release", "create, list, diff, export and verify versioned corpus releases", runRelease)
}

func runRelease(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, "usage: deidcorpus release create|list|diff|export|verify [flags]")
		return apperr.New(apperr.Invalid, "a release subcommand is required")
	}
	sub, args := args[0], args[1:]
	fs := newFlags(e, "release "+sub, "see README: releases")
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "create: the corpus to freeze")
	name := fs.String("name", "", "create: the release's name")
	ver := fs.String("version", "", "create: its semantic version (MAJOR.MINOR.PATCH)")
	sets := listFlag{}
	fs.Var(&sets, "set", "create: annotation sets to include (default gold)")
	parent := fs.String("parent", "", "create: name@version of the release this one follows")
	share := fs.Bool("share", false, "create: for outside sharing (surrogate text that passed its check only)")
	description := fs.String("description", "", "create: a description for the datasheet")
	ref := fs.String("release", "", "export: name@version")
	format := fs.String("format", "i2b2", "export: the documents' format")
	out := fs.String("out", "", "export: the archive to write (.zip)")
	asJSON := fs.Bool("json", false, "diff: print the full diff as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if sub == "verify" {
		return verifyArchive(e, fs.Args())
	}
	op, opArgs := "cli.release.read", map[string]any{"ref": *ref}
	switch sub {
	case "create":
		op, opArgs = "cli.release.create", map[string]any{"corpus": *corpus, "name": *name, "version": *ver}
	case "list":
		op = "cli.release.list"
	case "diff":
		opArgs = map[string]any{"ref": fs.Arg(0), "other": fs.Arg(1)}
	}
	st, ctx, err := openStore(ctx, e, *db, op, opArgs)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "create":
		r, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: *corpus, Name: *name, Version: *ver, Sets: sets,
			Parent: *parent, Share: *share, Description: *description, By: auth.Name(ctx)})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "released %s@%s: %d documents, %d spans, root %s\n", r.Name, r.Version, r.Documents, r.Spans, r.RootHash)
		return nil
	case "list":
		rs, err := st.Client.Release.Query().Order(ent.Asc(entrelease.FieldName), ent.Asc(entrelease.FieldCreatedAt)).All(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "RELEASE\tCORPUS\tSETS\tDOCUMENTS\tSPANS\tSHARE\tROOT")
		for _, r := range rs {
			fmt.Fprintf(tw, "%s@%s\t%s\t%s\t%d\t%d\t%v\t%s\n", r.Name, r.Version, r.Corpus, strings.Join(r.Sets, ","),
				r.Documents, r.Spans, r.Share, r.RootHash[:16])
		}
		return tw.Flush()
	case "diff":
		if fs.NArg() != 2 {
			return apperr.New(apperr.Invalid, "release diff takes two releases: NAME@VERSION NAME@VERSION")
		}
		d, err := st.DiffReleases(ctx, fs.Arg(0), fs.Arg(1))
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(d)
		}
		printDiff(e, fs.Arg(0), fs.Arg(1), d)
		return nil
	case "export":
		if *ref == "" || *out == "" {
			return apperr.New(apperr.Invalid, "--release and --out are required")
		}
		files, err := st.ExportRelease(ctx, *ref, *format)
		if err != nil {
			return err
		}
		if err := writeZipFile(*out, files); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote %s (%d files, MANIFEST and DATASHEET.md included)\n", *out, len(files))
		return nil
	}
	return apperr.New(apperr.Invalid, "unknown release subcommand %q (create, list, diff, export, verify)", sub)
}

func printDiff(e *env, a, b string, d release.Diff) {
	fmt.Fprintf(e.stdout, "%s -> %s\n", a, b)
	fmt.Fprintf(e.stdout, "documents: %d added, %d removed, %d changed\n", len(d.DocumentsAdded), len(d.DocumentsRemoved), len(d.DocumentsChanged))
	fmt.Fprintf(e.stdout, "spans: %d added, %d removed, %d relabelled\n", len(d.SpansAdded), len(d.SpansRemoved), len(d.SpansRelabelled))
	for _, id := range d.DocumentsAdded {
		fmt.Fprintf(e.stdout, "+ document %s\n", id)
	}
	for _, id := range d.DocumentsRemoved {
		fmt.Fprintf(e.stdout, "- document %s\n", id)
	}
	for _, id := range d.DocumentsChanged {
		fmt.Fprintf(e.stdout, "~ document %s (text changed)\n", id)
	}
	for _, s := range d.SpansAdded {
		fmt.Fprintf(e.stdout, "+ %s %s [%d:%d] %s %q\n", s.Set, s.Document, s.Start, s.End, s.Type, s.Text)
	}
	for _, s := range d.SpansRemoved {
		fmt.Fprintf(e.stdout, "- %s %s [%d:%d] %s %q\n", s.Set, s.Document, s.Start, s.End, s.Type, s.Text)
	}
	for _, s := range d.SpansRelabelled {
		fmt.Fprintf(e.stdout, "~ %s %s [%d:%d] %s -> %s %q\n", s.Set, s.Document, s.Start, s.End, s.WasType, s.Type, s.Text)
	}
}

// verifyArchive checks release archives without a database.
func verifyArchive(e *env, paths []string) error {
	if len(paths) == 0 {
		return apperr.New(apperr.Invalid, "release verify takes one or more archives")
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return apperr.Wrap(apperr.NotFound, err)
		}
		files, err := formats.Unzip(p, data)
		if err != nil {
			return apperr.Wrap(apperr.Invalid, err)
		}
		v, err := release.Verify(files)
		if err != nil {
			return apperr.New(apperr.Invalid, "%s: FAILED: %v", p, err)
		}
		fmt.Fprintf(e.stdout, "%s: OK, %s@%s, %d files, %d documents, root %s\n", p, v.Name, v.Version, v.Files, v.Documents, v.Root)
	}
	return nil
}
