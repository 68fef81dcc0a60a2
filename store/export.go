package store

import (
	"context"

	"deidcorpus/apperr"
	"deidcorpus/pipeline/formats"
)

// Export renders a corpus's documents with one annotation set in a format.
func (s *Store) Export(ctx context.Context, corpusName, set, format string) ([]formats.File, error) {
	f, err := formats.Lookup(format)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	if f.Write == nil {
		return nil, apperr.New(apperr.Invalid, "format %s cannot be written", format)
	}
	c, err := s.CorpusByName(ctx, corpusName)
	if err != nil {
		return nil, err
	}
	docs, err := s.LoadDocuments(ctx, c, set)
	if err != nil {
		return nil, err
	}
	files, err := f.Write(docs)
	return files, apperr.Wrap(apperr.Invalid, err)
}

// DeleteCorpus removes a corpus and everything in it.
func (s *Store) DeleteCorpus(ctx context.Context, name string) error {
	c, err := s.CorpusByName(ctx, name)
	if err != nil {
		return err
	}
	return s.Client.Corpus.DeleteOneID(c.ID).Exec(ctx)
}
