package zipindex

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n int64
}

func (c *countingReader) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(b, off)
	c.n += int64(n)
	return n, err
}

// Any bytes give entries or an error, never a panic, and the work is bounded
// by the input: the index reads each byte of the archive at most twice (its
// end, then its central directory), gives at most one entry per 46 bytes,
// and Sort gives back what Walk gave, in name order.
func FuzzRead(f *testing.F) {
	f.Add(written(f, zip.Store, "a.txt", "hello", "dir/", "", "dir/b.txt", "world"))
	f.Add(written(f, zip.Deflate, "MANIFEST", "abc  gold/1.xml\n", "gold/1.xml", "<doc>Lee</doc>"))
	f.Add(written(f, zip.Store))
	f.Add(build(f, true, "a.txt", "stored", "b.txt", "deflated deflated deflated"))
	for _, name := range []string{"plain.zip", "z64.zip", "stream.zip"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cr := &countingReader{r: bytes.NewReader(data)}
		z, err := NewReader(cr, int64(len(data)))
		if err != nil {
			return
		}
		var walked []Entry
		walkErr := z.Walk(func(e Entry) error {
			walked = append(walked, e)
			return nil
		})
		if limit := 2*int64(len(data)) + dir64LocLen + dir64EndLen; cr.n > limit {
			t.Fatalf("read %d bytes of a %d-byte archive", cr.n, len(data))
		}
		if len(walked) > len(data)/dirHeaderLen {
			t.Fatalf("%d entries in %d bytes", len(walked), len(data))
		}
		for _, e := range walked {
			if e.Offset < 0 || e.CompressedSize < 0 || e.Offset+e.CompressedSize > int64(len(data)) {
				t.Fatalf("entry outside the archive: %+v", e)
			}
			rc, err := z.Open(e)
			if err != nil {
				continue
			}
			// Deflate can expand a byte a thousandfold: read a bounded part.
			io.Copy(io.Discard, io.LimitReader(rc, 1<<20))
			rc.Close()
		}
		if walkErr != nil {
			return
		}
		s, err := z.Sort()
		if err != nil {
			t.Fatalf("Walk read the archive, Sort did not: %v", err)
		}
		defer s.Close()
		c := s.Cursor()
		n := 0
		var prev Entry
		for ; c.Next(); n++ {
			if n > 0 && compare(prev, c.Entry()) >= 0 {
				t.Fatalf("%q, then %q", prev.Name, c.Entry().Name)
			}
			prev = c.Entry()
		}
		if c.Err() != nil || n != len(walked) || s.Len() != n {
			t.Fatalf("sorted %d (Len %d) of %d entries: %v", n, s.Len(), len(walked), c.Err())
		}
	})
}
