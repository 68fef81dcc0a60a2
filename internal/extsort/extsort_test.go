package extsort

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// pair is a value with a key that ties and a payload that tells the tied
// apart.
type pair struct {
	key  string
	more uint64
}

var pairs = Order[pair]{
	Compare: func(a, b pair) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.more, b.more)) },
	Append: func(buf []byte, p pair) []byte {
		return binary.AppendUvarint(AppendString(buf, p.key), p.more)
	},
	Decode: func(r *bufio.Reader) (pair, error) {
		key, err := ReadString(r, 64)
		if err != nil {
			return pair{}, err
		}
		more, err := binary.ReadUvarint(r)
		return pair{key, more}, err
	},
}

func all[T any](c *Cursor[T]) ([]T, error) {
	var out []T
	for c.Next() {
		out = append(out, c.Value())
	}
	return out, c.Err()
}

// Values come back in order, across the runs written to the temporary file
// and the one kept in memory, as many times as asked, whatever the run
// size; values added after a pass come in the next one.
func TestSorter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var values []pair
	for i := range 300 {
		values = append(values, pair{fmt.Sprintf("k%03d", rng.IntN(100)), uint64(i)})
	}
	want := slices.Clone(values)
	slices.SortFunc(want, pairs.Compare)
	for _, run := range []int{1, 7, 300, 1000} {
		s := New("test sort", run, pairs)
		for _, v := range values[:200] {
			if err := s.Add(v); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := all(s.Cursor()); err != nil || len(got) != 200 {
			t.Fatalf("run %d: %d values, %v", run, len(got), err)
		}
		for _, v := range values[200:] {
			if err := s.Add(v); err != nil {
				t.Fatal(err)
			}
		}
		if s.Len() != len(values) || s.Spilled() != len(values)/run {
			t.Errorf("run %d: Len %d, %d runs on disk", run, s.Len(), s.Spilled())
		}
		for pass := range 2 {
			got, err := all(s.Cursor())
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("run %d, pass %d: %v; %d values, want %d", run, pass, err, len(got), len(want))
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}

	empty := New("test sort", 4, pairs)
	if got, err := all(empty.Cursor()); err != nil || len(got) != 0 {
		t.Errorf("nothing sorted: %v, %v", got, err)
	}
}

// A Distinct order writes each value once per run: a pass gives every
// distinct value, in order, once for each run that holds it, and never
// more often than it was added.
func TestSorterDistinct(t *testing.T) {
	distinct := pairs
	distinct.Distinct = true
	rng := rand.New(rand.NewPCG(3, 4))
	var values []pair
	for range 500 {
		values = append(values, pair{fmt.Sprintf("k%02d", rng.IntN(40)), uint64(rng.IntN(3))})
	}
	for _, run := range []int{1, 9, 1000} {
		s := New("test sort", run, distinct)
		for _, v := range values {
			if err := s.Add(v); err != nil {
				t.Fatal(err)
			}
		}
		got, err := all(s.Cursor())
		if err != nil || !slices.IsSortedFunc(got, pairs.Compare) {
			t.Fatalf("run %d: %v, sorted %v", run, err, slices.IsSortedFunc(got, pairs.Compare))
		}
		added := map[pair]int{}
		for _, v := range values {
			added[v]++
		}
		seen := map[pair]int{}
		for _, v := range got {
			seen[v]++
		}
		if len(seen) != len(added) {
			t.Errorf("run %d: %d distinct values, want %d", run, len(seen), len(added))
		}
		for v, n := range seen {
			if n > added[v] || (run == 1000 && n != 1) {
				t.Errorf("run %d: %v %d times, added %d times", run, v, n, added[v])
			}
		}
		if s.Len() != len(values) {
			t.Errorf("run %d: Len %d, want %d", run, s.Len(), len(values))
		}
		s.Close()
	}
}

// The temporary file is out of its directory while in use, and a pass
// after Close says so instead of reading a closed file.
func TestSorterFile(t *testing.T) {
	s := New("test sort", 2, pairs)
	for i := range 5 {
		s.Add(pair{"k", uint64(i)})
	}
	name := s.file.Name()
	if !strings.Contains(name, "deidcorpus-test-sort-") {
		t.Errorf("temporary file %s", name)
	}
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Fatalf("the temporary file is in its directory while in use: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := all(s.Cursor()); err == nil || err.Error() != "test sort: read after Close" {
		t.Errorf("a pass after Close: %v", err)
	}
}

// A run that is not what Append wrote (cut short, or a string longer than
// Decode allows) is an error naming the sort, never a value made up.
func TestSorterDamaged(t *testing.T) {
	for name, c := range map[string]struct {
		damage func(f *os.File)
		want   string
	}{
		"cut short": {func(f *os.File) { f.Truncate(3) }, "test sort: reading a run back: unexpected EOF"},
		"a long string": {func(f *os.File) { f.WriteAt(binary.AppendUvarint(nil, 1<<40), 0) },
			"test sort: reading a run back: a string of 1099511627776 bytes, past the 64 expected"},
	} {
		s := New("test sort", 2, pairs)
		s.Add(pair{"key", 1})
		s.Add(pair{"key", 2})
		c.damage(s.file)
		_, err := all(s.Cursor())
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: want %q, got %v", name, c.want, err)
		}
		if name == "cut short" && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: %v is not io.ErrUnexpectedEOF", name, err)
		}
		s.Close()
	}
}
