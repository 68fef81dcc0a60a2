package surrogate

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline/resources"
)

// tokens splits s into folded runs of letters and digits: the units the leak
// check compares, so that "Rivera, Bueno" and "RIVERA BUENO" are one sequence.
func tokens(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if alnum && start < 0 {
			start = i
		} else if !alnum && start >= 0 {
			out = append(out, resources.Fold(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, resources.Fold(s[start:]))
	}
	return out
}

// valueSet holds original values as folded token sequences.
type valueSet struct {
	m       map[string]bool
	exact   map[string]bool // short upper-case values ("IN", "OR"), as written
	longest int
}

func newValueSet() *valueSet { return &valueSet{m: map[string]bool{}, exact: map[string]bool{}} }

func (v *valueSet) add(s string) {
	t := tokens(s)
	if len(t) == 0 {
		return
	}
	v.m[strings.Join(t, " ")] = true
	v.longest = max(v.longest, len(t))
	if w := strings.TrimSpace(s); len(t) == 1 && len([]rune(w)) <= 3 && isLetters(w) && strings.ToUpper(w) == w {
		v.exact[w] = true
	}
}

// abbreviation reports whether a folded single-token value was only seen as a
// short upper-case abbreviation, which the leak check matches with its case:
// the state "IN" is not the word "in".
func (v *valueSet) abbreviation(folded, asWritten string) bool {
	return v.exact[strings.ToUpper(folded)] && !v.exact[asWritten] && len([]rune(folded)) <= 3
}

func (v *valueSet) has(s string) bool { return v.m[strings.Join(tokens(s), " ")] }

// within reports whether any original value occurs in s as a whole token
// sequence: a surrogate that contains one would leak it.
func (v *valueSet) within(s string) bool {
	if v == nil || len(v.m) == 0 {
		return false
	}
	t := tokens(s)
	var b strings.Builder
	for i := range t {
		b.Reset()
		for j := i; j < len(t) && j-i < v.longest; j++ {
			if j > i {
				b.WriteByte(' ')
			}
			b.WriteString(t[j])
			if v.m[b.String()] {
				return true
			}
		}
	}
	return false
}

// letterCase is the case pattern of a word.
type letterCase uint8

const (
	caseTitle letterCase = iota
	caseUpper
	caseLower
)

func caseOf(s string) letterCase {
	upper, lower := 0, 0
	for _, r := range s {
		if unicode.IsUpper(r) {
			upper++
		} else if unicode.IsLower(r) {
			lower++
		}
	}
	switch {
	case lower == 0 && upper > 1:
		return caseUpper
	case upper == 0 && lower > 0:
		return caseLower
	}
	return caseTitle
}

// withCase writes s in a case pattern; title case capitalizes each word.
func withCase(s string, c letterCase) string {
	switch c {
	case caseUpper:
		return strings.ToUpper(s)
	case caseLower:
		return strings.ToLower(s)
	}
	var b strings.Builder
	up := true
	for _, r := range s {
		if up {
			b.WriteRune(unicode.ToUpper(r))
		} else {
			b.WriteRune(unicode.ToLower(r))
		}
		up = !unicode.IsLetter(r) && r != '\''
	}
	return b.String()
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return s != ""
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// spanishWords and englishWords are frequent function words that tell the
// language of a corpus apart.
var (
	spanishWords = map[string]bool{"de": true, "la": true, "el": true, "en": true, "y": true, "que": true, "los": true, "con": true, "por": true, "del": true, "las": true, "una": true, "se": true, "paciente": true}
	englishWords = map[string]bool{"the": true, "of": true, "and": true, "to": true, "in": true, "with": true, "was": true, "is": true, "for": true, "on": true, "patient": true, "he": true, "she": true}
)

// detectLanguage guesses "es" or "en" from up to a few thousand words.
func detectLanguage(texts []string) string {
	es, en, n := 0, 0, 0
	for _, t := range texts {
		for _, w := range strings.Fields(t) {
			w = strings.ToLower(strings.Trim(w, ".,;:()"))
			if spanishWords[w] {
				es++
			}
			if englishWords[w] {
				en++
			}
			if n++; n > 20000 {
				break
			}
		}
		if n > 20000 {
			break
		}
	}
	if es > en {
		return "es"
	}
	return "en"
}

func sortStrings(s []string) { sort.Strings(s) }
