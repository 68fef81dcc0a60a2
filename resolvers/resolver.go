// Package resolvers implements the GraphQL API. Resolvers stay thin: they
// validate arguments, call a store service or the job manager, and map the
// results; the error presenter in errors.go turns service errors into GraphQL
// error codes.
package resolvers

import (
	"deidcorpus/ent/document"
	"encoding/json"
	"io"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/graph"
	"deidcorpus/graph/model"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
)

// Resolver holds the services the API calls.
type Resolver struct {
	store  *store.Store
	client *ent.Client
	jobs   *jobs.Manager
	// maxNote is the per-note limit of uploaded files, maxImport the
	// budget of one import's (0: the defaults).
	maxNote, maxImport int64
}

// Option sets a limit of the API.
type Option func(*Resolver)

// WithMaxNote sets the most bytes a note of an uploaded file may take
// (formats.ReadOptions.MaxNote).
func WithMaxNote(n int64) Option { return func(r *Resolver) { r.maxNote = n } }

// WithMaxImport sets the most bytes the uploaded files of one import may
// hold once decompressed (store.ImportOptions.MaxImport).
func WithMaxImport(n int64) Option { return func(r *Resolver) { r.maxImport = n } }

// NewSchema builds the executable GraphQL schema over a store and a job manager.
func NewSchema(s *store.Store, jm *jobs.Manager, opts ...Option) graphql.ExecutableSchema {
	r := &Resolver{store: s, client: s.Client, jobs: jm}
	for _, o := range opts {
		o(r)
	}
	return graph.NewExecutableSchema(graph.Config{Resolvers: r})
}

// DefaultTokenDays is how long a token made without an expiry lasts.
const DefaultTokenDays = 90

// uploads is the Source of uploaded files, .zip archives expanded, read
// from gqlgen's uploads where they are asked (formats.Upload): memory holds
// a file or an archive's member at a time, as an import from paths does.
// gqlgen keeps the files of a small request in memory and spools a large
// one's to temporary files (see server.Config.UploadMemory), which live as
// long as the request. An error reading them is the client's input, invalid
// like any other: not the errors of what the files are given to (yield),
// which are returned as they are.
func uploads(files []*graphql.Upload) (formats.Source, error) {
	if len(files) == 0 {
		return nil, apperr.New(apperr.Invalid, "no files uploaded")
	}
	srcs := make([]formats.Source, len(files))
	for i, f := range files {
		r := readerAt(f.File)
		size, err := f.File.Seek(0, io.SeekEnd)
		if err != nil {
			return nil, apperr.New(apperr.Invalid, "upload %s: %v", f.Filename, err)
		}
		srcs[i] = formats.Upload(f.Filename, r, size)
	}
	return func(yield func(formats.File) error) error {
		var yieldErr error
		for _, src := range srcs {
			err := src(func(f formats.File) error {
				yieldErr = yield(f)
				return yieldErr
			})
			if err != nil {
				if err == yieldErr {
					return err
				}
				return apperr.Wrap(apperr.Invalid, err)
			}
		}
		return nil
	}, nil
}

// readerAt reads an upload at any offset. A spooled upload is an *os.File,
// one already; one kept in memory is only an io.ReadSeeker (gqlgen's own
// type), which is read under a lock: io.ReaderAt allows parallel calls.
func readerAt(f io.ReadSeeker) io.ReaderAt {
	if r, ok := f.(io.ReaderAt); ok {
		return r
	}
	return &seekingReaderAt{r: f}
}

type seekingReaderAt struct {
	mu sync.Mutex
	r  io.ReadSeeker
}

func (s *seekingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	n, err := io.ReadFull(s.r, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF // ReadAt's way of saying it read less than asked at the end
	}
	return n, err
}

func (r *Resolver) importOptions(input model.ImportInput) store.ImportOptions {
	opt := store.ImportOptions{Corpus: input.Corpus, Set: input.Set, Replace: input.Replace, MaxNote: r.maxNote, MaxImport: r.maxImport}
	if input.Format != nil {
		opt.Format = *input.Format
	}
	if input.Kind != nil {
		opt.CorpusKind = string(*input.Kind)
	}
	if input.Tagset != nil {
		opt.TagSet = *input.Tagset
	}
	if input.Split != nil {
		opt.Split = string(*input.Split)
	}
	if input.Columns != nil {
		opt.Columns = *input.Columns
	}
	return opt
}

// number reads a number out of a Map argument, which arrives as float64,
// int64 or json.Number depending on the transport and literal.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// deref is an optional string argument's value, "" when absent.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// splitName is an optional split argument's name, "" (every split) when
// absent.
func splitName(s *document.Split) string {
	if s == nil {
		return ""
	}
	return string(*s)
}

// deriveParams are deriveCorpus's and startDerive's arguments as a derive
// job's parameters; an uploaded mapping's errors name it "uploaded".
func deriveParams(corpus, out string, mapping, mappingText *string, set string) jobs.DeriveParams {
	p := jobs.DeriveParams{Corpus: corpus, Set: set, Out: out, Mapping: deref(mapping), MappingText: deref(mappingText)}
	if p.MappingText != "" {
		p.MappingLabel = "uploaded"
	}
	return p
}

// nonEmpty is s for an optional GraphQL string, null when empty.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
