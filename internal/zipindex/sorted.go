package zipindex

import (
	"bufio"
	"cmp"
	"encoding/binary"

	"deidcorpus/internal/extsort"
)

// sortRun is how many entries Sort holds before it writes them, sorted, to
// its temporary file: about 6 MB with names of 40 bytes.
const sortRun = 1 << 16

// Sorted is an archive's entries in name order (entries of one name in
// central directory order), for a reader that must meet them so, as one
// that compares them with a sorted list does. Memory holds one run of
// entries; the others wait in a temporary file, each sorted, and are merged
// as a Cursor reads them back, with a 32 KiB buffer per run (16 runs for a
// million entries): see extsort.
type Sorted struct {
	s *extsort.Sorter[Entry]
}

// Sort walks the central directory (see Walk, whose errors it returns) and
// sorts its entries by name. Close the Sorted to remove its temporary file.
func (z *Reader) Sort() (*Sorted, error) { return z.sort(sortRun) }

func (z *Reader) sort(runSize int) (*Sorted, error) {
	s := &Sorted{extsort.New("zip index", runSize, entryOrder)}
	if err := z.Walk(s.s.Add); err != nil {
		s.Close()
		return nil, err
	}
	s.s.Sort() // so that Cursors can be made and read concurrently
	return s, nil
}

func compare(a, b Entry) int {
	return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Index, b.Index))
}

// entryOrder sorts entries by name and writes them to the temporary file
// as varints.
var entryOrder = extsort.Order[Entry]{
	Compare: compare,
	Append: func(buf []byte, e Entry) []byte {
		buf = binary.AppendUvarint(buf, uint64(e.Index))
		buf = extsort.AppendString(buf, e.Name)
		for _, v := range []uint64{uint64(e.Flags), uint64(e.Method), uint64(e.CRC32),
			uint64(e.CompressedSize), e.UncompressedSize, uint64(e.Offset)} {
			buf = binary.AppendUvarint(buf, v)
		}
		return buf
	},
	Decode: func(r *bufio.Reader) (Entry, error) {
		index, err := binary.ReadUvarint(r)
		if err != nil {
			return Entry{}, err
		}
		name, err := extsort.ReadString(r, 0xffff) // a zip name's length is 16 bits
		if err != nil {
			return Entry{}, err
		}
		var v [6]uint64
		for i := range v {
			if v[i], err = binary.ReadUvarint(r); err != nil {
				return Entry{}, err
			}
		}
		return Entry{Index: int(index), Name: name, Flags: uint16(v[0]), Method: uint16(v[1]), CRC32: uint32(v[2]),
			CompressedSize: int64(v[3]), UncompressedSize: v[4], Offset: int64(v[5])}, nil
	},
}

// Len is how many entries there are.
func (s *Sorted) Len() int { return s.s.Len() }

// Close removes the temporary file.
func (s *Sorted) Close() error { return s.s.Close() }

// Cursor starts a pass over the entries in name order; a Sorted gives as
// many as its reader needs.
func (s *Sorted) Cursor() *Cursor { return &Cursor{s.s.Cursor()} }

// Cursor reads the entries of a Sorted in name order:
//
//	c := s.Cursor()
//	for c.Next() {
//		e := c.Entry()
//	}
//	if err := c.Err(); err != nil {
type Cursor struct{ c *extsort.Cursor[Entry] }

// Next moves to the next entry: false after the last one, or on an error.
func (c *Cursor) Next() bool { return c.c.Next() }

// Entry is the entry Next moved to.
func (c *Cursor) Entry() Entry { return c.c.Value() }

// Err is the error that stopped Next, nil at the end of the entries.
func (c *Cursor) Err() error { return c.c.Err() }
