package zipindex

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// written writes files (name, content) with archive/zip, each with method,
// and returns the archive.
func written(t testing.TB, method uint16, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: files[i], Method: method})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, files[i+1])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func open(t testing.TB, data []byte) *Reader {
	t.Helper()
	z, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func entries(t testing.TB, z *Reader) []Entry {
	t.Helper()
	var es []Entry
	if err := z.Walk(func(e Entry) error { es = append(es, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return es
}

func content(z *Reader, e Entry) (string, error) {
	rc, err := z.Open(e)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}

// agrees checks that the package reads data as archive/zip does: the same
// entries in the same order, with the same fields and content.
func agrees(t *testing.T, data []byte) []Entry {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	z := open(t, data)
	es := entries(t, z)
	if len(es) != len(zr.File) {
		t.Fatalf("%d entries, archive/zip reads %d", len(es), len(zr.File))
	}
	for i, f := range zr.File {
		e := es[i]
		if e.Index != i || e.Name != f.Name || e.Method != f.Method || e.CRC32 != f.CRC32 ||
			uint64(e.CompressedSize) != f.CompressedSize64 || e.UncompressedSize != f.UncompressedSize64 {
			t.Errorf("entry %d: %+v, archive/zip reads %+v", i, e, f.FileHeader)
		}
		if e.IsDir() != f.FileInfo().IsDir() {
			t.Errorf("%s: IsDir %v, archive/zip says %v", e.Name, e.IsDir(), f.FileInfo().IsDir())
		}
		if e.IsDir() {
			continue
		}
		got, err := content(z, e)
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		want, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s: content %q, archive/zip reads %q", e.Name, got, want)
		}
		if off, err := f.DataOffset(); err == nil && off < e.Offset+fileHeaderLen {
			t.Errorf("%s: content at %d, before its local header's end (%d + %d)", e.Name, off, e.Offset, fileHeaderLen)
		}
	}
	return es
}

// Archives written by archive/zip and by Info-ZIP (testdata/README.md), zip64
// among them, read as archive/zip reads them.
func TestReadsAsArchiveZip(t *testing.T) {
	long := strings.Repeat("the patient was seen by Dr. Lee on 3/4. ", 500)
	for name, data := range map[string][]byte{
		"stored":  written(t, zip.Store, "a.txt", "hello", "empty", "", "dir/", "", "dir/b.txt", long),
		"deflate": written(t, zip.Deflate, "a.txt", "hello", "empty", "", "dir/b.txt", long),
		"none":    written(t, zip.Store),
	} {
		t.Run(name, func(t *testing.T) { agrees(t, data) })
	}
	for _, name := range []string{"plain.zip", "z64.zip", "stream.zip"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			es := agrees(t, data)
			if name == "z64.zip" && (!open(t, data).zip64 || es[4].Name != "d/a.txt" || es[4].UncompressedSize != 14) {
				t.Errorf("zip64 end record or extra field not read: %+v", es)
			}
		})
	}
}

// An archive built by hand: one stored and one deflated file, the sizes and
// offsets given as the zip64 extra field gives them (the header's fields
// saturated, 0xFFFFFFFF) if zip64, with zip64 end records.
func build(t testing.TB, zip64 bool, files ...string) []byte {
	t.Helper()
	var out, dir bytes.Buffer
	le := binary.LittleEndian
	for i := 0; i+1 < len(files); i += 2 {
		name, text := files[i], files[i+1]
		method, data := Store, []byte(text)
		if i%4 == 2 {
			method = Deflate
			var buf bytes.Buffer
			fw, _ := flate.NewWriter(&buf, flate.BestCompression)
			fw.Write(data)
			fw.Close()
			data = buf.Bytes()
		}
		crc := crc32.ChecksumIEEE([]byte(text))
		offset := out.Len()
		var local [fileHeaderLen]byte
		le.PutUint32(local[0:], fileHeaderSig)
		le.PutUint16(local[4:], 45)
		le.PutUint16(local[8:], method)
		le.PutUint32(local[14:], crc)
		le.PutUint32(local[18:], uint32(len(data)))
		le.PutUint32(local[22:], uint32(len(text)))
		le.PutUint16(local[26:], uint16(len(name)))
		out.Write(local[:])
		out.WriteString(name)
		out.Write(data)

		var extra []byte
		usize, csize, off := uint32(len(text)), uint32(len(data)), uint32(offset)
		if zip64 {
			// Another field first, as real archives have (a timestamp).
			extra = le.AppendUint16(extra, 0x5455)
			extra = le.AppendUint16(extra, 5)
			extra = append(extra, 1, 0, 0, 0, 0)
			extra = le.AppendUint16(extra, zip64ExtraID)
			extra = le.AppendUint16(extra, 24)
			extra = le.AppendUint64(extra, uint64(len(text)))
			extra = le.AppendUint64(extra, uint64(len(data)))
			extra = le.AppendUint64(extra, uint64(offset))
			usize, csize, off = 0xffffffff, 0xffffffff, 0xffffffff
		}
		var h [dirHeaderLen]byte
		le.PutUint32(h[0:], dirHeaderSig)
		le.PutUint16(h[4:], 45)
		le.PutUint16(h[6:], 45)
		le.PutUint16(h[10:], method)
		le.PutUint32(h[16:], crc)
		le.PutUint32(h[20:], csize)
		le.PutUint32(h[24:], usize)
		le.PutUint16(h[28:], uint16(len(name)))
		le.PutUint16(h[30:], uint16(len(extra)))
		le.PutUint32(h[42:], off)
		dir.Write(h[:])
		dir.WriteString(name)
		dir.Write(extra)
	}
	n := len(files) / 2
	start := out.Len()
	out.Write(dir.Bytes())
	records, size, offset := uint16(n), uint32(dir.Len()), uint32(start)
	if zip64 {
		end64 := out.Len()
		var e [dir64EndLen]byte
		le.PutUint32(e[0:], dir64EndSig)
		le.PutUint64(e[4:], dir64EndLen-12)
		le.PutUint16(e[12:], 45)
		le.PutUint16(e[14:], 45)
		le.PutUint64(e[24:], uint64(n))
		le.PutUint64(e[32:], uint64(n))
		le.PutUint64(e[40:], uint64(dir.Len()))
		le.PutUint64(e[48:], uint64(start))
		out.Write(e[:])
		var l [dir64LocLen]byte
		le.PutUint32(l[0:], dir64LocSig)
		le.PutUint64(l[8:], uint64(end64))
		le.PutUint32(l[16:], 1)
		out.Write(l[:])
		records, size, offset = 0xffff, 0xffffffff, 0xffffffff
	}
	var e [dirEndLen]byte
	le.PutUint32(e[0:], dirEndSig)
	le.PutUint16(e[8:], records)
	le.PutUint16(e[10:], records)
	le.PutUint32(e[12:], size)
	le.PutUint32(e[16:], offset)
	out.Write(e[:])
	return out.Bytes()
}

// The zip64 extra field gives sizes and offsets the header saturates, and
// the zip64 end record the directory's; archive/zip reads the archive alike.
func TestZip64(t *testing.T) {
	long := strings.Repeat("zip64 ", 300)
	files := []string{"a.txt", "stored", "b.txt", long, "c.txt", "again"}
	for _, zip64 := range []bool{false, true} {
		data := build(t, zip64, files...)
		z := open(t, data)
		if z.zip64 != zip64 || z.Len() != 3 {
			t.Fatalf("zip64 %v: read zip64 %v, %d entries", zip64, z.zip64, z.Len())
		}
		es := agrees(t, data)
		if es[1].Method != Deflate || es[1].UncompressedSize != uint64(len(long)) || es[2].Offset == 0 {
			t.Errorf("zip64 %v: %+v", zip64, es)
		}
	}

	// A saturated compressed size the extra field does not give.
	data := build(t, true, files...)
	i := bytes.Index(data, []byte{0x01, 0x00, 24, 0}) // the first entry's zip64 field
	binary.LittleEndian.PutUint16(data[i+2:], 8)      // now gives only the uncompressed size
	err := open(t, data).Walk(func(Entry) error { return nil })
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `zip entry 0 "a.txt": its zip64 extra field ends before its compressed size`) {
		t.Errorf("a short zip64 field: %v", err)
	}
}

