package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/pipeline/formats"
)

func init() {
	register("export", "write a corpus with one annotation set to a directory or .zip", runExport)
}

func runExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", "--corpus NAME [--set gold] [--format i2b2] --out DIR|FILE.zip")
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "corpus to export (required)")
	set := fs.String("set", "gold", "annotation set to write")
	format := fs.String("format", "i2b2", fmt.Sprintf("output format (%v)", formats.Names()))
	out := fs.String("out", "", "output directory, or a file ending in .zip (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *corpus == "" || *out == "" {
		fs.Usage()
		return apperr.New(apperr.Invalid, "--corpus and --out are required")
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
