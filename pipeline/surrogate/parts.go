package surrogate

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

// Misses found by parts, and across the corpus. A name annotated once
// ("Harlan Valdez") is written again by its parts: "Mr. Valdez", "Valdez's
// wife". So a name word of four letters or more (minPropagated) is also
// looked for alone, where it is written with a capital and is no common
// word of the notes searched (partWords), and after a title (Mr., Dr.,
// Sra.) whatever it is: "Dr. Blanco" is a name, "vestido blanco" is not.
// And a value whose surrogate holds across the corpus (a doctor, a
// hospital, an institution, a place) or a whole name is not only its
// patient's: the other patients' notes name the same doctor ("Dr. Okafor"),
// hospital or roommate. Those values are searched in every note of the
// corpus (corpusWide), a doctor's name words after a title.

// A word's needs before a find of it counts (misses.need).
const (
	needCapital uint8 = 1 << iota // written with a capital: a part alone
	needTitle                     // right after a title
	// notAllCaps: a word alone not in capitals only ("ELISA" is a test, not
	// the patient "Elisa"), where the name does not write it so.
	notAllCaps
)

// namePart is a word of a name that a run or the check looks for alone.
type namePart struct {
	text   string // as the name writes it
	titled bool   // only after a title: a common word of the notes searched
}

// need is what a find of the part needs.
func (p namePart) need() uint8 {
	n := needCapital | singleCaps(p.text)
	if p.titled {
		n |= needTitle
	}
	return n
}

// singleCaps is notAllCaps for a word not written in capitals, else 0.
func singleCaps(w string) uint8 {
	if allCaps(w) {
		return 0
	}
	return notAllCaps
}

// allCaps reports whether a word has no lower-case letter.
func allCaps(w string) bool { return !strings.ContainsFunc(w, unicode.IsLower) }

// nameWordsOf are the words of a name of four letters or more, as written:
// what may be written alone.
func nameWordsOf(name, lang string) []string {
	var out []string
	for _, w := range splitName(name, lang) {
		if w.role != roleLiteral && w.role != roleInitial && utf8.RuneCountInString(w.text) >= minPropagated {
			out = append(out, w.text)
		}
	}
	return out
}

// partWords are the words of a name looked for alone in some notes: each
// marked titled where it is a common word (common: the corpus or the notes
// write it in lower case, "rosa", "blanco", "white"), which alone is then no
// find, and after a title still is.
func partWords(name, lang string, common func(w string) bool) []namePart {
	var out []namePart
	for _, w := range nameWordsOf(name, lang) {
		out = append(out, namePart{w, strings.ToLower(w) == w || common(w)})
	}
	return out
}

// writtenLower reports whether one of the texts writes the word in lower
// case as a whole word.
func writtenLower(w string, texts func(yield func(string) bool)) bool {
	lower := strings.ToLower(w)
	for t := range texts {
		if wordIndex(t, lower) >= 0 {
			return true
		}
	}
	return false
}

// lowerWords is the set of words a corpus writes in lower case, of four
// letters or more: its language's common words, as the corpus itself
// uses them ("país", "blanco"), where a list of a language's words would
// miss the clinical ones and hold names. It is a bit set of a fixed size,
// each word setting two bits of its hash: 4 MiB whatever the corpus, and
// with a million distinct words one word in about 270 that the corpus never
// writes in lower case is taken for one it does (its name word is then
// looked for only after a title).
type lowerWords []uint64

const lowerBits = 1 << 25

func newLowerWords() lowerWords { return make(lowerWords, lowerBits/64) }

// bits are the two bits of a folded word.
func (lowerWords) bits(h uint64) (uint64, uint64) {
	h = mix(h)
	return h % lowerBits, (h >> 32) % lowerBits
}

