package surrogate

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline/english"
)

// withArticle makes an English indefinite article that ends text agree with
// the value written after it: "a teacher" replaced by "engineer" becomes "an
// engineer", "an 18-year-old" becomes "a 45-year-old". The article is
// changed only where it agrees with the original value by the same rule, so
// that a note's own usage the rule would read differently ("a UCLA clinic")
// is left alone; its case is kept ("A", "An", "AN"). atStart tells whether
// text starts the note: else what precedes it (a span) ends no word.
func withArticle(text string, atStart bool, original, surrogate string) string {
	art, ok := trailingArticle(text, atStart)
	if !ok {
		return text
	}
	was := strings.EqualFold(art, "an")
	if was != english.TakesAn(original) || was == english.TakesAn(surrogate) {
		return text
	}
	var next string
	switch {
	case !was && art == "A" && isUpperWord(surrogate):
		next = "AN"
	case !was:
		next = art + "n"
	default:
		next = art[:1]
	}
	cut := len(text) - len(art) - 1
	return text[:cut] + next + " "
}

// trailingArticle returns the "a" or "an" (any case) that ends text before
// one space, as a word of its own (see withArticle for atStart).
func trailingArticle(text string, atStart bool) (string, bool) {
	rest, ok := strings.CutSuffix(text, " ")
	if !ok {
		return "", false
	}
	for _, art := range []string{"an", "a"} {
		if len(rest) < len(art) || !strings.EqualFold(rest[len(rest)-len(art):], art) {
			continue
		}
		if head := rest[:len(rest)-len(art)]; head == "" && atStart || head != "" && wordEnds(head) {
			return rest[len(rest)-len(art):], true
		}
	}
	return "", false
}

// wordEnds reports whether a word may start after text, which ends in
// neither a letter, a digit nor an apostrophe.
func wordEnds(text string) bool {
	r, _ := utf8.DecodeLastRuneInString(text)
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
}

// withoutArticle is text without the article that ends it (see
// trailingArticle), which resynthesis may have changed: what an outline
// compares.
func withoutArticle(text string, atStart bool) string {
	if art, ok := trailingArticle(text, atStart); ok {
		return text[:len(text)-len(art)-1] + "\x02"
	}
	return text
}

// isUpperWord reports whether s has letters and all of them are upper case.
func isUpperWord(s string) bool {
	letters := false
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		letters = letters || unicode.IsLetter(r)
	}
	return letters
}
