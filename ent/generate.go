// Package ent is generated from ent/schema; only schema/, entc.go and this file
// are written by hand.
package ent

//go:generate go run -C .. -mod=mod ./ent/entc.go
//go:generate go tool -C .. gqlgen generate
