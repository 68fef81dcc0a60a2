package formats

import (
	"fmt"
	"slices"
	"testing"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
)

func TestBRATRoundTrip(t *testing.T) {
	docs := sampleDocs()
	files, err := WriteBRAT(docs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadBRAT(files, i2b2Labels)
	if err != nil {
		t.Fatal(err)
	}
	sameDocs(t, got, docs, compareOpts{comments: true})
	// The street crosses a line break: BRAT fragments, read back as one span.
	if ann := string(files[5].Data); ann[:33] != "T1\tSTREET 9 16;17 23\t12 Main Stre" {
		t.Errorf("street written as %q", ann)
	}
	// Written ids are BRAT ids, and kept on a second round trip.
	again, err := WriteBRAT(got)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadBRAT(again, i2b2Labels)
	if err != nil {
		t.Fatal(err)
	}
	sameDocs(t, back, got, compareOpts{ids: true, comments: true})
}

// TestMEDDOCANBRATEqualsXML reads MEDDOCAN dev from its BRAT files and from
// its XML files: with the MEDDOCAN tag set supplying BRAT's missing
// categories, documents and spans (ids, offsets, labels, text) are identical.
func TestMEDDOCANBRATEqualsXML(t *testing.T) {
	brat := shared.Path(t, "meddocan/corpus/dev/brat")
	xmlDir := shared.Path(t, "meddocan/corpus/dev/xml")
	opt := ReadOptions{Label: func(c, t string) (string, string, error) { return phi.Normalize(phi.MEDDOCAN(), c, t) }}
	read := func(dir string, r func([]File, ReadOptions) ([]pipeline.Document, error)) []pipeline.Document {
		files, err := ReadPaths(dir)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := r(files, opt)
		if err != nil {
			t.Fatal(err)
		}
		return docs
	}
	fromBRAT := read(brat, ReadBRAT)
	fromXML := read(xmlDir, ReadI2B2)
	if len(fromBRAT) != 250 {
		t.Fatalf("%d BRAT documents, want 250", len(fromBRAT))
	}
	sameDocs(t, fromBRAT, fromXML, compareOpts{ids: true, comments: true, meta: true})
	spans := 0
	for _, d := range fromBRAT {
		spans += len(d.Spans)
	}
	if spans != 5801 {
		t.Errorf("%d spans, want 5801 (data/README.md)", spans)
	}
}

func TestBRATChoices(t *testing.T) {
	txt := File{Name: "d/1.txt", Data: []byte("Ann Lee\nSmith saw Bob.")}
	ann := File{Name: "d/1.ann", Data: []byte(
		"T1\tPATIENT 0 7;8 13\tAnn Lee Smith\n" + // fragments split by a line break: one span
			"T2\tDOCTOR 18 21\tBob\n" +
			"R1\tSame Arg1:T1 Arg2:T2\n" + // relations, attributes, events: ignored
			"A1\tNegated T2\n" +
			"E1\tVisit:T2\n" +
			"#1\tAnnotatorNotes T2\tattending\n" +
			"#2\tAnnotatorNotes R1\tno span to hold it\n")}
	docs, err := ReadBRAT([]File{txt, ann}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := docs[0]
	if d.ID != "1" || len(d.Spans) != 2 || d.Spans[0].Text != "Ann Lee\nSmith" || d.Spans[1].Comment != "attending" || d.Spans[1].Category != "DOCTOR" {
		t.Errorf("got %+v", d)
	}
}

func TestBRATErrors(t *testing.T) {
	txt := File{Name: "c/9.txt", Data: []byte("Ann saw Bob today.")}
	cases := []struct {
		name, ann  string
		line       int
		field, msg string
	}{
		{name: "past the text", ann: "T1\tPATIENT 0 3\tAnn\nT2\tDOCTOR 8 40\tBob\n", line: 2, field: "T2", msg: "past the end of the text"},
		{name: "missing label", ann: "T1\t 0 3\tAnn\n", line: 1, field: "T1", msg: "missing label"},
		{name: "text mismatch", ann: "T1\tPATIENT 0 3\tAnne\n", line: 1, field: "T1", msg: "does not match"},
		{name: "discontinuous", ann: "T1\tPATIENT 0 3;8 11\tAnn Bob\n", line: 1, field: "T1", msg: "discontinuous span"},
		{name: "bad offsets", ann: "T1\tPATIENT zero 3\tAnn\n", line: 1, field: "T1", msg: "not integers"},
		{name: "no offsets", ann: "T1\tPATIENT 0 3\tAnn\nT2\tDOCTOR\tBob\n", line: 2, field: "T2", msg: "missing offsets: want TYPE START END"},
		{name: "one character between fragments", ann: "T1\tPATIENT 0 2;3 7\tAn saw\n", line: 1, field: "T1", msg: "separated by 1 character of text"},
		{name: "overlap, later start first", ann: "T1\tDOCTOR 4 11\tsaw Bob\nT2\tPATIENT 0 7\tAnn saw\n", line: 2, field: "T2", msg: "overlaps T1 (DOCTOR) [4:11]"},
		{name: "no tab", ann: "T1 PATIENT 0 3 Ann\n", line: 1, msg: "want an id, a tab"},
		{name: "unknown kind", ann: "X1\tfoo\n", line: 1, field: "X1", msg: "unknown annotation kind"},
		{name: "duplicate id", ann: "T1\tPATIENT 0 3\tAnn\nT1\tDOCTOR 8 11\tBob\n", line: 2, field: "T1", msg: "used twice"},
		{name: "note on nothing", ann: "#1\tAnnotatorNotes T7\thm\n", line: 1, field: "T7", msg: "does not exist"},
		{name: "overlap", ann: "T1\tPATIENT 0 7\tAnn saw\nT2\tDOCTOR 4 11\tsaw Bob\n", line: 2, field: "T2", msg: "overlaps"},
	}
	for _, c := range cases {
		docs, err := ReadBRAT([]File{txt, {Name: "c/9.ann", Data: []byte(c.ann)}}, ReadOptions{})
		wantError(t, c.name, docs, err, "c/9.ann", c.line, c.field, c.msg)
	}
	docs, err := ReadBRAT([]File{{Name: "c/8.ann", Data: []byte("T1\tX 0 1\tA\n")}}, ReadOptions{})
	wantError(t, "orphan .ann", docs, err, "c/8.ann", 0, "", "without its text file 8.txt")
	docs, err = ReadBRAT([]File{txt, {Name: "c/9.ann", Data: []byte("T1\tNOPE 0 3\tAnn\n")}}, i2b2Labels)
	wantError(t, "unknown label", docs, err, "c/9.ann", 1, "T1", `unknown type "NOPE"`)
}

func FuzzBRAT(f *testing.F) {
	f.Add("Ann saw Bob.", "T1\tPATIENT 0 3\tAnn\n#1\tAnnotatorNotes T1\tx\n")
	f.Add("Ann\nLee", "T1\tPATIENT 0 3;4 7\tAnn Lee\nR1\tRel Arg1:T1 Arg2:T1\n")
	f.Add("País", "T1\tCOUNTRY 0 4\tPaís\n")
	f.Add("x", "T1\tX 0 9\tx\n")
	brat, _ := Lookup("brat")
	f.Fuzz(func(t *testing.T, txt, ann string) {
		docs, err := ReadBRAT([]File{{Name: "f.txt", Data: []byte(txt)}, {Name: "f.ann", Data: []byte(ann)}}, ReadOptions{})
		if err != nil {
			return
		}
		checkReadable(t, brat, docs, ReadOptions{}, false)
	})
}

// TestBRATScanStreams reads a BRAT source through Scan as an import does: a
// document is given as soon as its two files have come (before the next
// document's files are read), whatever order the pair's files come in; a
// text without annotations is a document without spans, given at the end
// from a second reading of the source, not held meanwhile (issue 60: 3,000
// notes of 3 MiB without .ann files were all held); and an annotation file
// without its text fails.
func TestBRATScanStreams(t *testing.T) {
	brat, err := Lookup("brat")
	if err != nil {
		t.Fatal(err)
	}
	files := []File{
		{Name: "d/1.ann", Data: []byte("T1\tPATIENT 0 3\tAnn\n")},
		{Name: "d/1.txt", Data: []byte("Ann saw Bob.")},
		{Name: "d/2.txt", Data: []byte("Nothing here.")},
		{Name: "d/3.txt", Data: []byte("Bob saw Ann.")}, // its annotations come after it
		{Name: "d/3.ann", Data: []byte("T1\tDOCTOR 0 3\tBob\n")},
		{Name: "d/notes.md", Data: []byte("not read")},
	}
	var events []string
	src := func(yield func(File) error) error {
		for _, f := range files {
			events = append(events, "read "+f.Name)
			if err := yield(f); err != nil {
				return err
			}
		}
		return nil
	}
	var docs []pipeline.Document
	err = brat.Scan(src, ReadOptions{}, func(d pipeline.Document) error {
		events = append(events, "document "+d.ID)
		docs = append(docs, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"read d/1.ann", "read d/1.txt", "document 1", "read d/2.txt",
		"read d/3.txt", "read d/3.ann", "document 3", "read d/notes.md",
		// The text without annotations, read again rather than held.
		"read d/1.ann", "read d/1.txt", "read d/2.txt", "document 2"}
	if !slices.Equal(events, want) {
		t.Errorf("events:\n%v\nwant\n%v", events, want)
	}
	if len(docs) != 3 || len(docs[0].Spans) != 1 || docs[1].Spans[0].Type != "DOCTOR" || len(docs[2].Spans) != 0 {
		t.Errorf("documents %+v", docs)
	}

	files = append(files, File{Name: "d/4.ann", Data: []byte("T1\tX 0 1\tA\n")})
	err = brat.Scan(src, ReadOptions{}, func(pipeline.Document) error { return nil })
	wantError(t, "orphan .ann", nil, err, "d/4.ann", 0, "", "without its text file 4.txt")

	files = []File{{Name: "d/1.txt", Data: []byte("a")}, {Name: "d/1.txt", Data: []byte("b")}}
	err = brat.Scan(src, ReadOptions{}, func(pipeline.Document) error { return nil })
	wantError(t, "a file twice", nil, err, "d/1.txt", 0, "", "the same file as d/1.txt")

	// Annotation files waiting for their texts are bounded (one 4 MiB
	// buffer stands for each of them).
	ann := make([]byte, 4<<20)
	files = nil
	for i := range 17 {
		files = append(files, File{Name: fmt.Sprintf("ann/%02d.ann", i), Data: ann})
	}
	err = brat.Scan(src, ReadOptions{}, func(pipeline.Document) error { return nil })
	wantError(t, "annotation files waiting", nil, err, "ann/16.ann", 0, "", "more than 64 MiB of annotation files wait for their text files")
}
