package seqs

import (
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
