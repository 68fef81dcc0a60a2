// Package resolvers implements the GraphQL API. Resolvers stay thin: they
// validate arguments, call a store service or the job manager, and map the
// results; the error presenter in errors.go turns service errors into GraphQL
// error codes.
package resolvers

import (
	"deidcorpus/ent/document"
	"encoding/json"
	"io"

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
}

// NewSchema builds the executable GraphQL schema over a store and a job manager.
func NewSchema(s *store.Store, jm *jobs.Manager) graphql.ExecutableSchema {
	return graph.NewExecutableSchema(graph.Config{Resolvers: &Resolver{store: s, client: s.Client, jobs: jm}})
}

// DefaultTokenDays is how long a token made without an expiry lasts.
const DefaultTokenDays = 90

// readUploads reads uploaded files, expanding .zip archives.
func readUploads(files []*graphql.Upload) ([]formats.File, error) {
	if len(files) == 0 {
		return nil, apperr.New(apperr.Invalid, "no files uploaded")
	}
	var in []formats.File
	for _, f := range files {
		data, err := io.ReadAll(f.File)
		if err != nil {
			return nil, apperr.New(apperr.Invalid, "upload %s: %v", f.Filename, err)
		}
		expanded, err := formats.Expand(f.Filename, data)
		if err != nil {
			return nil, apperr.Wrap(apperr.Invalid, err)
		}
		in = append(in, expanded...)
	}
	return in, nil
}

func importOptions(input model.ImportInput) store.ImportOptions {
	opt := store.ImportOptions{Corpus: input.Corpus, Format: input.Format, Set: input.Set, Replace: input.Replace}
	if input.Kind != nil {
		opt.CorpusKind = string(*input.Kind)
	}
	if input.Tagset != nil {
		opt.TagSet = *input.Tagset
	}
	if input.Split != nil {
		opt.Split = string(*input.Split)
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
