package store

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkSeal is the CPU cost of sealing and opening one value of the
// sizes of the 105,052-note synthetic corpus (bench/scale): a note of 798
// characters and a span of 11.
func BenchmarkSeal(b *testing.B) {
	c, err := newCorpusSeal(1, make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{798, 11} {
		plain := strings.Repeat("x", size)
		b.Run("seal/"+strconv.Itoa(size), func(b *testing.B) {
			for b.Loop() {
				c.seal(fieldDocText, plain)
			}
		})
		sealed := []byte(c.seal(fieldDocText, plain))
		b.Run("open/"+strconv.Itoa(size), func(b *testing.B) {
			for b.Loop() {
				if _, err := c.open(fieldDocText, sealed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
