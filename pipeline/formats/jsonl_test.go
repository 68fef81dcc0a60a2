package formats

import (
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"deidcorpus/pipeline"
)

func TestJSONLRoundTrip(t *testing.T) {
	docs := sampleDocs()
	docs[0].Spans[0].ID = "P0"
	files, err := WriteJSONL(docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || strings.Count(string(files[0].Data), "\n") != 3 || strings.Contains(string(files[0].Data), `\u003c`) {
		t.Fatalf("want one line per document, HTML unescaped:\n%s", files[0].Data)
	}
	got, err := ReadJSONL(files, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameDocs(t, got, docs, compareOpts{ids: true, comments: true, meta: true})
}

func TestJSONLConventions(t *testing.T) {
	data := strings.Join([]string{
		// spaCy / Prodigy: no id, no patient; extra fields ignored.
		`{"text":"Ann saw Bob","spans":[{"start":0,"end":3,"label":"PATIENT"}],"_input_hash":1,"answer":"accept"}`,
		"",
		// doccano, both layouts, numeric id.
		`{"id":7,"text":"Ann saw Bob","label":[[8,11,"DOCTOR"]]}`,
		`{"id":"100-03","text":"Ann saw Bob","entities":[{"start_offset":0,"end_offset":3,"label":"PATIENT"}],"created":"2067-11-24"}`,
	}, "\n")
	docs, err := ReadJSONL([]File{{Name: "dir/notes.jsonl", Data: []byte(data)}}, i2b2Labels)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 {
		t.Fatalf("%d documents", len(docs))
	}
	if d := docs[0]; d.ID != "notes-1" || d.Patient != "notes" || d.RecordOrder != 1 || d.Spans[0].Label() != "NAME/PATIENT" {
		t.Errorf("spaCy line: %+v", d)
	}
	if d := docs[1]; d.ID != "7" || d.Spans[0].Text != "Bob" || d.Spans[0].Label() != "NAME/DOCTOR" {
		t.Errorf("doccano label line: %+v", d)
	}
	if d := docs[2]; d.Patient != "100" || d.RecordOrder != 3 || d.Created.Year() != 2067 || d.Spans[0].Text != "Ann" {
		t.Errorf("doccano entities line: %+v", d)
	}
}

func TestJSONLErrors(t *testing.T) {
	ok := `{"id":"a","text":"Ann"}`
	cases := []struct {
		name, line, field, msg string
	}{
		{"past the text", `{"id":"b","text":"Ann","spans":[{"start":0,"end":9,"label":"PATIENT"}]}`, "tag PATIENT [0:9]", "past the end"},
		{"missing label", `{"id":"b","text":"Ann","spans":[{"start":0,"end":3}]}`, "spans[0].label", "missing label"},
		{"missing end", `{"id":"b","text":"Ann","spans":[{"start":0,"label":"X"}]}`, "spans[0].end", "missing"},
		{"string offset", `{"id":"b","text":"Ann","spans":[{"start":"0","end":3,"label":"X"}]}`, "spans.start", "want int"},
		{"broken JSON", `{"id":"b","text":"Ann"`, "", "malformed JSON"},
		{"missing text", `{"id":"b"}`, "text", "missing"},
		{"bad created", `{"id":"b","text":"Ann","created":"yesterday"}`, "created", "RFC 3339"},
		{"unknown split", `{"id":"b","text":"Ann","split":"trian"}`, "split", `unknown split "trian" (known: train, dev`},
		{"bad doccano", `{"id":"b","text":"Ann","label":[[0,"3","X"]]}`, "label[0]", "want [start, end"},
		{"two values", `{"id":"b","text":"Ann"} {}`, "", "more than one JSON value"},
		{"span text", `{"id":"b","text":"Ann","spans":[{"start":0,"end":3,"label":"X","text":"Bob"}]}`, "tag X [0:3]", "does not match"},
	}
	for _, c := range cases {
		docs, err := ReadJSONL([]File{{Name: "x.jsonl", Data: []byte(ok + "\n\n" + c.line + "\n")}}, ReadOptions{})
		wantError(t, c.name, docs, err, "x.jsonl", 3, c.field, c.msg)
	}
	docs, err := ReadJSONL([]File{{Name: "x.jsonl", Data: []byte(ok + "\n" + ok + "\n")}}, ReadOptions{})
	wantError(t, "duplicate id", docs, err, "x.jsonl", 2, "id", `document id "a" also on x.jsonl:1`)
}

func FuzzJSONL(f *testing.F) {
	f.Add(`{"id":"1-01","text":"Ann saw Bob","spans":[{"start":0,"end":3,"label":"PATIENT","category":"NAME"}],"created":"2067-11-24"}`)
	f.Add(`{"id":7,"text":"País","label":[[0,4,"COUNTRY"]]}` + "\n" + `{"text":"x","entities":[{"start_offset":0,"end_offset":1,"label":"X"}]}`)
	f.Add(`{"text":"x","spans":[{"start":-1,"end":1,"label":"X"}]}`)
	jsonl, _ := Lookup("jsonl")
	f.Fuzz(func(t *testing.T, data string) {
		docs, err := ReadJSONL([]File{{Name: "f.jsonl", Data: []byte(data)}}, ReadOptions{})
		if err != nil {
			return
		}
		checkReadable(t, jsonl, docs, ReadOptions{}, true)
	})
}

// TestJSONLScanStreams reads a JSON Lines file through Scan a line at a
// time: the first document is given before the file is read to its end; an
// archive member past its limit fails (a zip bomb), streamed or not; and an
// encoding error names its line and byte.
func TestJSONLScanStreams(t *testing.T) {
	jsonl, err := Lookup("jsonl")
	if err != nil {
		t.Fatal(err)
	}
	content := "\ufeff" + `{"id":"1-01","text":"Ann"}` + "\r\n\n" + `{"id":"1-02","text":"Bob","spans":[{"start":0,"end":3,"label":"NAME"}]}` + "\n" + `{"id":"2-01","text":"Cy"}`
	var read int
	file := File{Name: "notes.jsonl", limit: readLimit{1000, memberLimit}, open: func() (io.ReadCloser, error) {
		return io.NopCloser(iotest.OneByteReader(readCounter{strings.NewReader(content), &read})), nil
	}}
	var ids []string
	err = jsonl.Scan(Files([]File{file}), ReadOptions{}, func(d pipeline.Document) error {
		if d.ID == "1-01" && read >= len(content) {
			t.Errorf("the first document was given after the whole file was read")
		}
		ids = append(ids, d.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1-01", "1-02", "2-01"}; !slices.Equal(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}

	bomb := file.within(int64(len(content)-1), "archive member too large")
	err = jsonl.Scan(Files([]File{bomb}), ReadOptions{}, func(pipeline.Document) error { return nil })
	if want := "notes.jsonl: archive member too large"; err == nil || err.Error() != want {
		t.Errorf("past the limit: got %v, want %s", err, want)
	}

	bad := "{\"text\":\"a\"}\n{\"text\":\"\xff\"}\n"
	file.open = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(bad)), nil }
	err = jsonl.Scan(Files([]File{file}), ReadOptions{}, func(pipeline.Document) error { return nil })
	if err == nil || err.Error() != "notes.jsonl:2: invalid UTF-8 at byte 22 (files must be UTF-8)" {
		t.Errorf("got %v", err)
	}
}

type readCounter struct {
	r io.Reader
	n *int
}

func (c readCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += n
	return n, err
}
