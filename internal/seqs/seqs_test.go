package seqs

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestChunk(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		n    int
		want [][]int
	}{
		{nil, 3, nil},
		{[]int{1, 2, 3}, 3, [][]int{{1, 2, 3}}},
		{[]int{1, 2, 3, 4, 5, 6, 7}, 3, [][]int{{1, 2, 3}, {4, 5, 6}, {7}}},
	} {
		var got [][]int
		for part := range Chunk(slices.Values(tc.in), tc.n) {
			got = append(got, slices.Clone(part))
		}
		if !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("Chunk(%v, %d) = %v, want %v", tc.in, tc.n, got, tc.want)
		}
	}
	// Stopping early stops the sequence.
	n := 0
	for range Chunk(slices.Values([]int{1, 2, 3, 4, 5}), 2) {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("%d chunks taken before the break, want 2", n)
	}
}

// Ahead hands every value on in order, returns the producer's error after the
// values it sent, and stops the producer at the consumer's first error.
func TestAhead(t *testing.T) {
	count := func(n int, fail error) func(context.Context, func(int) error) error {
		return func(_ context.Context, send func(int) error) error {
			for i := range n {
				if err := send(i); err != nil {
					return err
				}
			}
			return fail
		}
	}
	var got []int
	keep := func(v int) error { got = append(got, v); return nil }
	if err := Ahead(context.Background(), count(5, nil), keep); err != nil || !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Fatalf("got %v, %v", got, err)
	}
	broken := errors.New("broken")
	got = nil
	if err := Ahead(context.Background(), count(3, broken), keep); err != broken || len(got) != 3 {
		t.Fatalf("producer's error: got %v, %v", got, err)
	}
	stop, produced := errors.New("stop"), 0
	err := Ahead(context.Background(), func(_ context.Context, send func(int) error) error {
		for i := 0; ; i++ {
			if err := send(i); err != nil {
				return err
			}
			produced++
		}
	}, func(v int) error {
		if v == 2 {
			return stop
		}
		return nil
	})
	if err != stop || produced > 4 {
		t.Fatalf("consumer's error: %v after %d values sent", err, produced)
	}
	defer func() {
		if r := recover(); r != "consumer" {
			t.Fatalf("recovered %v, want the consumer's panic", r)
		}
	}()
	Ahead(context.Background(), count(3, nil), func(int) error { panic("consumer") })
}