// observe adds the words a text writes in lower case.
func (l lowerWords) observe(text string) {
	start := -1
	lower := true
	for i, r := range text + " " {
		if unicode.IsLetter(r) || unicode.IsMark(r) {
			if start < 0 {
				start, lower = i, true
			}
			lower = lower && !unicode.IsUpper(r)
			continue
		}
		if start >= 0 && lower && utf8.RuneCountInString(text[start:i]) >= minPropagated {
			a, b := l.bits(keyHash(fold(text[start:i])))
			l[a/64] |= 1 << (a % 64)
			l[b/64] |= 1 << (b % 64)
		}
		start = -1
	}
}

// has reports whether the corpus writes a word in lower case.
func (l lowerWords) has(w string) bool {
	if l == nil {
		return false
	}
	a, b := l.bits(keyHash(fold(w)))
	return l[a/64]&(1<<(a%64)) != 0 && l[b/64]&(1<<(b%64)) != 0
}

// capitalized reports whether a word starts with an upper-case letter.
func capitalized(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// afterTitle reports whether the token before toks[i] is a title ("Dr",
// "Mr.", "Sra.").
func afterTitle(toks []scanToken, folded []byte, i int, lang string) bool {
	return i > 0 && isTitle(string(folded[toks[i-1].fs:toks[i-1].fe]), lang)
}

// wideStrategies are the strategies whose values are searched across the
// corpus, besides names: institutions and places.
var wideStrategies = map[string]bool{HospitalS: true, Organization: true, City: true, StateS: true, Street: true}

// corpusWide is the values a run searches in every note of a corpus: the
// whole values of names, institutions and places of four letters or more
// and, after a title, the name words of corpus-scope names (a doctor's).
// It holds values, not notes: about 40 bytes a distinct value or word (a hash and
// its label in one map, the hashes of the longer values' prefixes in
// another), so a corpus of a million notes with 200,000 distinct names and
// places holds about 8 MB. Values are known by a 64-bit hash of their
// folded tokens (keyHash): two values of one hash would make one find the
// other's type.
type corpusWide struct {
	vals map[uint64]wideValue
	// words are the hashes of the folded words of four letters or more of
	// every annotated name, institution and place: a note type holding one
	// is no category (see engine.keepsNoteType).
	words   map[uint64]bool
	prefix  map[uint64]bool
	longest int // tokens
	labels  [][2]string
	labelAt map[[2]string]uint16
	lower   lowerWords // the corpus's common words
}

// wideValue is a value of corpusWide: its label's index, and whether it is
// only found after a title.
type wideValue struct {
	label  uint16
	titled bool
	caps   bool // the value is written in capitals
}

func newCorpusWide() *corpusWide {
	return &corpusWide{vals: map[uint64]wideValue{}, words: map[uint64]bool{}, prefix: map[uint64]bool{}, labelAt: map[[2]string]uint16{},
		lower: newLowerWords()}
}

// observe adds a document's values that are searched across the corpus,
// and the words its text writes in lower case.
func (w *corpusWide) observe(d *pipeline.Document, pol *Policy, lang string) {
	w.lower.observe(d.Text)
	for _, s := range d.Spans {
		rule := pol.Rule(s.Category, s.Type)
		if !pol.searchedWide(rule, s.Category, s.Type) || rule.kept(s.Text) {
			continue
		}
		for _, t := range tokens(s.Text) {
			if utf8.RuneCountInString(t) >= minPropagated && strings.ContainsFunc(t, unicode.IsLetter) {
				w.words[keyHash(t)] = true
			}
		}
		if !pol.searched(s.Category, s.Type) || keptAnywhere(pol, s.Text) {
			continue
		}
		w.add(s.Text, s.Category, s.Type, false)
		if !pol.searchedAsName(rule, s.Category, s.Type) {
			continue
		}
		if run := nameRun(s.Text, lang); run != "" {
			w.add(run, s.Category, s.Type, false)
		}
		if rule.Scope == ScopeCorpus {
			for _, word := range nameWordsOf(s.Text, lang) {
				w.add(word, s.Category, s.Type, true)
			}
		}
	}
}

// searchedWide reports whether a label's values are searched across the
// corpus: names, institutions and places, replaced or masked (a masked
// patient's name in another patient's note is masked there too).
func (p *Policy) searchedWide(rule Rule, category, typ string) bool {
	if rule.Strategy == Name || wideStrategies[rule.Strategy] {
		return true
	}
	c := p.categoryOf(category, typ)
	return masks[rule.Strategy] && (c == "NAME" || c == "LOCATION")
}

// keptAnywhere reports whether a rule of the policy keeps a value (the home
// country, "España", under COUNTRY): written under another label, it is not
// another patient's identifier either.
func keptAnywhere(pol *Policy, v string) bool {
	for _, r := range pol.Types {
		if r.Strategy != Keep && r.kept(v) {
			return true
		}
	}
	return false
}

// add adds a value of a label; a value added whole and titled is whole.
func (w *corpusWide) add(text, category, typ string, titled bool) {
	t := tokens(text)
	n := 0
	for _, tok := range t {
		n += utf8.RuneCountInString(tok)
	}
	if n < minPropagated || !strings.ContainsFunc(text, unicode.IsUpper) {
		return // a phrase written in lower case ("hospital comarcal") names nothing across the corpus
	}
	k := strings.Join(t, " ")
	h := keyHash(k)
	if old, ok := w.vals[h]; ok && (!old.titled || titled) {
		return
	}
	l := [2]string{category, typ}
	li, ok := w.labelAt[l]
	if !ok {
		li = uint16(len(w.labels))
		w.labelAt[l] = li
		w.labels = append(w.labels, l)
	}
	w.vals[h] = wideValue{label: li, titled: titled, caps: allCaps(text)}
	w.longest = max(w.longest, len(t))
	for i, n := 0, 0; i < len(t)-1; i++ {
		n += len(t[i])
		w.prefix[keyHash(k[:n])] = true
		n++
	}
}

// common reports whether the corpus writes a word in lower case.
func (w *corpusWide) common(word string) bool { return w != nil && w.lower.has(word) }

// len is the number of values; 0 for nil.
func (w *corpusWide) len() int {
	if w == nil {
		return 0
	}
	return len(w.vals)
}

// at returns the longest value that the tokens from i on spell and that fits
// (fn says whether the find from i to j does), with its last token; -1 if
// none does.
func (w *corpusWide) at(toks []scanToken, folded []byte, i int, buf []byte, fn func(j int, v wideValue) bool) (int, wideValue, []byte) {
	best, bv := -1, wideValue{}
	if w == nil {
		return best, bv, buf
	}
	buf = buf[:0]
	for j := i; j < len(toks) && j-i < w.longest; j++ {
		if j > i {
			buf = append(buf, ' ')
		}
		buf = append(buf, folded[toks[j].fs:toks[j].fe]...)
		h := keyHash(buf)
		if v, ok := w.vals[h]; ok && fn(j, v) {
			best, bv = j, v
		}
		if !w.prefix[h] {
			break
		}
	}
	return best, bv, buf
}

// fits reports whether a find of a value (from token i to j) counts: a
// word alone written with a capital, a titled word after a title.
func fitsFind(text string, toks []scanToken, folded []byte, i, j int, need uint8, lang string) bool {
	w := text[toks[i].start:toks[j].end]
	if need&needCapital != 0 && !capitalized(w) || need&notAllCaps != 0 && allCaps(w) {
		return false
	}
	return need&needTitle == 0 || afterTitle(toks, folded, i, lang)
}

// needOf is what a find of a corpusWide value needs.
// Every find needs a capital: a value written in lower case across the
// corpus is a phrase ("hospital comarcal"), not a name.
func (v wideValue) need(single bool) uint8 {
	n := needCapital
	if v.titled {
		n |= needTitle
	}
	if single && !v.caps {
		n |= notAllCaps
	}
	return n
}

// holdsWord reports whether text holds one of the words (see words).
func (w *corpusWide) holdsWord(text string) bool {
	for _, t := range tokens(text) {
		if w.words[keyHash(t)] {
			return true
		}
	}
	return false
}
