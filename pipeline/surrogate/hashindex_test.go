package surrogate

import (
	"math/rand/v2"
	"testing"
)

func TestHashIndex(t *testing.T) {
	for _, n := range []int{0, 1, 3, 100, 50000} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		kinds := map[uint64]uint8{}
		for len(kinds) < n {
			kinds[rng.Uint64()] = uint8(1 + rng.IntN(kindBits))
		}
		x := newHashIndex(kinds)
		if x.len() != n {
			t.Errorf("%d keys: the index holds %d", n, x.len())
		}
		for h, k := range kinds {
			if got := x.kinds(h); got != k {
				t.Fatalf("%d keys: hash %x has kinds %b, want %b", n, h, got, k)
			}
		}
		held := 0
		for range 100000 {
			if h := rng.Uint64(); kinds[h] == 0 && x.kinds(h) != 0 {
				held++
			}
		}
		if held > 0 {
			t.Errorf("%d keys: %d of 100,000 other hashes are held", n, held)
		}
	}
	// Two hashes that differ only in the bits the kinds take after mixing
	// share one entry: a lookup of either answers both's kinds.
	a := uint64(12345)
	b := inverseMix(mix(a) ^ 1)
	if a == b || mix(b)&^kindBits != mix(a)&^kindBits {
		t.Fatalf("inverseMix: %x and %x", a, b)
	}
	x := newHashIndex(map[uint64]uint8{a: inValues, b: inPrefix})
	if x.len() != 1 || x.kinds(a) != inValues|inPrefix || x.kinds(b) != inValues|inPrefix {
		t.Errorf("two hashes one entry apart: %d entries, kinds %b and %b", x.len(), x.kinds(a), x.kinds(b))
	}
}

// inverseMix undoes mix: its multiplier's inverse modulo 2^64.
func inverseMix(m uint64) uint64 {
	const c = 0x9E3779B97F4A7C15
	inv := uint64(c) // Newton's iteration doubles the correct low bits
	for range 6 {
		inv *= 2 - c*inv
	}
	return m * inv
}

// A sealed union answers as the union did.
func TestSealedUnion(t *testing.T) {
	u := newUnion()
	for _, vals := range [][]string{{"john smith", "boston"}, {"Mary Ann Lee", "IN"}} {
		s := newValueSet()
		for _, v := range vals {
			s.add(v)
		}
		u.merge(s)
	}
	probes := []string{"John Smith lives here", "in Boston", "Mary Ann", "mary ann lee", "IN", "Lee", "Smith", "Chicago"}
	want := make([]bool, len(probes))
	for i, p := range probes {
		want[i] = u.within(p)
	}
	u.seal()
	if u.union != nil || u.sealed.len() == 0 {
		t.Fatal("not sealed")
	}
	for i, p := range probes {
		if got := u.within(p); got != want[i] {
			t.Errorf("within(%q) = %v sealed, %v before", p, got, want[i])
		}
	}
	if !want[0] || !want[3] || want[7] {
		t.Errorf("the union itself answers wrongly: %v", want)
	}
}
