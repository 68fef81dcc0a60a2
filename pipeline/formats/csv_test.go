package formats

import (
	"strings"
	"testing"
	"time"

	"deidcorpus/pipeline"
)

// TestCSVRoundTrip writes notes as CSV, through Stream in batches too, and
// reads them back the same, span ids and comments included.
func TestCSVRoundTrip(t *testing.T) {
	docs := sampleDocs()
	docs[0].Spans[0].ID = "P0"
	files, err := WriteCSV(docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || !strings.HasPrefix(string(files[0].Data), "id,patient,record,date,type,split,text,spans\n") {
		t.Fatalf("want one file with a header row:\n%s", files[0].Data)
	}
	got, err := ReadCSV(files, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameDocs(t, got, docs, compareOpts{ids: true, comments: true, meta: true})

	f, _ := Lookup("csv")
	var c Collector
	s := NewStream(f, c.Create)
	for _, d := range docs {
		if err := s.Write([]pipeline.Document{d}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if streamed := c.Files(); len(streamed) != 1 || string(streamed[0].Data) != string(files[0].Data) {
		t.Errorf("streamed in batches:\n%s\nwant\n%s", streamed[0].Data, files[0].Data)
	}
}

// TestCSVOfAnEHR reads an EHR's export: its own column names (--columns),
// columns the format does not know, SQL dates, quoted multi-line text, a
// byte-order mark; a "\r\n" note comes back with "\n" and its spans moved.
func TestCSVOfAnEHR(t *testing.T) {
	data := "\ufeffNOTE_ID,PERSON_ID,NOTE_DATE,NOTE_TITLE,NOTE_TEXT,PROVIDER\n" +
		`1001,77,2067-11-24 10:30:00,Discharge summary,"Seen by ""Dr. Ana""` + "\r\non 11/24/67\",12\n" +
		"1002,77,2067-11-25,Progress,Stable.,12\n"
	cols, err := ParseColumns("id=NOTE_ID, patient=person_id,date=note_date,type=note_title,text=note_text")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := ReadCSV([]File{{Name: "ehr.csv", Data: []byte(data)}}, ReadOptions{Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].ID != "1001" || docs[0].Patient != "77" || docs[1].Patient != "77" || docs[0].NoteType != "Discharge summary" ||
		docs[0].Text != "Seen by \"Dr. Ana\"\non 11/24/67" || !docs[0].Created.Equal(time.Date(2067, 11, 24, 10, 30, 0, 0, time.UTC)) {
		t.Fatalf("got %+v", docs)
	}

	crlf := mark(pipeline.Document{ID: "1-01", Patient: "1", RecordOrder: 1, Text: "Name:\r\nJohn Smith\r\nDate: 2067"},
		"John Smith", "NAME/PATIENT", "2067", "DATE/DATE")
	files, err := WriteCSV([]pipeline.Document{crlf})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadCSV(files, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := mark(pipeline.Document{ID: "1-01", Patient: "1", RecordOrder: 1, Text: "Name:\nJohn Smith\nDate: 2067"},
		"John Smith", "NAME/PATIENT", "2067", "DATE/DATE")
	sameDocs(t, back, []pipeline.Document{want}, compareOpts{})
}

func TestCSVErrors(t *testing.T) {
	head := "id,text,spans,split,date\n"
	cases := []struct {
		name, row, field, msg string
	}{
		{"bare quote", `a,Ann "x",,,`, "byte", `bare " in non-quoted-field`},
		{"field count", `a,Ann`, "", "wrong number of fields"},
		{"bad spans", `a,Ann,"[{""start"":0}]",,`, "spans", "span 0: want start, end and label"},
		{"broken spans", `a,Ann,"[{",,`, "spans", "want a JSON list"},
		{"past the text", `a,Ann,"[{""start"":0,""end"":9,""label"":""X""}]",,`, "tag X [0:9]", "past the end"},
		{"split", `a,Ann,,trian,`, "split", `unknown split "trian"`},
		{"date", `a,Ann,,,yesterday`, "date", `"yesterday" is neither`},
		{"duplicate", `x,Bob,,,`, "id", `document id "x" also on line 2`},
		{"utf-8", "a,\xff,,,", "text", "invalid UTF-8"},
	}
	for _, c := range cases {
		docs, err := ReadCSV([]File{{Name: "n.csv", Data: []byte(head + "x,Ann,,,\n" + c.row + "\n")}}, ReadOptions{})
		wantError(t, c.name, docs, err, "n.csv", 3, c.field, c.msg)
	}
	docs, err := ReadCSV([]File{{Name: "n.csv", Data: []byte("id,body\n1,x\n")}}, ReadOptions{})
	wantError(t, "no text", docs, err, "n.csv", 1, "text", "no text column in the header (name it with --columns text=HEADER; the header has: id, body)")
	docs, err = ReadCSV([]File{{Name: "n.csv", Data: []byte("id,body\n1,x\n")}}, ReadOptions{Columns: map[string]string{"text": "note_text"}})
	wantError(t, "named column missing", docs, err, "n.csv", 1, "note_text", "which --columns names for text")
	docs, err = ReadCSV([]File{{Name: "n.csv", Data: []byte("id,text\n1,\"" + strings.Repeat("x", 9000) + "\"\n")}}, ReadOptions{MaxNote: 1000})
	wantError(t, "long record", docs, err, "n.csv", 2, "", "record larger than the limit of 1000 bytes per note")
	for _, bad := range []string{"id", "id=", "name=x", "id=a,id=b"} {
		if _, err := ParseColumns(bad); err == nil {
			t.Errorf("ParseColumns(%q) accepted", bad)
		}
	}
}

func FuzzCSV(f *testing.F) {
	f.Add("id,patient,text,spans\n1-01,1,Ann saw Bob,\"[{\"\"start\"\":0,\"\"end\"\":3,\"\"label\"\":\"\"PATIENT\"\"}]\"\n")
	f.Add("text\n\"a\r\nb\"\n,\n")
	f.Add("id,text,date,record\n7,x,2067-01-01 10:00:00,3\n")
	csv, _ := Lookup("csv")
	f.Fuzz(func(t *testing.T, data string) {
		docs, err := ReadCSV([]File{{Name: "f.csv", Data: []byte(data)}}, ReadOptions{})
		if err != nil || strings.Contains(data, "\r") {
			return // "\r\n" comes back as "\n": checked by TestCSVOfAnEHR
		}
		checkReadable(t, csv, docs, ReadOptions{}, true)
	})
}
