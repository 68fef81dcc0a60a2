// Package model holds the GraphQL types that are not ent types; gqlgen writes
// models_gen.go here.
package model
