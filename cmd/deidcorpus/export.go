package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"deidcorpus/pipeline/formats"
)

func init() {
	register(&command{
		name:    "export",
		summary: "write a corpus with one annotation set to a directory or .zip",
		args:    "--corpus NAME [--set gold] [--format i2b2] --out DIR|FILE.zip",
		examples: []string{
			"deidcorpus export --corpus notes --out notes-gold/",
			"deidcorpus export --corpus notes --set system-crf1 --format brat --out crf1.zip",
		},
		setup: setupExport,
	})
}

func setupExport(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "corpus to export (required)")
	set := fs.String("set", "gold", "annotation set to write")
	format := fs.String("format", "i2b2", "output format ("+strings.Join(formats.Names(), ", ")+")")
	out := fs.String("out", "", "output directory, or a file ending in .zip (required)")
	return func(ctx context.Context, args []string) error {
		if *corpus == "" || *out == "" {
			return usageErr("--corpus and --out are required")
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.export", map[string]any{"corpus": *corpus, "set": *set, "format": *format})
		if err != nil {
			return err
		}
		defer st.Close()
		files, err := st.Export(ctx, *corpus, *set, *format)
		if err != nil {
			return err
		}
		if strings.HasSuffix(strings.ToLower(*out), ".zip") {
			err = writeZipFile(*out, files)
		} else {
			err = formats.WriteDir(*out, files)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote %d files to %s\n", len(files), *out)
		return nil
	}
}

// writeZipFile writes an archive through a temporary file, so that a failure
// never leaves a truncated archive under the requested name.
func writeZipFile(path string, files []formats.File) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".export-*.zip")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := formats.WriteZip(tmp, files); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
