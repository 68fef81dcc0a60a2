package tagger

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

// Lexicon is a set of word lists (first names by sex, surnames, cities,
// countries, hospitals, months, professions...) the dictionary features test
// phrases against. Implementations are registered by name so that a saved
// model names the lexicon it was trained with and Load finds it again.
type Lexicon interface {
	// Lookup returns the names of the lists holding phrase: lower-cased,
	// tokens joined by one space where the text had whitespace.
	Lookup(phrase string) []string
	// MaxWords is the longest phrase, in tokens, worth looking up.
	MaxWords() int
}

var (
	lexMu    sync.RWMutex
	lexicons = map[string]Lexicon{}
)

// RegisterLexicon makes a lexicon available to FeatureConfig.Lexicon under
// name. Registering a name twice replaces the earlier lexicon.
func RegisterLexicon(name string, l Lexicon) {
	lexMu.Lock()
	defer lexMu.Unlock()
	lexicons[name] = l
}

func lookupLexicon(name string) (Lexicon, bool) {
	lexMu.RLock()
	defer lexMu.RUnlock()
	l, ok := lexicons[name]
	return l, ok
}

func lexiconNames() []string {
	lexMu.RLock()
	defer lexMu.RUnlock()
	names := make([]string, 0, len(lexicons))
	for n := range lexicons {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// phraseSet is the gazetteer learnt from training spans: lower-cased
// phrases mapped to the span types they were annotated with, and the words
// inside those phrases (parts) mapped likewise, which catch the Spanish
// given names and surnames no US list holds.
type phraseSet struct {
	types    map[string][]string
	parts    map[string][]string
	maxWords int
	keys     []string // of types, sorted (see sortKeys)
}

func (p *phraseSet) sortKeys() { p.keys = slices.Sorted(maps.Keys(p.types)) }

func (p *phraseSet) find(s string) ([]string, bool) { return p.types[s], continued(p.keys, s) }

// phraseFinder answers matchPhrases: the lists holding a phrase, and whether
// a longer phrase of the lists begins with it, so that a phrase none
// continues is not extended. resourceLexicon implements it; a Lexicon
// registered from outside the package cannot (the method is unexported) and
// is asked every phrase up to its MaxWords.
type phraseFinder interface {
	find(phrase string) (lists []string, longer bool)
}

// everyPhrase is a Lexicon that cannot tell which phrases continue.
type everyPhrase struct{ Lexicon }

func (l everyPhrase) find(phrase string) ([]string, bool) { return l.Lookup(phrase), true }

// continued reports whether a key of sorted, longer than s, begins with s:
// the keys that begin with s follow s itself in sorted order.
func continued(sorted []string, s string) bool {
	i, found := slices.BinarySearch(sorted, s)
	if found {
		i++
	}
	return i < len(sorted) && strings.HasPrefix(sorted[i], s)
}

// gazetteerOf collects the phrases of docs' spans, keyed the way matchPhrases
// builds them. Phrases of one character, or without a letter or digit, are
// left out: they match everywhere.
func gazetteerOf(docs []pipeline.Document, toks []*Tokens, maxWords int) *phraseSet {
	p := &phraseSet{types: map[string][]string{}, parts: map[string][]string{}, maxWords: 1}
	for di, d := range docs {
		tk := toks[di]
		ix := pipeline.NewIndex(d.Text)
		for _, s := range d.Spans {
			bs, be := ix.Byte(s.Start), ix.Byte(s.End)
			first, n := -1, 0
			markTokens(tk, bs, be, func(i int, begin bool) {
				if begin {
					first = i
				}
				w := strings.ToLower(tk.Word(i))
				n++
				if utf8.RuneCountInString(w) >= 2 && isWordy(w) && !slices.Contains(p.parts[w], s.Type) {
					p.parts[w] = append(p.parts[w], s.Type)
				}
			})
			if n == 0 || n > maxWords {
				continue
			}
			key := phraseKey(tk, first, first+n)
			if len([]rune(key)) < 2 || !hasAlnum(key) {
				continue
			}
			p.maxWords = max(p.maxWords, n)
			if !slices.Contains(p.types[key], s.Type) {
				p.types[key] = append(p.types[key], s.Type)
			}
		}
	}
	for _, v := range p.types {
		sort.Strings(v)
	}
	for _, v := range p.parts {
		sort.Strings(v)
	}
	p.sortKeys()
	return p
}

func hasAlnum(s string) bool {
	for _, r := range s {
		if isWordy(string(r)) {
			return true
		}
	}
	return false
}
