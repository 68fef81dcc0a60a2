// Package seqs cuts sequences (iter.Seq) into batches, for the callers that
// hand on or store what a sequence yields a bounded number at a time, and
// runs a producer of batches one step ahead of their consumer.
package seqs

import (
	"context"
	"iter"
)

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

// Ahead runs produce in a goroutine of its own, which sends values one at a
// time, and consume in the caller's, on each value in order: the producer
// makes the next value while the consumer works on the last, and no more
// than that. Ahead returns the first error of either (consume's stops the
// producer: send then returns the context's error) once the producer has
// returned; a panic in consume unwinds the caller as it would without Ahead.
func Ahead[T any](ctx context.Context, produce func(ctx context.Context, send func(T) error) error, consume func(T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	values := make(chan T)
	var err error
	go func() {
		defer close(values)
		err = produce(ctx, func(v T) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			select {
			case values <- v:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	defer func() {
		cancel()
		for range values {
		}
	}()
	for v := range values {
		if cerr := consume(v); cerr != nil {
			return cerr
		}
	}
	return err
}
