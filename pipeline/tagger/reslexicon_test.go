package tagger

import (
	"slices"
	"strings"
	"testing"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline/resources"
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

// The index answers every phrase as asking each list of each pack does: the
// lists' own entries, written in capitals, and every phrase of up to four
// words of MEDDOCAN notes (most in no list).
func TestResourceLexiconIndexAnswersAsTheLists(t *testing.T) {
	shared.NotUnderRace(t, "single-threaded tests")
	for _, name := range []string{ResourcesLexicon, PacksLexicon} {
		lex, _ := lookupLexicon(name)
		l := lex.(*resourceLexicon)
		check := func(phrase string) {
			if got, want := l.Lookup(phrase), l.lists(resources.Fold(phrase)); !slices.Equal(got, want) {
				t.Fatalf("%s: %q in %v, the lists say %v", name, phrase, got, want)
			}
		}
		for f := range l.index().lists {
			check(f)
			check(strings.ToUpper(f))
		}
		phrases := 0
		for _, d := range readMeddocan(t, "train")[:50] {
			words := strings.Fields(strings.ToLower(d.Text))
			for i := range words {
				for n := 1; n <= 4 && i+n <= len(words); n++ {
					check(strings.Join(words[i:i+n], " "))
					phrases++
				}
			}
		}
		t.Logf("%s: %d indexed phrases, %d phrases of text checked", name, len(l.index().lists), phrases)
	}
}

// Trying phrases shortest first and stopping where no longer phrase of the
// lists begins marks the tokens that trying every length, longest first,
// marks: for both lexicons and a gazetteer learnt from the notes.
func TestMatchPhrasesFindsTheLongestPhrase(t *testing.T) {
	docs := readMeddocan(t, "train")[:80]
	toks := make([]*Tokens, len(docs))
	for i, d := range docs {
		toks[i] = Tokenize(d.Text)
	}
	gaz := gazetteerOf(docs[:40], toks[:40], gazetteerMaxWords)
	longestFirst := func(d *docFeatures, maxWords int, lookup func(string) []string, prefix string) {
		tk := d.tk
		for i := 0; i < len(tk.Tokens); i++ {
			if !isWordy(d.lower[i]) {
				continue
			}
			for n := min(maxWords, len(tk.Tokens)-i); n >= 1; n-- {
				var b strings.Builder
				for k := i; k < i+n; k++ {
					if k > i && tk.Tokens[k].Flags&SpaceBefore != 0 {
						b.WriteByte(' ')
					}
					b.WriteString(d.lower[k])
				}
				if names := lookup(b.String()); len(names) > 0 {
					for k := i; k < i+n; k++ {
						for _, name := range names {
							d.lists[k] = append(d.lists[k], listHit{prefix + name, k == i})
						}
					}
					break
				}
			}
		}
	}
	res, _ := lookupLexicon(ResourcesLexicon)
	packs, _ := lookupLexicon(PacksLexicon)
	x := &extractor{}
	hits := 0
	for _, tk := range toks[40:] {
		for _, c := range []struct {
			name     string
			maxWords int
			f        phraseFinder
			lookup   func(string) []string
		}{
			{"resources", res.MaxWords(), res.(phraseFinder), res.Lookup},
			{"packs", packs.MaxWords(), packs.(phraseFinder), packs.Lookup},
			{"gazetteer", gaz.maxWords, gaz, func(p string) []string { return gaz.types[p] }},
			{"a lexicon without find", res.MaxWords(), everyPhrase{res}, res.Lookup},
		} {
			got, want := x.prepare(tk, nil), x.prepare(tk, nil)
			got.lists, want.lists = make([][]listHit, len(tk.Tokens)), make([][]listHit, len(tk.Tokens))
			matchPhrases(got, c.maxWords, c.f, "d=", nil)
			longestFirst(want, c.maxWords, c.lookup, "d=")
			for i := range want.lists {
				if !slices.Equal(got.lists[i], want.lists[i]) {
					t.Fatalf("%s: token %d %q: %v, want %v", c.name, i, tk.Word(i), got.lists[i], want.lists[i])
				}
				hits += len(want.lists[i])
			}
		}
	}
	if hits < 1000 {
		t.Fatalf("only %d list hits: the test proves little", hits)
	}
	t.Logf("%d list hits", hits)
}
