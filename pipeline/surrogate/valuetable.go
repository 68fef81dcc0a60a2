package surrogate

import "deidcorpus/pipeline"

import "hash/maphash"

// valueKey names a corpus-scope value (its type and folded text, as the
// corpus table looks values up) or a name word of a type, by two 64-bit
// hashes of its key string: 16 bytes where the string cost its header and
// its bytes, and a first pass keeps one for each distinct value and name
// word of the corpus. Two keys share one with odds of about n²/2¹²⁹ among n.
type valueKey [2]uint64

var valueKeySeed = maphash.MakeSeed()

func keyOfString(k string) valueKey { return valueKey{keyHash(k), maphash.String(valueKeySeed, k)} }

// valueKeyOf is the key of a value of a type.
func valueKeyOf(typ, text string) valueKey { return keyOfString(typ + "\x00" + fold(text)) }

// wordKeyOf is the key of a folded name word in names of a type.
func wordKeyOf(typ, word string) valueKey { return keyOfString(typ + "\x01" + word) }

// valueEntry is what a first pass keeps of a corpus-scope value or a name
// word: the value's occurrence that names it (none for a word), and the
// patients whose records hold it, 2 * the patient's index in
// Stream.patients, plus 1 when a note to rewrite holds it (a patient may
// repeat): a few bytes a patient, where a set of names would cost a map each.
type valueEntry struct {
	v    corpusValue
	pats []int32
	said uint8 // for a name, the sexes the titles before its occurrences say, a bit each (see titleBits)
	// owner is, for an address, the name written before its occurrence v
	// (see ownerBefore): whose address it is; nil for other values, so that
	// the corpus's many name words cost a pointer.
	owner *pipeline.Span
}

// valueTable holds valueEntries by key, in blocks that are never moved:
// a slice of them all would be copied whole each time it grew.
type valueTable struct {
	index  map[valueKey]int32
	blocks [][]valueEntry
	n      int32
}

const valueBlock = 4096

func newValueTable() valueTable { return valueTable{index: map[valueKey]int32{}} }

// entry returns the entry of k, added empty if there is none.
func (t *valueTable) entry(k valueKey) *valueEntry {
	if i, ok := t.index[k]; ok {
		return t.at(i)
	}
	i := t.n
	if int(i)%valueBlock == 0 {
		t.blocks = append(t.blocks, make([]valueEntry, valueBlock))
	}
	t.index[k] = i
	t.n++
	return t.at(i)
}

// at is the entry of index i.
func (t *valueTable) at(i int32) *valueEntry { return &t.blocks[i/valueBlock][i%valueBlock] }

// len is the number of entries.
func (t *valueTable) len() int32 { return t.n }

// pats are the patients of k's entry; none if it has none.
func (t *valueTable) pats(k valueKey) []int32 {
	if i, ok := t.index[k]; ok {
		return t.at(i).pats
	}
	return nil
}
