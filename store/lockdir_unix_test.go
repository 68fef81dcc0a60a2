//go:build unix

package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLockDirWaitEndsWithContext: a process waiting for another's migration
// lock stops waiting when its context ends, and takes the lock once the
// holder lets go.
func TestLockDirWaitEndsWithContext(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := lockDir(ctx, dir); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting on a held lock with a context that ends: err %v, want %v", err, context.DeadlineExceeded)
	}
	got := make(chan error, 1)
	go func() {
		u, err := lockDir(context.Background(), dir)
		if err == nil {
			u()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("took a held lock (err %v)", err)
	case <-time.After(20 * time.Millisecond):
	}
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("after the holder let go: %v", err)
	}
}
