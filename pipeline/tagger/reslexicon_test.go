package tagger

import (
	"slices"
	"testing"
)

// The packs lexicon knows a Spanish corpus's places and regions, which the
// English lists do not, and still knows the English ones; a list common to
// both packs is named once.
func TestPacksLexiconJoinsTheLanguages(t *testing.T) {
	en, _ := lookupLexicon(ResourcesLexicon)
	all, _ := lookupLexicon(PacksLexicon)
	for _, c := range []struct {
		phrase, list string
		inEnglish    bool
	}{
		{"Telde", "city", false},
		{"Principado de Asturias", "region", false},
		{"Boston", "city", true},
		{"enero", "month", true},
	} {
		if got := all.Lookup(c.phrase); !slices.Contains(got, c.list) {
			t.Errorf("packs: %q in %v, want %s", c.phrase, got, c.list)
		}
		if got := en.Lookup(c.phrase); slices.Contains(got, c.list) != c.inEnglish {
			t.Errorf("resources: %q in %v", c.phrase, got)
		}
	}
	got := all.Lookup("Madrid")
	for _, l := range got {
		if n := len(slices.DeleteFunc(slices.Clone(got), func(x string) bool { return x != l })); n != 1 {
			t.Errorf("Madrid: %q listed %d times in %v", l, n, got)
		}
	}
}
