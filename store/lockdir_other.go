//go:build !unix

package store

import "context"

// lockDir holds no lock where flock is not: processes that open a new
// database at once may then race to create its tables.
func lockDir(ctx context.Context, dir string) (func(), error) { return func() {}, nil }

// lockFile holds no lock where flock is not: processes appending to the
// audit log at once may then write its head file out of order.
func lockFile(ctx context.Context, path string) (func(), error) { return func() {}, nil }
