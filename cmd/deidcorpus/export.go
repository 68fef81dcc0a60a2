package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
)

func init() {
	register(&command{
		name:    "export",
		summary: "write a corpus with one annotation set to a directory or .zip",
		args:    "--corpus NAME [--set gold] [--format i2b2] [--split SPLIT] [--source-ids] --out DIR|FILE.zip",
		examples: []string{
			"deidcorpus export --corpus notes --out notes-gold/",
			"deidcorpus export --corpus notes --set system-crf1 --format brat --out crf1.zip",
			"deidcorpus export --corpus notes --set system-crf1 --split dev --out crf1-dev/   # the notes tag scored",
			"deidcorpus export --corpus notes-r --source-ids --out notes-r-as-source/   # a surrogate corpus under its source's ids (curators)",
		},
		setup: setupExport,
	})
}

func setupExport(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "corpus to export (required)")
	set := fs.String("set", "gold", "annotation set to write")
	format := fs.String("format", formats.Default, "output format ("+strings.Join(formats.Names(), ", ")+")")
	split := fs.String("split", "", "only the documents of this split: train, dev, test or unassigned; all (the default): every document")
	out := fs.String("out", "", "output directory, or a file ending in .zip (required)")
	sourceIDs := fs.Bool("source-ids", false, "write a surrogate corpus under its source's note and patient ids, to compare it with its source file by file (curators)")
	return func(ctx context.Context, args []string) error {
		if *corpus == "" || *out == "" {
			return usageErr("--corpus and --out are required")
		}
		if _, err := formatFlag(*format); err != nil {
			return err
		}
		if err := outIsDirOrZip(*out); err != nil {
			return err
		}
		op := "cli.export"
		if *sourceIDs {
			op = "cli.export.sourceIDs"
		}
		st, ctx, err := openStore(ctx, e, *db, op, map[string]any{"corpus": *corpus, "set": *set, "format": *format, "split": *split})
		if err != nil {
			return err
		}
		defer st.Close()
		// The files are written as the documents are read, a batch at a
		// time: an export never holds the corpus.
		opt := store.ExportOptions{Corpus: *corpus, Set: *set, Format: *format, Split: *split, SourceIDs: *sourceIDs}
		var made int
		if strings.HasSuffix(strings.ToLower(*out), ".zip") {
			made, err = writeZip(*out, func(create func(string) (io.Writer, error)) error {
				return st.ExportTo(ctx, opt, create)
			})
		} else if err = newOutDir(*out); err == nil {
			dir := &formats.DirFiles{Dir: *out}
			err = errors.Join(st.ExportTo(ctx, opt, dir.Create), dir.Close())
			made = dir.Made
		}
		if err != nil {
			return err
		}
		files := "files"
		if made == 1 {
			files = "file"
		}
		fmt.Fprintf(e.stdout, "wrote %d %s to %s\n", made, files, *out)
		return nil
	}
}

// formatFlag is the format a --format flag names. An unknown one is a usage
// error that names the flag, lists the formats and says which was likely
// meant, before anything is opened or written: import, export, release
// export, eval and offline tag say it alike.
func formatFlag(name string) (*formats.Format, error) {
	f, err := formats.Lookup(name)
	if err != nil {
		return nil, usageErr("--format: %v", err)
	}
	return f, nil
}

// writeZip writes a .zip archive whose members add makes with create, one
// after another, and returns how many it made. The archive goes through a
// temporary file renamed into place, so that a failure never leaves a
// truncated archive under the requested name.
func writeZip(path string, add func(create func(name string) (io.Writer, error)) error) (int, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return 0, usageErr("--out %s is a directory: name the archive to write, a new .zip file (or one to replace)", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".export-*.zip")
	if err != nil {
		// The temporary file's name means nothing to the user: name theirs.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return 0, apperr.New(apperr.Invalid, "--out %s: cannot write there: %v", path, err)
	}
	defer os.Remove(tmp.Name())
	z := formats.NewZipFiles(tmp)
	err = add(z.Create)
	if err == nil {
		err = z.Close()
	}
	if err = errors.Join(err, tmp.Close()); err != nil {
		return 0, err
	}
	return z.Made, os.Rename(tmp.Name(), path)
}

// outIsDirOrZip refuses an --out that names a document file (notes.jsonl,
// a.xml): an export writes a directory of the format's files, or a .zip of
// them, and would make a directory of that name.
func outIsDirOrZip(out string) error {
	ext := strings.ToLower(filepath.Ext(out))
	if ext == "" || ext == ".zip" {
		return nil
	}
	if info, err := os.Stat(out); err == nil && info.IsDir() {
		return nil
	}
	for _, name := range formats.Names() {
		if f, err := formats.Lookup(name); err == nil && slices.Contains(f.Exts, ext) {
			return usageErr("--out %s names a %s file, but an export writes a directory of files (or a .zip of them): name a directory, or %s.zip",
				out, ext, strings.TrimSuffix(out, filepath.Ext(out)))
		}
	}
	return nil
}
