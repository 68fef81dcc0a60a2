// Package stats computes corpus statistics: counts and distributions over
// documents and their PHI spans that describe a corpus and compare two of them
// (an original and its surrogate version, a train and a test split).
package stats

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NamePattern returns the shape of a name the way Yeniterzi et al. 2010
// (Table 7) tabulate DE-ID's output: each word of two or more letters becomes
// "AAA", a single letter "A", a run of digits "0", any run of white space one
// space, and other characters stay ("Smith, Brian K." -> "AAA, AAA A."). An
// apostrophe between letters belongs to its word ("O'Brien", "Sam's" -> "AAA"),
// so that a surrogate of another spelling keeps the original's pattern.
func NamePattern(name string) string {
	var b strings.Builder
	s := strings.TrimSpace(name)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsLetter(r):
			n, j := 0, i
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if unicode.IsLetter(r2) || unicode.IsMark(r2) {
					n++
					j += sz
					continue
				}
				if isApostrophe(r2) && j+sz < len(s) {
					if r3, _ := utf8.DecodeRuneInString(s[j+sz:]); unicode.IsLetter(r3) {
						j += sz
						continue
					}
				}
				break
			}
			if n >= 2 {
				b.WriteString("AAA")
			} else {
				b.WriteByte('A')
			}
			i = j
		case r >= '0' && r <= '9':
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			b.WriteByte('0')
		case unicode.IsSpace(r):
			for i < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[i:])
				if !unicode.IsSpace(r2) {
					break
				}
				i += sz
			}
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
			i += size
		}
	}
	return b.String()
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

// PatternCount is one row of a name-pattern table.
type PatternCount struct {
	Pattern string `json:"pattern"`
	Tokens  int    `json:"tokens"` // words, initials and digit runs in the pattern
	Count   int    `json:"count"`
}

// NamePatterns tabulates the patterns of names, commonest first (ties by
// pattern), as Yeniterzi et al.'s Table 7 does.
func NamePatterns(names []string) []PatternCount {
	counts := map[string]int{}
	for _, n := range names {
		counts[n]++
	}
	return NamePatternCounts(counts)
}

// NamePatternCounts is NamePatterns over names given with their counts
// (each distinct text once); the table's counts add up to the counts'.
func NamePatternCounts(names map[string]int) []PatternCount {
	counts := map[string]int{}
	for n, c := range names {
		counts[NamePattern(n)] += c
	}
	return PatternCounts(counts)
}

// PatternCounts lists patterns already counted (NamePattern of each name)
// as NamePatternCounts does.
func PatternCounts(counts map[string]int) []PatternCount {
	out := make([]PatternCount, 0, len(counts))
	for p, c := range counts {
		out = append(out, PatternCount{Pattern: p, Tokens: patternTokens(p), Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Pattern < out[j].Pattern
	})
	return out
}

// PatternPair is one pattern's count in two tables side by side.
type PatternPair struct {
	Pattern string `json:"pattern"`
	Tokens  int    `json:"tokens"`
	A       int    `json:"a"`
	B       int    `json:"b"`
}

// ComparePatterns puts two name-pattern tables side by side (an original and
// its surrogate, a train and a test split): every pattern of either, in
// order of A's count (then by pattern), so that patterns B lost or gained
// stand out as Yeniterzi et al.'s Table 7 shows them.
func ComparePatterns(a, b []PatternCount) []PatternPair {
	rows := map[string]*PatternPair{}
	for _, pc := range a {
		rows[pc.Pattern] = &PatternPair{Pattern: pc.Pattern, Tokens: pc.Tokens, A: pc.Count}
	}
	for _, pc := range b {
		if rows[pc.Pattern] == nil {
			rows[pc.Pattern] = &PatternPair{Pattern: pc.Pattern, Tokens: pc.Tokens}
		}
		rows[pc.Pattern].B = pc.Count
	}
	out := make([]PatternPair, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].A != out[j].A {
			return out[i].A > out[j].A
		}
		return out[i].Pattern < out[j].Pattern
	})
	return out
}

func patternTokens(p string) int {
	n := 0
	for i := 0; i < len(p); i++ {
		if (p[i] == 'A' || p[i] == '0') && (i == 0 || p[i-1] != 'A') {
			n++
		}
	}
	return n
}
