//go:build unix

package store

import (
	"os"
	"syscall"
)

// lockDir holds an exclusive flock on a directory until the returned
// function runs. Locks are per open descriptor: two goroutines of one
// process wait for each other as two processes do.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
