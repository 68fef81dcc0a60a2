package resources

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fold lower-cases s and strips the diacritics of Latin letters ("Gómez" ->
// "gomez", "NÚÑEZ" -> "nunez") so that lookups and the leak check treat a name
// written with or without accents as the same name.
func Fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if c >= 'A' && c <= 'Z' {
			ascii = false // needs lower-casing: take the general path
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteString(foldRune(r))
	}
	return b.String()
}

// foldRune folds one rune; multi-letter results cover ligatures ("æ" -> "ae").
func foldRune(r rune) string {
	if r < utf8.RuneSelf {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		return string(r)
	}
	r = unicode.ToLower(r)
	if f, ok := latin[r]; ok {
		return f
	}
	return string(r)
}

var latin = func() map[rune]string {
	m := map[rune]string{'æ': "ae", 'œ': "oe", 'ß': "ss", 'ø': "o", 'ð': "d", 'þ': "th", 'ł': "l"}
	groups := map[string]string{
		"a": "àáâãäåāăą", "c": "çćĉċč", "d": "ď", "e": "èéêëēĕėęě", "g": "ĝğġģ", "h": "ĥ",
		"i": "ìíîïĩīĭįı", "j": "ĵ", "k": "ķ", "l": "ĺļľ", "n": "ñńņňŉ", "o": "òóôõöōŏő",
		"r": "ŕŗř", "s": "śŝşš", "t": "ţťŧ", "u": "ùúûüũūŭůűų", "w": "ŵ", "y": "ýÿŷ", "z": "źżž",
	}
	for base, chars := range groups {
		for _, c := range chars {
			m[c] = base
		}
	}
	return m
}()
