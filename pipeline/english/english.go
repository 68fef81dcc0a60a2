// Package english holds what English text written by the system (synthetic
// notes, surrogates put in place of PHI) must agree with: the indefinite
// article before a word or a number.
package english

import "strings"

// Article is the indefinite article said before s: "an electrician", "a
// teacher", "an 80-year-old", "a 1-year-old".
func Article(s string) string {
	if TakesAn(s) {
		return "an"
	}
	return "a"
}

// TakesAn reports whether an English word or number is said with a vowel
// sound first: "an electrician", "an 80-year-old", "an 11-year-old", "an
// hour"; not "a union", "a one-time", "a 1-year-old".
func TakesAn(s string) bool {
	w := strings.ToLower(strings.TrimLeft(s, `"'(`))
	if w == "" {
		return false
	}
	if c := w[0]; c >= '0' && c <= '9' {
		n := len(w) - len(strings.TrimLeft(w, "0123456789"))
		// eight, eighty, eight hundred...; eleven and eighteen, alone, as
		// a year's first half ("an 1800s house") or in thousands ("an
		// 11000", and "an 11,000", whose first digits are read).
		return c == '8' || (n == 2 || n == 4 || n == 5) && (w[:2] == "11" || w[:2] == "18")
	}
	for _, p := range []string{"uni", "use", "usu", "uti", "ura", "eu", "ewe", "one", "once"} {
		if strings.HasPrefix(w, p) {
			return false
		}
	}
	for _, p := range []string{"hour", "honest", "honor", "honour", "heir"} {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return strings.ContainsRune("aeiou", rune(w[0]))
}
