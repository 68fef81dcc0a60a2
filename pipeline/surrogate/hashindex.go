package surrogate

import (
	"math/bits"
	"slices"
)

// hashIndex is a read-only set of 64-bit key hashes with their kinds (the
// inValues... bits), in about 9 bytes a key where a map takes about 20: each
// key's hash, mixed, with its low 4 bits replaced by its kinds, sorted; and
// where each bucket of the mixed hashes' top bits starts, about four keys a
// bucket. A lookup reads one bucket: two cache lines, as a map's does.
//
// Two hashes that differ only in their low 4 bits after mixing share an
// entry and its kinds: as with any collision of the union's hashes (see
// valueSet), a lookup can answer "held" for a key that is not, and so only
// reject a candidate surrogate.
type hashIndex struct {
	keys  []uint64 // mixed hash &^ kindBits | kinds, sorted
	start []uint32 // start[b] is the first key of bucket b; start[len-1] = len(keys)
	shift uint     // a key's bucket is its top bits: key >> shift
}

const kindBits = 0xF

// mix spreads a hash's bits over the top ones, which pick its bucket: FNV-1a's
// last byte reaches the high bits only through its last multiplication. An
// odd multiplier makes it a bijection, so that it adds no collision.
func mix(h uint64) uint64 { return h * 0x9E3779B97F4A7C15 }

func newHashIndex(kinds map[uint64]uint8) *hashIndex {
	keys := make([]uint64, 0, len(kinds))
	for h, k := range kinds {
		keys = append(keys, mix(h)&^kindBits|uint64(k))
	}
	slices.Sort(keys)
	// Keys that now differ only in their kinds become one.
	out := keys[:0]
	for _, k := range keys {
		if n := len(out); n > 0 && out[n-1]&^kindBits == k&^kindBits {
			out[n-1] |= k
		} else {
			out = append(out, k)
		}
	}
	keys = slices.Clip(out)
	// About four keys a bucket, at least one bucket.
	b := max(bits.Len(uint(len(keys)/4)), 1)
	x := &hashIndex{keys: keys, start: make([]uint32, 1<<b+1), shift: uint(64 - b)}
	i := 0
	for bucket := range 1 << b {
		x.start[bucket] = uint32(i)
		for i < len(keys) && int(keys[i]>>x.shift) == bucket {
			i++
		}
	}
	x.start[1<<b] = uint32(len(keys))
	return x
}

// kinds returns the kinds held for the key of hash h: none if it is not held.
func (x *hashIndex) kinds(h uint64) uint8 {
	m := mix(h) &^ kindBits
	b := m >> x.shift
	for _, k := range x.keys[x.start[b]:x.start[b+1]] {
		if k&^kindBits == m {
			return uint8(k & kindBits)
		}
	}
	return 0
}

// len is the number of keys; 0 for a nil index.
func (x *hashIndex) len() int {
	if x == nil {
		return 0
	}
	return len(x.keys)
}
