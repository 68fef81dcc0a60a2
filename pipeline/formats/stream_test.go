package formats

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
)

// streamed writes docs through a Stream in batches of n and returns the
// files it made.
func streamed(f *Format, docs []pipeline.Document, n int) ([]File, error) {
	var c Collector
	s := NewStream(f, c.Create)
	for start := 0; start < len(docs); start += n {
		if err := s.Write(docs[start:min(start+n, len(docs))]); err != nil {
			return nil, err
		}
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	return c.Files(), nil
}

// A format marked Batched writes a corpus streamed in batches byte for byte
// as it writes it whole; one not marked does not, which is why a stream
// must give it the whole corpus at once.
func TestStreamBatchesEqualWholeWrite(t *testing.T) {
	files, err := ReadPaths(shared.Path(t, "meddocan-i2b2/dev"))
	if err != nil {
		t.Fatal(err)
	}
	meddocan, err := ReadI2B2(files, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Names() {
		f, _ := Lookup(name)
		if f.Write == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			// MEDDOCAN's notes, or what a format can hold: PhysioNet's
			// numeric patients, MIMIC's placeholders without spans.
			var docs []pipeline.Document
			var whole []File
			for _, try := range [][]pipeline.Document{meddocan, sampleDocs(), withoutSpans(meddocan)} {
				if files, err := f.Write(try); err == nil {
					docs, whole = try, files
					break
				}
			}
			if docs == nil {
				t.Fatalf("%s writes none of the test corpora", name)
			}
			got, err := streamed(f, docs, 2)
			if err != nil {
				t.Fatal(err)
			}
			if same := reflect.DeepEqual(got, whole); same != f.Batched {
				t.Fatalf("Batched is %v, but writing %d documents 2 at a time gives the same files: %v", f.Batched, len(docs), same)
			}
			if got, err := streamed(f, nil, 1); err != nil || !reflect.DeepEqual(got, mustWrite(t, f, nil)) {
				t.Fatalf("an empty corpus streams as %v (%v), not as Write(nil)", got, err)
			}
		})
	}
}

func withoutSpans(docs []pipeline.Document) []pipeline.Document {
	out := make([]pipeline.Document, len(docs))
	for i, d := range docs {
		d.Spans = nil
		out[i] = d
	}
	return out
}

func mustWrite(t *testing.T, f *Format, docs []pipeline.Document) []File {
	t.Helper()
	files, err := f.Write(docs)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A document a format cannot hold fails the stream with the format's error.
func TestStreamFormatError(t *testing.T) {
	f, _ := Lookup("jsonl")
	docs := sampleDocs()
	docs[2].ID = ""
	if _, err := streamed(f, docs, 2); err == nil {
		t.Fatal("a document without an id was written")
	}
	f, _ = Lookup("i2b2")
	fail := NewStream(f, func(name string) (io.Writer, error) { return nil, fmt.Errorf("disk full") })
	if err := fail.Write(sampleDocs()); err == nil || err.Error() != "disk full" {
		t.Fatalf("the sink's error is lost: %v", err)
	}
}

// A file that a stream continues past partSize goes on in numbered parts,
// each one a file of the format on its own (a format with Records opens and
// closes each with its Head and Tail), which read back together as the
// corpus written whole.
func TestStreamSplitsBigFilesIntoParts(t *testing.T) {
	defer func(n int) { partSize = n }(partSize)
	partSize = 2000
	files, err := ReadPaths(shared.Path(t, "meddocan-i2b2/dev"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := ReadI2B2(files, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	docs = docs[:40]
	for _, name := range []string{"jsonl", "i2b2-2006"} {
		f, _ := Lookup(name)
		whole, err := f.Write(docs)
		if err != nil {
			t.Fatal(err)
		}
		want, err := f.Read(whole, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		parts, err := streamed(f, docs, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) < 5 {
			t.Fatalf("%s: %d files for 40 notes in parts of 2,000 bytes", name, len(parts))
		}
		var got []pipeline.Document
		for _, p := range parts {
			if len(p.Data) > partSize+20000 {
				t.Errorf("%s: %s is %d bytes", name, p.Name, len(p.Data))
			}
			one, err := f.Read([]File{p}, ReadOptions{})
			if err != nil {
				t.Fatalf("%s: %s alone: %v", name, p.Name, err)
			}
			got = append(got, one...)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the parts read back differ from the corpus written whole", name)
		}
		if parts[1].Name != strings.Replace(parts[0].Name, ".", ".part0002.", 1) {
			t.Errorf("%s: parts named %s, %s", name, parts[0].Name, parts[1].Name)
		}
	}
}
