// Package seqs cuts sequences (iter.Seq) into batches, for the callers that
// hand on or store what a sequence yields a bounded number at a time.
package seqs

import "iter"

// Chunk yields the values of seq in slices of n (the last may be shorter,
// and an empty seq yields none). The slice is reused: a caller may change it
// but must copy what it keeps past its step.
func Chunk[T any](seq iter.Seq[T], n int) iter.Seq[[]T] {
	return func(yield func([]T) bool) {
		part := make([]T, 0, n)
		for v := range seq {
			if part = append(part, v); len(part) == n {
				if !yield(part) {
					return
				}
				part = part[:0]
			}
		}
		if len(part) > 0 {
			yield(part)
		}
	}
}
