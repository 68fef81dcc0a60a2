// Package extsort sorts more values than memory should hold. A Sorter keeps
// a run of values; each time the run is full it is sorted and written to a
// temporary file, and a Cursor merges the runs back in order as it reads
// them, with a 32 KiB buffer per run written. Sorting a million values in
// runs of 65,536 costs one run and 16 buffers, whatever the values add up to.
//
// The zip index (the entries of an archive, by name) and a release's
// manifest (its documents' hashes, by set and id) are sorted this way; each
// says how its values compare and how they are written to the file.
package extsort

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Order is how a Sorter orders its values and writes them to its temporary
// file.
type Order[T any] struct {
	Compare func(a, b T) int
	// Append appends v's encoding to buf.
	Append func(buf []byte, v T) []byte
	// Decode reads back one value Append wrote. Any error, io.EOF
	// included, means the file is not what Append wrote: a Cursor calls
	// it only where a value begins.
	Decode func(r *bufio.Reader) (T, error)
	// Distinct keeps one of the values of equal rank in each run, for a
	// caller that counts distinct values: a Cursor still gives a value once
	// for each run that holds it. Len counts every value added.
	Distinct bool
}

// Sorter collects values in any order and gives them back sorted, as many
// times as asked. Values of equal rank come back in no set order: a caller
// that needs one (or refuses ties) says so in Compare (or checks as it
// reads). Close it to remove its temporary file.
type Sorter[T any] struct {
	name     string // names the temporary file and the errors
	order    Order[T]
	runSize  int
	run      []T // the values not yet written, sorted once a Cursor starts
	sorted   bool
	file     *os.File
	unlinked bool    // file is already removed from its directory
	runs     []int64 // end offset of each run written to file
	n        int
}

// New returns a Sorter that holds runSize values before it writes them, a
// sorted run, to its temporary file (made at the first run). name begins
// its errors ("zip index: ...") and names the file.
func New[T any](name string, runSize int, order Order[T]) *Sorter[T] {
	return &Sorter[T]{name: name, order: order, runSize: max(runSize, 1)}
}

// Add adds a value; the run it completes is written to the temporary file.
// It must not be called while a Cursor is in use.
func (s *Sorter[T]) Add(v T) error {
	s.run = append(s.run, v)
	s.sorted = false
	s.n++
	if len(s.run) >= s.runSize {
		return s.spill()
	}
	return nil
}

// Len is how many values were added.
func (s *Sorter[T]) Len() int { return s.n }

// Spilled is how many runs are in the temporary file.
func (s *Sorter[T]) Spilled() int { return len(s.runs) }

