package stats

import (
	"hash/maphash"
	"unicode"
	"unicode/utf8"
)

// Fold case-folds s the way every vocabulary here compares words: each
// character is upper-cased and then lower-cased (Unicode simple case mapping,
// one character to one), so "PÉREZ", "Pérez" and "pérez" are one word, and
// so are "Σ", "σ" and "ς"; "ß" stays "ß" (no "ss"). Nothing else is
// normalised: accents, punctuation and digits count.
func Fold(s string) string {
	return string(appendFold(nil, s))
}

func appendFold[T string | []byte](dst []byte, s T) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		// At most one character's bytes: converted on the stack.
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		dst = utf8.AppendRune(dst, foldRune(r))
		i += size
	}
	return dst
}

func foldRune(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }

// asciiSpace marks the ASCII characters unicode.IsSpace accepts, so that the
// tokens here are exactly strings.Fields' (and the stored token counts').
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// Vocabulary counts terms: case-folded whitespace tokens of document text
// (AddText), or whole case-folded span texts (Side.AddSpan). It holds each distinct
// term once, as its hash (termHash), however large the corpus it was fed:
// texts are streamed through it, not kept.
type Vocabulary struct {
	index  map[termHash]int32
	counts []int
	total  int
	buf    []byte
}

// NewVocabulary returns an empty vocabulary.
func NewVocabulary() *Vocabulary { return &Vocabulary{index: map[termHash]int32{}} }

// termHash names a term: two 64-bit hashes of it under independent seeds,
// the same for every vocabulary of the process, so that two vocabularies
// compare. Two distinct terms share one with odds of about n²/2¹²⁹ among n
// terms, which no corpus comes near; a term costs 16 bytes whatever its
// length (a million notes have millions of distinct tokens and span texts).
type termHash [2]uint64

var termSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func hashTerm[T string | []byte](term T) termHash {
	switch t := any(term).(type) {
	case string:
		return termHash{maphash.String(termSeeds[0], t), maphash.String(termSeeds[1], t)}
	default:
		b := t.([]byte)
		return termHash{maphash.Bytes(termSeeds[0], b), maphash.Bytes(termSeeds[1], b)}
	}
}

// AddText adds the tokens of a text: the runs of characters between white
// space (unicode.IsSpace, as strings.Fields splits), each case-folded by Fold.
func (v *Vocabulary) AddText(text []byte) {
	buf := v.buf[:0]
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			if asciiSpace[c] {
				if len(buf) > 0 {
					v.add(buf, 1)
					buf = buf[:0]
				}
				continue
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf = append(buf, c)
			continue
		}
		r, size := utf8.DecodeRune(text[i:])
		i += size
		if unicode.IsSpace(r) {
			if len(buf) > 0 {
				v.add(buf, 1)
				buf = buf[:0]
			}
			continue
		}
		buf = utf8.AppendRune(buf, foldRune(r))
	}
	if len(buf) > 0 {
		v.add(buf, 1)
	}
	v.buf = buf
}

func (v *Vocabulary) add(term []byte, n int) { v.addHash(hashTerm(term), n) }

// addHash adds n occurrences of the term of hash h, and returns the term's
// index, for addAt.
func (v *Vocabulary) addHash(h termHash, n int) int32 {
	i, ok := v.index[h]
	if !ok {
		i = int32(len(v.counts))
		v.index[h] = i
		v.counts = append(v.counts, 0)
	}
	v.addAt(i, n)
	return i
}

// addAt adds n occurrences of the term of index i.
func (v *Vocabulary) addAt(i int32, n int) {
	v.counts[i] += n
	v.total += n
}

// Count returns how often a (folded) term occurred.
func (v *Vocabulary) Count(term string) int {
	if i, ok := v.index[hashTerm(term)]; ok {
		return v.counts[i]
	}
	return 0
}

// Has says whether a (folded) term occurred.
func (v *Vocabulary) Has(term string) bool {
	_, ok := v.index[hashTerm(term)]
	return ok
}

// Total is the number of occurrences added; Len the number of distinct terms.
func (v *Vocabulary) Total() int { return v.total }

// Len is the number of distinct terms.
func (v *Vocabulary) Len() int { return len(v.counts) }

// OOV counts the occurrences and the distinct terms of v that ref never saw.
func (v *Vocabulary) OOV(ref *Vocabulary) (occurrences, terms int) {
	for h, i := range v.index {
		if _, ok := ref.index[h]; !ok {
			occurrences += v.counts[i]
			terms++
		}
	}
	return occurrences, terms
}