// archive/zip writes a zip64 end record once an archive has 65,535 entries.
func TestManyEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 70,000 entries")
	}
	const n = 70_000
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range n {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("f%06d", (i*7919)%n), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	z := open(t, buf.Bytes())
	if !z.zip64 || z.Len() != n {
		t.Fatalf("zip64 %v, %d entries", z.zip64, z.Len())
	}
	s, err := z.Sort()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != n || s.s.Spilled() != 1 {
		t.Errorf("%d entries in %d runs on disk", s.Len(), s.s.Spilled())
	}
	c := s.Cursor()
	k := 0
	for ; c.Next(); k++ {
		if e := c.Entry(); e.Name != fmt.Sprintf("f%06d", k) {
			t.Fatalf("entry %d in name order is %s", k, e.Name)
		}
	}
	if c.Err() != nil || k != n {
		t.Errorf("%d entries, %v", k, c.Err())
	}
}

// Damaged archives give an error that names the entry and the problem.
func TestDamaged(t *testing.T) {
	good := written(t, zip.Store, "a.txt", "hello", "gold/b.xml", "<doc/>")
	le := binary.LittleEndian
	dirEnd := len(good) - dirEndLen
	dirStart := int(le.Uint32(good[dirEnd+16:]))
	for name, c := range map[string]struct {
		damage func([]byte) []byte
		want   string // in the error of NewReader, Walk or reading the entries
		is     error
	}{
		"truncated": {func(b []byte) []byte { return b[:len(b)-10] },
			"no end of central directory record: not a zip archive, or a truncated one", ErrFormat},
		"truncated in the central directory": {func(b []byte) []byte { return append(b[:dirStart+20], b[dirEnd:]...) },
			"runs past its end record", ErrFormat},
		"central directory past the end": {func(b []byte) []byte { le.PutUint32(b[dirEnd+16:], uint32(len(b)+100)); return b },
			fmt.Sprintf("the central directory (offset %d, %d bytes) runs past its end record at offset %d", len(good)+100, dirEnd-dirStart, dirEnd), ErrFormat},
		"central directory offset inside an entry": {func(b []byte) []byte { le.PutUint32(b[dirEnd+16:], uint32(dirStart-1)); return b },
			"zip entry 0: no central directory header", ErrFormat},
		"too few entries": {func(b []byte) []byte { le.PutUint16(b[dirEnd+10:], 3); return b },
			"the central directory holds 2 entries, its end record says 3", ErrFormat},
		"CRC mismatch": {func(b []byte) []byte { b[bytes.Index(b, []byte("<doc/>"))+1] = 'D'; return b },
			`zip entry 1 "gold/b.xml": checksum mismatch: its content's CRC-32 is`, ErrChecksum},
		"local header offset past the entries": {func(b []byte) []byte {
			le.PutUint32(b[dirStart+42:], uint32(dirStart))
			return b
		}, fmt.Sprintf(`zip entry 0 "a.txt": its local header's offset %d is outside the archive's entries`, dirStart), ErrFormat},
		"compressed size past the entries": {func(b []byte) []byte {
			le.PutUint32(b[dirStart+20:], 1<<31)
			return b
		}, `zip entry 0 "a.txt": its 2147483648 compressed bytes from offset 0 run past the archive's entries`, ErrFormat},
		"stored sizes that differ": {func(b []byte) []byte {
			le.PutUint32(b[dirStart+24:], 50)
			return b
		}, `zip entry 0 "a.txt": stored, yet 5 bytes long in the archive and 50 unpacked`, ErrFormat},
		"local name that differs": {func(b []byte) []byte { b[fileHeaderLen] = 'A'; return b },
			`zip entry 0 "a.txt": its local header names another file, "A.txt"`, ErrFormat},
		"no local header": {func(b []byte) []byte { b[0] = 'X'; return b },
			`zip entry 0 "a.txt": no local file header at offset 0`, ErrFormat},
		"unsupported method": {func(b []byte) []byte { le.PutUint16(b[dirStart+10:], 12); return b },
			`zip entry 0 "a.txt": compression method 12: unsupported operation`, errors.ErrUnsupported},
		"encrypted": {func(b []byte) []byte { b[dirStart+8] |= 1; return b },
			`zip entry 0 "a.txt": encrypted`, errors.ErrUnsupported},
		"a comment too long": {func(b []byte) []byte { le.PutUint16(b[dirStart+32:], 0xffff); return b },
			"zip entry 0: its header (65586 bytes with name, extra field and comment) runs past the end of the central directory", ErrFormat},
	} {
		err := readAll(append([]byte(nil), good...), c.damage)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.is) {
			t.Errorf("%s: want an error with %q (%v), got %v", name, c.want, c.is, err)
		}
	}
}

