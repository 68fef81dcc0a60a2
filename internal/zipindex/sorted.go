package zipindex

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// sortRun is how many entries Sort holds before it writes them, sorted, to
// its temporary file: about 6 MB with names of 40 bytes.
const sortRun = 1 << 16

// Sorted is an archive's entries in name order (entries of one name in
// central directory order), for a reader that must meet them so, as one
// that compares them with a sorted list does. Memory holds one run of
// entries; the others wait in a temporary file, each sorted, and are merged
// as a Cursor reads them back, with a 32 KiB buffer per run (16 runs for a
// million entries).
type Sorted struct {
	run      []Entry // the last run, kept in memory
	file     *os.File
	unlinked bool    // file is already removed from its directory
	runs     []int64 // end offset of each run written to file
	n        int
}

// Sort walks the central directory (see Walk, whose errors it returns) and
// sorts its entries by name. Close the Sorted to remove its temporary file.
func (z *Reader) Sort() (*Sorted, error) { return z.sort(sortRun) }

func (z *Reader) sort(runSize int) (*Sorted, error) {
	s := &Sorted{}
	err := z.Walk(func(e Entry) error {
		s.run = append(s.run, e)
		s.n++
		if len(s.run) >= runSize {
			return s.spill()
		}
		return nil
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	slices.SortFunc(s.run, compare)
	return s, nil
}

func compare(a, b Entry) int {
	return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Index, b.Index))
}

// Len is how many entries there are.
func (s *Sorted) Len() int { return s.n }

// spill writes the run in memory, sorted, to the temporary file.
func (s *Sorted) spill() error {
	if s.file == nil {
		f, err := os.CreateTemp("", "deidcorpus-zipindex-")
		if err != nil {
			return fmt.Errorf("zip index: %w", err)
		}
		s.file = f
		// Unlinked at once where the system allows it: a process that dies
		// leaves nothing behind.
		s.unlinked = os.Remove(f.Name()) == nil
	}
	slices.SortFunc(s.run, compare)
	w := bufio.NewWriterSize(s.file, 32<<10)
	var buf []byte
	for _, e := range s.run {
		buf = binary.AppendUvarint(buf[:0], uint64(e.Index))
		buf = binary.AppendUvarint(buf, uint64(len(e.Name)))
		buf = append(buf, e.Name...)
		for _, v := range []uint64{uint64(e.Flags), uint64(e.Method), uint64(e.CRC32),
			uint64(e.CompressedSize), e.UncompressedSize, uint64(e.Offset)} {
			buf = binary.AppendUvarint(buf, v)
		}
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("zip index: %w", err)
	}
	end, err := s.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("zip index: %w", err)
	}
	s.runs = append(s.runs, end)
	clear(s.run) // let the names go
	s.run = s.run[:0]
	return nil
}

// Close removes the temporary file.
func (s *Sorted) Close() error {
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

// Cursor starts a pass over the entries in name order; a Sorted gives as
// many as its reader needs.
func (s *Sorted) Cursor() *Cursor {
	c := &Cursor{}
	if len(s.run) > 0 {
		c.runs = append(c.runs, &runReader{mem: s.run})
	}
	if len(s.runs) > 0 && s.file == nil {
		c.err = errors.New("zip index: read after Close")
		return c
	}
	start := int64(0)
	for _, end := range s.runs {
		c.runs = append(c.runs, &runReader{r: bufio.NewReaderSize(io.NewSectionReader(s.file, start, end-start), 32<<10)})
		start = end
	}
	return c
}

// Cursor reads the entries of a Sorted in name order:
//
//	c := s.Cursor()
//	for c.Next() {
//		e := c.Entry()
//	}
//	if err := c.Err(); err != nil {
type Cursor struct {
	runs    merge
	started bool
	cur     Entry
	err     error
}

// Next moves to the next entry: false after the last one, or on an error.
func (c *Cursor) Next() bool {
	if c.err != nil {
		return false
	}
	if !c.started {
		c.started = true
		for i := len(c.runs) - 1; i >= 0; i-- { // drop runs that hold nothing, fill the others
			if ok, err := c.runs[i].next(); err != nil {
				c.err = err
				return false
			} else if !ok {
				c.runs = slices.Delete(c.runs, i, i+1)
			}
		}
		heap.Init(&c.runs)
	} else if len(c.runs) > 0 {
		r := c.runs[0]
		if ok, err := r.next(); err != nil {
			c.err = err
			return false
		} else if ok {
			heap.Fix(&c.runs, 0)
		} else {
			heap.Pop(&c.runs)
		}
	}
	if len(c.runs) == 0 {
		c.cur = Entry{}
		return false
	}
	c.cur = c.runs[0].head
	return true
}

// Entry is the entry Next moved to.
func (c *Cursor) Entry() Entry { return c.cur }

// Err is the error that stopped Next, nil at the end of the entries.
func (c *Cursor) Err() error { return c.err }

// runReader reads one sorted run: from memory, or from the temporary file.
type runReader struct {
	mem  []Entry
	r    *bufio.Reader
	head Entry
}

func (r *runReader) next() (bool, error) {
	if r.r == nil {
		if len(r.mem) == 0 {
			return false, nil
		}
		r.head, r.mem = r.mem[0], r.mem[1:]
		return true, nil
	}
	fail := func(err error) (bool, error) {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("zip index: reading a run back: %w", err)
	}
	index, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return fail(err)
	}
	n, err := binary.ReadUvarint(r.r)
	if err != nil {
		return fail(err)
	}
	if n > 0xffff { // a zip name's length is 16 bits: the file is not what spill wrote
		return fail(fmt.Errorf("a name of %d bytes", n))
	}
	name := make([]byte, n)
	if _, err := io.ReadFull(r.r, name); err != nil {
		return fail(err)
	}
	var v [6]uint64
	for i := range v {
		if v[i], err = binary.ReadUvarint(r.r); err != nil {
			return fail(err)
		}
	}
	r.head = Entry{Index: int(index), Name: string(name), Flags: uint16(v[0]), Method: uint16(v[1]), CRC32: uint32(v[2]),
		CompressedSize: int64(v[3]), UncompressedSize: v[4], Offset: int64(v[5])}
	return true, nil
}

// merge is a heap of runs by their next entry.
type merge []*runReader

func (m merge) Len() int           { return len(m) }
func (m merge) Less(i, j int) bool { return compare(m[i].head, m[j].head) < 0 }
func (m merge) Swap(i, j int)      { m[i], m[j] = m[j], m[i] }
func (m *merge) Push(x any)        { *m = append(*m, x.(*runReader)) }
func (m *merge) Pop() any {
	old := *m
	r := old[len(old)-1]
	*m = old[:len(old)-1]
	return r
}
