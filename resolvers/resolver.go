// Package resolvers implements the GraphQL API. Resolvers stay thin: they
// validate arguments, call a store service, and map the results; the error
// presenter in errors.go turns service errors into GraphQL error codes.
package resolvers

import (
	"github.com/99designs/gqlgen/graphql"

	"deidcorpus/ent"
	"deidcorpus/graph"
	"deidcorpus/store"
)

// Resolver holds the services the API calls.
type Resolver struct {
	store  *store.Store
	client *ent.Client
}

// NewSchema builds the executable GraphQL schema over a store.
func NewSchema(s *store.Store) graphql.ExecutableSchema {
	return graph.NewExecutableSchema(graph.Config{Resolvers: &Resolver{store: s, client: s.Client}})
}
