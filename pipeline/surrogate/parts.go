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
)

// namePart is a word of a name that a run or the check looks for alone.
type namePart struct {
	text   string // as the name writes it
	titled bool   // only after a title: a common word of the notes searched
}

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

// partWords are the words of a name looked for alone in some notes (texts):
// each marked titled where the notes write it in lower case somewhere, as
// an ordinary word of their language ("rosa", "blanco", "white"), which
// alone is then no find, and after a title still is.
func partWords(name, lang string, texts func(yield func(string) bool)) []namePart {
	var out []namePart
	for _, w := range nameWordsOf(name, lang) {
		out = append(out, namePart{w, writtenLower(w, texts)})
	}
	return out
}

// writtenLower reports whether one of the texts writes the word in lower
// case as a whole word.
func writtenLower(w string, texts func(yield func(string) bool)) bool {
	lower := strings.ToLower(w)
	if lower == w {
		return true // the name writes it so itself
	}
	for t := range texts {
		if wordIndex(t, lower) >= 0 {
			return true
		}
	}
	return false
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
}

// wideValue is a value of corpusWide: its label's index, and whether it is
// only found after a title.
type wideValue struct {
	label  uint16
	titled bool
}

func newCorpusWide() *corpusWide {
	return &corpusWide{vals: map[uint64]wideValue{}, words: map[uint64]bool{}, prefix: map[uint64]bool{}, labelAt: map[[2]string]uint16{}}
}

// observe adds a document's values that are searched across the corpus.
func (w *corpusWide) observe(d *pipeline.Document, pol *Policy, lang string) {
	for _, s := range d.Spans {
		rule := pol.Rule(s.Category, s.Type)
		if rule.Strategy != Name && !wideStrategies[rule.Strategy] || rule.kept(s.Text) {
			continue
		}
		for _, t := range tokens(s.Text) {
			if utf8.RuneCountInString(t) >= minPropagated && strings.ContainsFunc(t, unicode.IsLetter) {
				w.words[keyHash(t)] = true
			}
		}
		if !pol.searched(s.Category, s.Type) {
			continue
		}
		w.add(s.Text, s.Category, s.Type, false)
		if rule.Strategy != Name {
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

// add adds a value of a label; a value added whole and titled is whole.
func (w *corpusWide) add(text, category, typ string, titled bool) {
	t := tokens(text)
	n := 0
	for _, tok := range t {
		n += utf8.RuneCountInString(tok)
	}
	if n < minPropagated || !strings.ContainsFunc(text, unicode.IsLetter) {
		return
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
	w.vals[h] = wideValue{label: li, titled: titled}
	w.longest = max(w.longest, len(t))
	for i, n := 0, 0; i < len(t)-1; i++ {
		n += len(t[i])
		w.prefix[keyHash(k[:n])] = true
		n++
	}
}

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
	if need&needCapital != 0 && !capitalized(text[toks[i].start:toks[j].end]) {
		return false
	}
	return need&needTitle == 0 || afterTitle(toks, folded, i, lang)
}

// needOf is what a find of a corpusWide value needs.
func (v wideValue) need(single bool) uint8 {
	switch {
	case v.titled:
		return needCapital | needTitle
	case single:
		return needCapital
	}
	return 0
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
