//go:build unix

package store

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockDir holds an exclusive flock on a directory until the returned
// function runs. Locks are per open descriptor: two goroutines of one
// process wait for each other as two processes do. The wait polls, so that
// cancelling ctx ends it.
func lockDir(ctx context.Context, dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return flock(ctx, f)
}

// lockFile holds an exclusive flock on a lock file, made (mode 0600) if
// missing, as lockDir does on a directory.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return flock(ctx, f)
}

// flock waits for an exclusive flock on f, which the returned function
// releases and closes.
func flock(ctx context.Context, f *os.File) (func(), error) {
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
