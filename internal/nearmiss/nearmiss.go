// Package nearmiss finds the names a mistyped one was probably meant to be,
// for "did you mean ...?" in error messages.
package nearmiss

import "strings"

// Among returns the names one edit (a letter added, dropped, changed or two
// neighbours swapped) from name, in their order, once letter case is set
// aside and '_' and '-' are taken as one. One edit and no more: "i2b2-2014"
// is two from "i2b2-2006", which it does not mean.
func Among(name string, names []string) []string {
	want := fold(name)
	var out []string
	for _, n := range names {
		if distance(want, fold(n)) <= 1 {
			out = append(out, n)
		}
	}
	return out
}

func fold(s string) []rune {
	return []rune(strings.ReplaceAll(strings.ToLower(s), "_", "-"))
}

// distance is the optimal string alignment distance: insertions, deletions,
// substitutions and swaps of neighbours.
func distance(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
