//go:build !unix

package store

import "context"

// lockDir holds no lock where flock is not: processes that open a new
// database at once may then race to create its tables.
func lockDir(ctx context.Context, dir string) (func(), error) { return func() {}, nil }
