package zipbomb

import (
	"archive/zip"
	"bytes"
	"io"
	"testing"
)

// TestWrite: the member decompresses to its size in zeros, its checksum
// good (archive/zip checks it at the end), from an archive a thousandth of
// that.
func TestWrite(t *testing.T) {
	var b bytes.Buffer
	const size = 8 << 20
	if err := Write(&b, "a.xml", size); err != nil {
		t.Fatal(err)
	}
	if b.Len() > size/500 {
		t.Errorf("archive of %d bytes for %d", b.Len(), size)
	}
	zr, err := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1 || zr.File[0].Name != "a.xml" || zr.File[0].UncompressedSize64 != size {
		t.Fatalf("members %+v", zr.File)
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	if err != nil || len(data) != size || !bytes.Equal(data, make([]byte, size)) {
		t.Fatalf("read %d bytes (%v), want %d zeros", len(data), err, size)
	}
}

// TestMembers: every member decompresses to the unit of text repeated, its
// checksum good, as the tests of the import budget need real notes.
func TestMembers(t *testing.T) {
	unit := bytes.Repeat([]byte("Seen in clinic today, no complaints. "), 1000)
	var b bytes.Buffer
	if err := Members(&b, []string{"a.txt", "b.txt", "c.txt"}, 3*int64(len(unit)), unit); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 3 {
		t.Fatalf("%d members", len(zr.File))
	}
	for _, m := range zr.File {
		rc, err := m.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		if err != nil || !bytes.Equal(data, bytes.Repeat(unit, 3)) {
			t.Fatalf("%s: read %d bytes (%v), want the unit 3 times", m.Name, len(data), err)
		}
	}
}
