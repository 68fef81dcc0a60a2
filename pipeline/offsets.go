package pipeline

import "unicode/utf8"

// Index converts between Unicode code-point offsets (what files, the database and
// the API use) and byte offsets (what Go strings use). It is the one place the
// project does that conversion. For ASCII text both are the same and the index
// costs nothing.
type Index struct {
	text  string
	ascii bool
	bytes []int // bytes[cp] = byte offset of code point cp; len = code points + 1
}

// NewIndex indexes text. Invalid UTF-8 bytes count as one code point each, as
// utf8.DecodeRuneInString reports them.
func NewIndex(text string) *Index {
	ix := &Index{text: text, ascii: true}
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			ix.ascii = false
			break
		}
	}
	if ix.ascii {
		return ix
	}
	ix.bytes = make([]int, 0, len(text)+1)
	for b := 0; b < len(text); {
		ix.bytes = append(ix.bytes, b)
		_, size := utf8.DecodeRuneInString(text[b:])
		b += size
	}
	ix.bytes = append(ix.bytes, len(text))
	return ix
}

// Len is the text's length in code points.
func (ix *Index) Len() int {
	if ix.ascii {
		return len(ix.text)
	}
	return len(ix.bytes) - 1
}

// Byte returns the byte offset of code point cp; cp must be in [0, Len()].
func (ix *Index) Byte(cp int) int {
	if ix.ascii {
		return cp
	}
	return ix.bytes[cp]
}

// CodePoint returns the code-point offset of byte offset b, which must fall on a
// code-point boundary (or at the end of the text).
func (ix *Index) CodePoint(b int) int {
	if ix.ascii {
		return b
	}
	// Binary search: bytes is strictly increasing.
	lo, hi := 0, len(ix.bytes)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if ix.bytes[mid] < b {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// Slice returns the text between code points start and end.
func (ix *Index) Slice(start, end int) string {
	return ix.text[ix.Byte(start):ix.Byte(end)]
}

// ByteOffsets returns the byte offset of each code point in cps (sorted,
// without repeats) in one walk over text, which stops at the last of them;
// offsets outside [0, length in code points] get -1. Invalid UTF-8 bytes count
// as one code point each, as in NewIndex.
func ByteOffsets(text string, cps []int) []int {
	bytes := make([]int, len(cps))
	k := 0
	for ; k < len(cps) && cps[k] < 0; k++ {
		bytes[k] = -1
	}
	cp := 0
	for b := range text {
		if k == len(cps) {
			return bytes
		}
		for ; k < len(cps) && cps[k] == cp; k++ {
			bytes[k] = b
		}
		cp++
	}
	for ; k < len(cps) && cps[k] == cp; k++ {
		bytes[k] = len(text)
	}
	for ; k < len(cps); k++ {
		bytes[k] = -1
	}
	return bytes
}
