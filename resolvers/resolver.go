// Package resolvers implements the GraphQL API. Resolvers stay thin: they
// validate arguments, call a store service or the job manager, and map the
// results; the error presenter in errors.go turns service errors into GraphQL
// error codes.
package resolvers

import (
	"context"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"

	"deidcorpus/ent"
	"deidcorpus/graph"
	"deidcorpus/jobs"
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

// caller names who made a request, for the records it writes. Requests are
// anonymous until accounts exist.
func caller(ctx context.Context) string { return "" }

// toMap turns a result struct into the JSON object a Map field returns.
func toMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonMap(data)
}

func jsonMap(data []byte) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return m, nil
}
