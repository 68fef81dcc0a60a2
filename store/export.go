package store

import (
	"cmp"
	"context"
	"errors"
	"io"
	"math"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

// ExportOptions say what an export writes: a corpus's documents (of one
// split, or all when Split is empty or "all") with one annotation set, in a
// format.
type ExportOptions struct {
	Corpus, Set, Format string
	Split               string
	// SourceIDs writes a surrogate corpus under its source's note and
	// patient ids (curators only: auth's cli.export.source-ids), so that
	// original and surrogate compare file by file.
	SourceIDs bool
}

// Export renders a corpus's documents with one annotation set in a format.
func (s *Store) Export(ctx context.Context, opt ExportOptions) ([]formats.File, error) {
	var c formats.Collector
	if err := s.ExportTo(ctx, opt, c.Create); err != nil {
		return nil, err
	}
	return c.Files(), nil
}

// ExportTo renders a corpus's documents with one annotation set in a format,
// batch by batch, to files made by create (see formats.Stream): a format
// that writes batches holds one batch in memory, whatever the corpus's size.
// Errors create returns pass through with their code; other write errors
// are the documents' (invalid).
func (s *Store) ExportTo(ctx context.Context, opt ExportOptions, create func(name string) (io.Writer, error)) error {
	f, err := opt.writer()
	if err != nil {
		return err
	}
	split, err := opt.split()
	if err != nil {
		return err
	}
	c, err := s.CorpusByName(ctx, opt.Corpus)
	if err != nil {
		return err
	}
	if split != "" {
		if n, err := s.CountDocuments(ctx, c, split); err != nil || n == 0 {
			return cmp.Or(err, s.NoDocumentsIn(ctx, c, split))
		}
	}
	rename := func(*pipeline.Document) {}
	if opt.SourceIDs {
		if rename, err = s.sourceNamer(ctx, c); err != nil {
			return err
		}
	}
	// For a researcher, named by patient where the format names a note by
	// its id alone, so that her re-import keeps the patients (a surrogate
	// corpus's ids are pseudonyms that do not say them). A curator's export
	// keeps the corpus's ids, which an annotation layer imported back into
	// the corpus must match.
	var byPatient func(*pipeline.Document)
	if !auth.SeesSources(ctx) {
		byPatient = f.PatientNames()
	}
	out := formats.NewStream(f, sinkCreate(create))
	if err := s.EachBatch(ctx, c, opt.Set, split, batchOf(f), func(docs []pipeline.Document) error {
		for i := range docs {
			rename(&docs[i])
			if byPatient != nil {
				byPatient(&docs[i])
			}
		}
		return classify(out.Write(docs))
	}); err != nil {
		return err
	}
	return classify(out.Close())
}

// Validate checks what it can of an export without a database: a format
// that can be written, a known split (or "all"). Jobs and resolvers check
// before they queue or link an export.
func (opt ExportOptions) Validate() error {
	if _, err := opt.writer(); err != nil {
		return err
	}
	_, err := opt.split()
	return err
}

// writer is the export's format, refused unless it can be written.
func (opt ExportOptions) writer() (*formats.Format, error) {
	f, err := formats.Lookup(opt.Format)
	if err != nil {
		return nil, apperr.New(apperr.Invalid, "format: %v", err)
	}
	if f.Write == nil {
		return nil, apperr.New(apperr.Invalid, "format: %s cannot be written", opt.Format)
	}
	return f, nil
}

// split is the export's split, "" for every document.
func (opt ExportOptions) split() (string, error) {
	if opt.Split == "" || strings.EqualFold(opt.Split, "all") {
		return "", nil
	}
	sp, err := normalizeSplit(opt.Split)
	if err != nil {
		return "", apperr.New(apperr.Invalid, "split: %v", err)
	}
	return string(sp), nil
}

// Name is an export's file name without extension: corpus, set and
// format, and the split when there is one ("notes-gold-i2b2-dev").
func (opt ExportOptions) Name() string {
	name := opt.Corpus + "-" + opt.Set + "-" + opt.Format
	if split, _ := opt.split(); split != "" {
		name += "-" + split
	}
	return name
}

// batchOf is how many documents a streamed export of format f renders at a
// time: one batch, or the whole corpus for a format that cannot be written
// in batches.
func batchOf(f *formats.Format) int {
	if f.Batched {
		return readBatch
	}
	return math.MaxInt
}

// sinkCreate marks the errors of create and of the files it makes as the
// destination's, for classify.
func sinkCreate(create func(name string) (io.Writer, error)) func(name string) (io.Writer, error) {
	return func(name string) (io.Writer, error) {
		w, err := create(name)
		if err != nil {
			return nil, sinkError{err}
		}
		return sinkWriter{w}, nil
	}
}

// classify codes an error of a streamed export: one of the destination
// (sinkCreate's) or already coded keeps its code; any other is the
// documents', which do not fit the format.
func classify(err error) error {
	var sink sinkError
	var coded *apperr.Error
	if err != nil && !errors.As(err, &sink) && !errors.As(err, &coded) {
		err = apperr.Wrap(apperr.Invalid, err)
	}
	return err
}

// sinkError is an error of an export's destination, told apart from one of
// its documents.
type sinkError struct{ error }

func (e sinkError) Unwrap() error { return e.error }

// sinkWriter marks the errors of an export's destination.
type sinkWriter struct{ io.Writer }

func (w sinkWriter) Write(p []byte) (int, error) {
	n, err := w.Writer.Write(p)
	if err != nil {
		err = sinkError{err}
	}
	return n, err
}