// readAll damages data and reads all of it: the first error.
func readAll(data []byte, damage func([]byte) []byte) error {
	data = damage(data)
	z, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	var first error
	err = z.Walk(func(e Entry) error {
		if _, err := content(z, e); err != nil && first == nil {
			first = err
		}
		return nil
	})
	return cmpOr(err, first)
}

func cmpOr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// A deflated entry whose content is longer or shorter than its header says,
// or cut short.
func TestDeflateSizes(t *testing.T) {
	text := strings.Repeat("deflate ", 100)
	good := written(t, zip.Deflate, "a.txt", text)
	le := binary.LittleEndian
	dirStart := int(le.Uint32(good[len(good)-dirEndLen+16:]))
	for name, c := range map[string]struct {
		damage func([]byte) []byte
		want   string
	}{
		"longer": {func(b []byte) []byte { le.PutUint32(b[dirStart+24:], 10); return b },
			`zip entry 0 "a.txt": its content runs past its declared 10 bytes`},
		"shorter": {func(b []byte) []byte { le.PutUint32(b[dirStart+24:], 1000); return b },
			`zip entry 0 "a.txt": its content ends after 800 of its declared 1000 bytes: unexpected EOF`},
		"cut short": {func(b []byte) []byte { le.PutUint32(b[dirStart+20:], 3); return b },
			`zip entry 0 "a.txt": reading its content: unexpected EOF`},
	} {
		err := readAll(append([]byte(nil), good...), c.damage)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error with %q, got %v", name, c.want, err)
		}
	}
}