// spill writes the run in memory, sorted, to the temporary file.
func (s *Sorter[T]) spill() error {
	if s.file == nil {
		f, err := os.CreateTemp("", "deidcorpus-"+strings.ReplaceAll(s.name, " ", "-")+"-")
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		s.file = f
		// Unlinked at once where the system allows it: a process that dies
		// leaves nothing behind.
		s.unlinked = os.Remove(f.Name()) == nil
	}
	s.sortRun()
	w := bufio.NewWriterSize(s.file, 32<<10)
	var buf []byte
	for _, v := range s.run {
		buf = s.order.Append(buf[:0], v)
		w.Write(buf) // a write error sticks: Flush reports it
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	end, err := s.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	s.runs = append(s.runs, end)
	clear(s.run) // let what the values point to go
	s.run = s.run[:0]
	return nil
}

// Close removes the temporary file. The values still in memory can be
// read; those in the file cannot.
func (s *Sorter[T]) Close() error {
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	if !s.unlinked {
		if rm := os.Remove(s.file.Name()); err == nil {
			err = rm
		}
	}
	s.file = nil
	return err
}

// Sort sorts the values still in memory, as the next Cursor would: after
// it, until the next Add, Cursors can be made and read concurrently.
func (s *Sorter[T]) Sort() {
	if !s.sorted {
		s.sortRun()
		s.sorted = true
	}
}

// sortRun sorts the run in memory, and keeps one of each rank if the order
// is Distinct.
func (s *Sorter[T]) sortRun() {
	slices.SortFunc(s.run, s.order.Compare)
	if s.order.Distinct {
		s.run = slices.CompactFunc(s.run, func(a, b T) bool { return s.order.Compare(a, b) == 0 })
	}
}

// Cursor starts a pass over the values in order.
func (s *Sorter[T]) Cursor() *Cursor[T] {
	c := &Cursor[T]{runs: merge[T]{compare: s.order.Compare}}
	s.Sort()
	if len(s.run) > 0 {
		c.runs.r = append(c.runs.r, &runReader[T]{mem: s.run})
	}
	if len(s.runs) > 0 && s.file == nil {
		c.err = fmt.Errorf("%s: read after Close", s.name)
		return c
	}
	start := int64(0)
	for _, end := range s.runs {
		c.runs.r = append(c.runs.r, &runReader[T]{name: s.name, decode: s.order.Decode,
			r: bufio.NewReaderSize(io.NewSectionReader(s.file, start, end-start), 32<<10)})
		start = end
	}
	return c
}

// Cursor reads the values of a Sorter in order:
//
//	c := s.Cursor()
//	for c.Next() {
//		v := c.Value()
//	}
//	if err := c.Err(); err != nil {
type Cursor[T any] struct {
	runs    merge[T]
	started bool
	cur     T
	err     error
}

// Next moves to the next value: false after the last one, or on an error.
func (c *Cursor[T]) Next() bool {
	if c.err != nil {
		return false
	}
	if !c.started {
		c.started = true
		for i := len(c.runs.r) - 1; i >= 0; i-- { // drop runs that hold nothing, fill the others
			if ok, err := c.runs.r[i].next(); err != nil {
				c.err = err
				return false
			} else if !ok {
				c.runs.r = slices.Delete(c.runs.r, i, i+1)
			}
		}
		heap.Init(&c.runs)
	} else if len(c.runs.r) > 0 {
		r := c.runs.r[0]
		if ok, err := r.next(); err != nil {
			c.err = err
			return false
		} else if ok {
			heap.Fix(&c.runs, 0)
		} else {
			heap.Pop(&c.runs)
		}
	}
	if len(c.runs.r) == 0 {
		var zero T
		c.cur = zero
		return false
	}
	c.cur = c.runs.r[0].head
	return true
}

// Value is the value Next moved to.
func (c *Cursor[T]) Value() T { return c.cur }

// Err is the error that stopped Next, nil at the end of the values.
func (c *Cursor[T]) Err() error { return c.err }

// runReader reads one sorted run: from memory, or from the temporary file.
type runReader[T any] struct {
	mem    []T
	r      *bufio.Reader
	name   string
	decode func(*bufio.Reader) (T, error)
	head   T
}

func (r *runReader[T]) next() (bool, error) {
	if r.r == nil {
		if len(r.mem) == 0 {
			return false, nil
		}
		r.head, r.mem = r.mem[0], r.mem[1:]
		return true, nil
	}
	if _, err := r.r.Peek(1); err == io.EOF {
		return false, nil
	}
	v, err := r.decode(r.r)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("%s: reading a run back: %w", r.name, err)
	}
	r.head = v
	return true, nil
}

// merge is a heap of runs by their next value.
type merge[T any] struct {
	r       []*runReader[T]
	compare func(a, b T) int
}

func (m *merge[T]) Len() int           { return len(m.r) }
func (m *merge[T]) Less(i, j int) bool { return m.compare(m.r[i].head, m.r[j].head) < 0 }
func (m *merge[T]) Swap(i, j int)      { m.r[i], m.r[j] = m.r[j], m.r[i] }
func (m *merge[T]) Push(x any)         { m.r = append(m.r, x.(*runReader[T])) }
func (m *merge[T]) Pop() any {
	r := m.r[len(m.r)-1]
	m.r = m.r[:len(m.r)-1]
	return r
}

// AppendString appends s, its length first, for ReadString.
func AppendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// ReadString reads a string AppendString wrote, of at most max bytes: a
// longer one means the file is damaged, and is not allocated.
func ReadString(r *bufio.Reader, max int) (string, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return "", err
	}
	if n > uint64(max) {
		return "", fmt.Errorf("a string of %d bytes, past the %d expected", n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}
