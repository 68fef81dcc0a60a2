package surrogate

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline/resources"
)

// fold is resources.Fold with a fast path for ASCII, which most values of
// English and Spanish notes are: one allocation instead of one per letter.
func fold(s string) string {
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return string(appendFoldRunes(make([]byte, 0, len(s)+2), s))
		}
		if c >= 'A' && c <= 'Z' {
			upper = true
		}
	}
	if !upper {
		return s
	}
	b := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b)
}

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
			out = append(out, fold(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, fold(s[start:]))
	}
	return out
}

// valueSet holds original values as folded token sequences.
//
// A set is built with maps of its keys (add, addWord), then either frozen
// (a patient's, kept from the first pass to the end of a run) or merged into
// the corpus's union; both keep only each key's hash (see keyHash; 64
// bits, 32 in a frozen set) and which kinds of key it is, not the key's text. Two keys with one hash
// make a lookup answer "held" for a key that is not: every lookup of a
// frozen or union set asks whether a candidate surrogate would leak, so a
// collision can only reject a candidate, never let a value through.
type valueSet struct {
	m       map[string]bool
	exact   map[string]bool // short upper-case values ("IN", "OR"), as written
	longest int
	// What Check keeps to judge finds in unannotated text: the type of each
	// value's first span, and the values written somewhere without a capital.
	typ   map[string]string
	lower map[string]bool
	raw   map[string]bool // values added, as written: most recur (a set is filled by add or by addTyped, not both)
	// prefix holds the proper prefixes of multi-token values ("john" of
	// "john smith"): a scan stops extending a sequence that is none.
	prefix map[string]bool
	// words are folded single words that count as values of this set alone
	// (a patient's name words), not of the corpus's union of the sets.
	words map[string]bool
	// A frozen set keeps its keys' hashes sorted, cut to 32 bits (see
	// shortHash), with their kinds, and its maps nil.
	hashes []uint32
	kinds  []uint8
	// A union keeps its keys' kinds by hash while sets are merged into it,
	// then, sealed, in a hashIndex.
	union  map[uint64]uint8
	sealed *hashIndex
}

// The kinds of a key: which of the maps held it.
const (
	inValues uint8 = 1 << iota
	inWords
	inExact
	inPrefix
)

// keyHash is the 64-bit FNV-1a hash of a key: fixed, so that a run's choices
// do not depend on the process that makes them.
func keyHash[K ~string | ~[]byte](k K) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(k); i++ {
		h ^= uint64(k[i])
		h *= 1099511628211
	}
	return h
}

// freeze makes the set read-only and compact. A patient's set is a few dozen
// keys kept from the first pass to the end of a run, one per patient of the
// corpus: its small maps of strings cost several times the sorted hashes,
// and lookups by binary search in a list that short are as fast as hashing.
// 32 bits of a hash are enough in a set this small: a key of another text
// answers "held" with odds of about 80 in 4 billion, and can only reject a
// candidate surrogate (a million notes' sets held 190 MB as 64-bit hashes).
func (v *valueSet) freeze() {
	kinds := map[uint32]uint8{}
	v.eachKey(func(h uint64, kind uint8) { kinds[shortHash(h)] |= kind })
	v.hashes = make([]uint32, 0, len(kinds)) // no room to grow: the set is kept to the end of a run
	v.hashes = slices.AppendSeq(v.hashes, maps.Keys(kinds))
	slices.Sort(v.hashes)
	v.kinds = make([]uint8, len(v.hashes))
	for i, h := range v.hashes {
		v.kinds[i] = kinds[h]
	}
	v.m, v.prefix, v.words, v.exact, v.raw = nil, nil, nil, nil, nil
}

// shortHash is the 32 bits of a key's hash that a frozen set keeps.
func shortHash(h uint64) uint32 { return uint32(h ^ h>>32) }

// eachKey calls fn with the hash and the kind of each key of a set being
// built, once for each map that holds the key.
func (v *valueSet) eachKey(fn func(h uint64, kind uint8)) {
	for kind, set := range map[uint8]map[string]bool{inValues: v.m, inWords: v.words, inExact: v.exact, inPrefix: v.prefix} {
		for k := range set {
			fn(keyHash(k), kind)
		}
	}
}

// newUnion returns an empty union of sets (see merge).
func newUnion() *valueSet { return &valueSet{union: map[uint64]uint8{}} }

// merge adds the values of o, a set being built, to the union v (not o's
// words: they count for o's patient alone). v must not be sealed yet: a
// Stream merges in its first pass and seals at its plan.
func (v *valueSet) merge(o *valueSet) {
	words := o.words
	o.words = nil
	o.eachKey(func(h uint64, kind uint8) { v.union[h] |= kind })
	o.words = words
	v.longest = max(v.longest, o.longest)
}

// seal ends a union's merges: its keys move from the map, about 20 bytes
// a key, to a hashIndex of 9. A union holds every original value of a
// corpus, kept from the first pass to the end of a run.
func (v *valueSet) seal() {
	if v.union == nil {
		return
	}
	v.sealed = newHashIndex(v.union)
	v.union = nil
}

// has reports whether key k is of a kind. k may be bytes: a lookup
// allocates nothing.
func has[K ~string | ~[]byte](v *valueSet, kind uint8, k K) bool {
	switch {
	case v.sealed != nil:
		return v.sealed.kinds(keyHash(k))&kind != 0
	case v.union != nil:
		return v.union[keyHash(k)]&kind != 0
	case v.hashes != nil:
		i, ok := slices.BinarySearch(v.hashes, shortHash(keyHash(k)))
		return ok && v.kinds[i]&kind != 0
	}
	var set map[string]bool
	switch kind {
	case inValues:
		set = v.m
	case inWords:
		set = v.words
	case inExact:
		set = v.exact
	case inPrefix:
		set = v.prefix
	}
	return set[string(k)]
}