// A directory entry with content is refused; one without it, or with
// Deflate's empty stream (2 bytes, as Java writes), is listed.
func TestDirectoryContent(t *testing.T) {
	// archive/zip writes no content for a directory: the entry is written
	// as a file, "gold_", then renamed.
	raw := func(method uint16, data []byte, size uint64) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "gold_", Method: method, CompressedSize64: uint64(len(data)),
			UncompressedSize64: size, CRC32: crc32.ChecksumIEEE(nil)})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		zw.Close()
		return bytes.ReplaceAll(buf.Bytes(), []byte("gold_"), []byte("gold/"))
	}
	err := open(t, raw(Store, []byte("Lee, 3/4"), 8)).Walk(func(Entry) error { return nil })
	if want := `zip entry 0 "gold/": a directory that holds 8 bytes (8 compressed)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("want %q, got %v", want, err)
	}
	for _, data := range [][]byte{raw(Store, nil, 0), raw(Deflate, []byte{3, 0}, 0)} {
		if es := entries(t, open(t, data)); len(es) != 1 || !es[0].IsDir() {
			t.Errorf("%+v", es)
		}
	}
}

// Sort gives the entries in name order, across runs written to the
// temporary file and the one kept in memory, those of one name in central
// directory order; a Sorted gives as many passes as asked.
func TestSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var files []string
	for i := range 200 {
		name := fmt.Sprintf("set%d/%04d.xml", rng.IntN(3), rng.IntN(150))
		files = append(files, name, fmt.Sprint(i))
	}
	data := written(t, zip.Store, files...)
	z := open(t, data)
	want := entries(t, z)
	slices.SortStableFunc(want, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	for _, run := range []int{1, 7, 200, 1000} {
		s, err := z.sort(run)
		if err != nil {
			t.Fatal(err)
		}
		if s.Len() != len(want) {
			t.Errorf("run %d: Len %d", run, s.Len())
		}
		for pass := range 2 {
			var got []Entry
			c := s.Cursor()
			for c.Next() {
				got = append(got, c.Entry())
			}
			if c.Err() != nil || !slices.Equal(got, want) {
				t.Fatalf("run %d, pass %d: %v; %d entries, want %d", run, pass, c.Err(), len(got), len(want))
			}
		}
		e := want[len(want)/2]
		if text, err := content(z, e); err != nil || text != files[2*e.Index+1] {
			t.Errorf("%s: %q, %v", e.Name, text, err)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
}

func ExampleReader_Walk() {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"gold/100-01.xml", "MANIFEST"} {
		w, _ := zw.Create(name)
		io.WriteString(w, "content of "+name)
	}
	zw.Close()

	z, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = z.Walk(func(e Entry) error {
		rc, err := z.Open(e)
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		fmt.Printf("%d %s: %q\n", e.Index, e.Name, b)
		return err
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 0 gold/100-01.xml: "content of gold/100-01.xml"
	// 1 MANIFEST: "content of MANIFEST"
}
