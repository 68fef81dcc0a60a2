package formats

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"deidcorpus/internal/zipbomb"
	"deidcorpus/pipeline"
)

// zeros gives zeros without end, counting what it gave.
type zeros struct{ n *int64 }

func (z zeros) Read(p []byte) (int, error) {
	clear(p)
	*z.n += int64(len(p))
	return len(p), nil
}

// countingAt counts the bytes read of an archive.
type countingAt struct {
	r io.ReaderAt
	n int64
}

func (c *countingAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

func scanErr(t *testing.T, format string, src Source, opt ReadOptions) string {
	t.Helper()
	f, err := Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Scan(src, opt, func(pipeline.Document) error { return nil })
	if err == nil {
		t.Fatal("read with no error")
	}
	return err.Error()
}

// TestZipBombRefusedUnread: an archive member that says it decompresses to
// more than a note may take is refused before any of it is decompressed
// (archive/zip refuses a member that gives more than it says, so what it
// says is a bound), naming the member, the limit and how to raise it.
func TestZipBombRefusedUnread(t *testing.T) {
	var b bytes.Buffer
	if err := zipbomb.Write(&b, "100-01.xml", 1<<30); err != nil {
		t.Fatal(err)
	}
	at := &countingAt{r: bytes.NewReader(b.Bytes())}
	got := scanErr(t, "i2b2", ZipAt("bomb.zip", at, int64(b.Len())), ReadOptions{})
	want := "bomb.zip:100-01.xml: larger than the limit of 4 MiB per note (raise it with --max-note-size if the note is real)"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if at.n > 64<<10 {
		t.Errorf("read %d bytes of a %d-byte archive: the member was decompressed", at.n, b.Len())
	}
}

// TestNoteLimitRunsAsItReads: a file that does not say how long it is (or
// says less) is refused as its reading crosses the limit, having given at
// most a read's buffer past it, whether it is read whole (a file of one
// note) or a line at a time (JSON Lines).
func TestNoteLimitRunsAsItReads(t *testing.T) {
	const max = 1 << 20
	for _, tc := range []struct{ format, name, want string }{
		{"i2b2", "100-01.xml", "endless.xml: larger than the limit of 1 MiB per note"},
		{"mimic", "100-01.txt", "endless.txt: larger than the limit of 1 MiB per note"},
		{"jsonl", "notes.jsonl", "endless.jsonl:1: line larger than the limit of 1 MiB per note"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var n int64
			where := "endless" + tc.name[strings.LastIndexByte(tc.name, '.'):]
			f := File{Name: tc.name, Path: where, open: func() (io.ReadCloser, error) { return io.NopCloser(zeros{&n}), nil }}
			got := scanErr(t, tc.format, Files([]File{f}), ReadOptions{MaxNote: max})
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q...", got, tc.want)
			}
			if n > 3*max {
				t.Errorf("read %d bytes past a limit of %d", n, max)
			}
		})
	}
}

// TestNoteLimitOfManyNotes: a file of many notes is bounded per document:
// the note over the limit is named.
func TestNoteLimitOfManyNotes(t *testing.T) {
	doc := func(id string, n int) string {
		return `<RECORD ID="` + id + `"><TEXT>` + strings.Repeat("a", n) + `</TEXT></RECORD>`
	}
	f := File{Name: "corpus.xml", Data: []byte("<ROOT>" + doc("1-01", 100) + doc("1-02", 2000) + "</ROOT>")}
	got := scanErr(t, "i2b2-2006", Files([]File{f}), ReadOptions{MaxNote: 1000})
	want := "document 1-02: its text is 2000 bytes, over the limit of 1000 bytes per note (raise it with --max-note-size if the note is real)"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// A note file in memory is held to the limit too.
	note := File{Name: "100-01.txt", Data: bytes.Repeat([]byte("a"), 2000)}
	if got := scanErr(t, "mimic", Files([]File{note}), ReadOptions{MaxNote: 1000}); !strings.HasPrefix(got, "100-01.txt: larger than the limit of 1000 bytes") {
		t.Errorf("got %q", got)
	}
}

// TestExportPartsImportBack: a format of many notes a file is exported in
// parts (Stream) that its import reads back whole.
func TestExportPartsImportBack(t *testing.T) {
	if int64(partSize)+64<<20 > maxManyNotes {
		t.Errorf("parts of %d bytes (and a batch past it) against files of many notes read up to %d", partSize, maxManyNotes)
	}
}