// isPrefix reports whether the folded tokens k begin a longer value.
func (v *valueSet) isPrefix(k []byte) bool { return has(v, inPrefix, k) }

// empty reports whether the set holds no value and no word.
func (v *valueSet) empty() bool {
	return len(v.union) == 0 && v.sealed.len() == 0 && len(v.hashes) == 0 && len(v.m) == 0 && len(v.words) == 0
}

// addWord adds a word that counts as a value of this set only.
func (v *valueSet) addWord(w string) {
	if v.words == nil {
		v.words = map[string]bool{}
	}
	v.words[fold(w)] = true
}

func newValueSet() *valueSet {
	return &valueSet{m: map[string]bool{}, exact: map[string]bool{}, raw: map[string]bool{}, prefix: map[string]bool{}}
}

func (v *valueSet) add(s string) { v.addTyped(s, "") }

// addTyped adds a value with its span's type.
func (v *valueSet) addTyped(s, typ string) {
	if v.raw[s] {
		return
	}
	if v.raw == nil {
		v.raw = map[string]bool{}
	}
	v.raw[s] = true
	t := tokens(s)
	if len(t) == 0 {
		return
	}
	k := v.addTokens(t)
	if w := strings.TrimSpace(s); len(t) == 1 && len([]rune(w)) <= 3 && isLetters(w) && strings.ToUpper(w) == w {
		v.exact[w] = true
	}
	if typ != "" {
		if v.typ == nil {
			v.typ, v.lower = map[string]string{}, map[string]bool{}
		}
		if _, ok := v.typ[k]; !ok {
			v.typ[k] = typ
		}
		if !strings.ContainsFunc(s, unicode.IsUpper) {
			v.lower[k] = true
		}
	}
}

// addTokens adds a value's folded tokens (tokens) as its key, and the key's
// proper prefixes, and returns the key.
func (v *valueSet) addTokens(t []string) string {
	k := strings.Join(t, " ")
	v.m[k] = true
	v.longest = max(v.longest, len(t))
	for i, n := 0, 0; i < len(t)-1; i++ {
		n += len(t[i])
		v.prefix[k[:n]] = true
		n++ // the space
	}
	return k
}

// abbreviation reports whether a folded single-token value was only seen as a
// short upper-case abbreviation, which the leak check matches with its case:
// the state "IN" is not the word "in".
func (v *valueSet) abbreviation(folded, asWritten string) bool {
	return has(v, inExact, strings.ToUpper(folded)) && !has(v, inExact, asWritten) && len([]rune(folded)) <= 3
}

func (v *valueSet) has(s string) bool {
	var arr [128]byte
	return has(v, inValues, appendKey(arr[:0], s))
}

// appendKey appends the folded tokens of s, joined by spaces: a value's key
// in a valueSet.
func appendKey(b []byte, s string) []byte {
	start, n := -1, 0
	for i, r := range s {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if alnum && start < 0 {
			start = i
		} else if !alnum && start >= 0 {
			if n > 0 {
				b = append(b, ' ')
			}
			b = appendFold(b, s[start:i])
			n++
			start = -1
		}
	}
	if start >= 0 {
		if n > 0 {
			b = append(b, ' ')
		}
		b = appendFold(b, s[start:])
	}
	return b
}

// hasToken reports whether a folded token is a value of its own.
func (v *valueSet) hasToken(folded string) bool {
	return v != nil && (has(v, inValues, folded) || has(v, inWords, folded))
}

// within reports whether any original value occurs in s as a whole token
// sequence: a surrogate that contains one would leak it.
func (v *valueSet) within(s string) bool { return v.withinSkip(s, nil) }

// withinSkip is within, except that a single token for which skip is true
// does not count alone (an address's kept street type, which the original
// had too, is no leak of another patient's value that spells it). It runs for
// every candidate surrogate, so it folds into one buffer and allocates
// nothing for ASCII text.
func (v *valueSet) withinSkip(s string, skip func(string) bool) bool {
	if v == nil || v.empty() {
		return false
	}
	var bounds [32][2]int
	t := bounds[:0]
	start := -1
	for i, r := range s {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if alnum && start < 0 {
			start = i
		} else if !alnum && start >= 0 {
			t = append(t, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		t = append(t, [2]int{start, len(s)})
	}
	var arr [128]byte
	buf := arr[:0]
	for i := range t {
		buf = buf[:0]
		for j := i; j < len(t) && j-i < max(v.longest, 1); j++ {
			if j > i {
				buf = append(buf, ' ')
			}
			at := len(buf)
			buf = appendFold(buf, s[t[j][0]:t[j][1]])
			if (has(v, inValues, buf) || j == i && has(v, inWords, buf)) && (j > i || skip == nil || !skip(string(buf[at:]))) {
				return true
			}
			if !v.isPrefix(buf) {
				break
			}
		}
	}
	return false
}

// appendFold appends fold(s) to b.
func appendFold(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return appendFoldRunes(b, s[i:])
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// latinFold is resources.Fold of each rune below U+0180 (Latin-1 and Latin
// Extended-A, the accented letters of Spanish and most European names), so
// that folding them allocates nothing; it is Fold's own table, so the two
// cannot disagree.
var latinFold = func() (t [0x180]string) {
	for r := range t {
		t[r] = resources.Fold(string(rune(r)))
	}
	return t
}()

func appendFoldRunes(b []byte, s string) []byte {
	for _, r := range s {
		if r < rune(len(latinFold)) {
			b = append(b, latinFold[r]...)
		} else {
			b = append(b, resources.Fold(string(r))...)
		}
	}
	return b
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
