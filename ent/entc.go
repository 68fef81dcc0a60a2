//go:build ignore

// entc generates the ent client and the GraphQL schema of the ent types. It
// runs from the module root (see generate.go): entgql drops scalars when run
// from elsewhere.
package main

import (
	"log"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
)

func main() {
	ex, err := entgql.NewExtension(
		entgql.WithConfigPath("./gqlgen.yml"),
		entgql.WithSchemaGenerator(),
		entgql.WithSchemaPath("./graph/ent.graphql"),
		entgql.WithWhereInputs(true),
	)
	if err != nil {
		log.Fatalf("creating entgql extension: %v", err)
	}
	err = entc.Generate("./ent/schema", &gen.Config{
		Target:   "./ent",
		Package:  "deidcorpus/ent",
		Features: []gen.Feature{gen.FeatureGlobalID, gen.FeatureUpsert, gen.FeatureExecQuery, gen.FeatureLock, gen.FeatureIntercept},
	}, entc.Extensions(ex))
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}
