package formats

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
)

func TestI2B2RoundTripTricky(t *testing.T) {
	doc := pipeline.Document{
		ID: "105-03", Patient: "105", RecordOrder: 3,
		Text: "Line one\r\nDr. Núñez said ]]> is \"odd\" & <fine>\n\tZIP 02114 😀 end",
		Spans: []pipeline.Span{
			{ID: "P0", Start: 14, End: 19, Text: "Núñez", Category: "NAME", Type: "DOCTOR", Comment: "a \"quoted\"\ncomment"},
			{ID: "P1", Text: "02114", Category: "LOCATION", Type: "ZIP"},
		},
	}
	zip := strings.Index(doc.Text, "02114")
	doc.Spans[1].Start = len([]rune(doc.Text[:zip]))
	doc.Spans[1].End = doc.Spans[1].Start + 5
	files, err := WriteI2B2([]pipeline.Document{doc})
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Name != "105-03.xml" {
		t.Fatalf("file name %q", files[0].Name)
	}
	got, err := ReadI2B2(files, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []pipeline.Document{doc}) {
		t.Fatalf("round trip changed the document:\n got %#v\nwant %#v", got[0], doc)
	}
}

func TestI2B2RoundTripMEDDOCAN(t *testing.T) {
	files, err := ReadPaths(shared.Path(t, "meddocan-i2b2/dev"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := ReadI2B2(files, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	written, err := WriteI2B2(docs)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ReadI2B2(written, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(docs, again) {
		t.Fatal("read(write(x)) != x on MEDDOCAN dev")
	}
	// The writer's text is byte-identical to the source's: what the official
	// script reads from the original, it reads from ours.
	for i := range files {
		if !strings.Contains(string(written[i].Data), "<TEXT><![CDATA["+docs[i].Text+"]]></TEXT>") {
			t.Fatalf("%s: text not written verbatim", files[i].Name)
		}
	}
}

func TestI2B2Errors(t *testing.T) {
	const head = `<?xml version="1.0" encoding="UTF-8" ?>` + "\n<deIdi2b2>\n<TEXT><![CDATA[Seen by Dr. Lee.]]></TEXT>\n<TAGS>\n"
	cases := map[string]string{
		`100-01.xml:5: tag P0 (NAME/DOCTOR): end 99 is past the end`:         `<NAME id="P0" start="12" end="99" text="Lee" TYPE="DOCTOR" />`,
		`100-01.xml:5: tag P0 (NAME/DOCTOR): its text does not match`:        `<NAME id="P0" start="12" end="15" text="Lea" TYPE="DOCTOR" />`,
		`100-01.xml:5: tag P0 (NAME): missing attribute TYPE`:                `<NAME id="P0" start="12" end="15" text="Lee" />`,
		`100-01.xml:5: tag P0 (NAME): attribute start="x" is not an integer`: `<NAME id="P0" start="x" end="15" text="Lee" TYPE="DOCTOR" />`,
		`100-01.xml:6: malformed XML: element <NAME> closed by </TAGS>`:      `<NAME id="P0" start="12" end="15" text="Lee" TYPE="DOCTOR">`,
	}
	for want, tag := range cases {
		data := head + tag + "\n</TAGS>\n</deIdi2b2>\n"
		_, err := ReadI2B2([]File{{Name: "100-01.xml", Data: []byte(data)}}, ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
	_, err := ReadI2B2([]File{{Name: "d/100-01.xml", Data: []byte("<a><TEXT>x</TEXT></a>")}, {Name: "e/100-01.xml", Data: []byte("<a><TEXT>y</TEXT></a>")}}, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), `document id "100-01" also comes from d/100-01.xml`) {
		t.Errorf("duplicate ids: %v", err)
	}
}

// A problem with a tag is reported at the line where the tag starts: not
// where the decoder stands after it (its last line), nor where it gave up on
// a malformed one. The text before the tags spans lines, as a note's does.
func TestI2B2ErrorsNameTheLineATagStarts(t *testing.T) {
	const head = "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<deIdi2b2>\n" + // lines 1-2
		"<TEXT><![CDATA[Seen by Dr. Lee.\nLine two.\nLine three.\n]]></TEXT>\n<TAGS>\n" + // lines 3-7
		"<DATE id=\"P0\" start=\"0\" end=\"4\" text=\"Seen\" TYPE=\"DATE\" />\n" // line 8
	cases := []struct {
		name, tag string
		opt       ReadOptions
		field     string
		msg       string
	}{
		{"offset past the end", "<NAME id=\"P1\"\n  start=\"12\"\n  end=\"99\" text=\"Lee\"\n  TYPE=\"DOCTOR\" />", ReadOptions{},
			"tag P1 (NAME/DOCTOR)", "end 99 is past the end"},
		{"text differs", "<NAME id=\"P1\" start=\"12\" end=\"15\"\n  text=\"Lea\"\n  TYPE=\"DOCTOR\" />", ReadOptions{},
			"tag P1 (NAME/DOCTOR)", "its text does not match"},
		{"not an integer", "<NAME id=\"P1\"\n  start=\"x\" end=\"15\"\n  TYPE=\"DOCTOR\" />", ReadOptions{},
			"tag P1 (NAME)", `attribute start="x" is not an integer`},
		{"unknown type", "<NAME id=\"P1\" start=\"12\" end=\"15\"\n  text=\"Lee\"\n  TYPE=\"DOKTOR\" />", i2b2Labels,
			"tag P1 (NAME/DOKTOR)", `unknown type "DOKTOR"`},
		{"overlap", "<NAME id=\"P1\" start=\"2\" end=\"6\"\n  TYPE=\"DOCTOR\" />", ReadOptions{},
			"tag P1 (NAME/DOCTOR)", "overlaps"},
		{"unquoted attribute", "<NAME id=\"P1\" start=\"12\" end=\"15\"\n  text=\"Lee\"\n  TYPE=DOCTOR />", ReadOptions{},
			"", "malformed XML: unquoted or missing attribute value"},
		{"never closed", "<NAME id=\"P1\" start=\"12\" end=\"15\"\n  text=\"Lee\"\n  TYPE=\"DOCTOR\"", ReadOptions{},
			"", "malformed XML"},
	}
	for _, c := range cases {
		data := head + c.tag + "\n</TAGS>\n</deIdi2b2>\n"
		_, err := ReadI2B2File(File{Name: "100-01.xml", Data: []byte(data)}, c.opt)
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want a *formats.Error", c.name, err)
			continue
		}
		if fe.Line != 9 || !strings.Contains(fe.Field, c.field) || !strings.Contains(fe.Err.Error(), c.msg) {
			t.Errorf("%s: got %q, want line 9, field ~%q, message ~%q", c.name, err, c.field, c.msg)
		}
	}
	// Character data is still reported where the bad character is: a bare
	// '&' on the note's third line, not the line TEXT starts on.
	data := "<deIdi2b2>\n<TEXT>Seen\nby\nDr. &Lee</TEXT>\n<TAGS/>\n</deIdi2b2>\n"
	_, err := ReadI2B2File(File{Name: "100-01.xml", Data: []byte(data)}, ReadOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "100-01.xml:4: TEXT: malformed XML") {
		t.Errorf("bare '&' in TEXT: got %v, want line 4", err)
	}
	// A file cut short inside its note is reported where it ends, as cut
	// short, without the escaping hint.
	data = "<deIdi2b2>\n<TEXT><![CDATA[Seen\nby\nDr. Lee"
	_, err = ReadI2B2File(File{Name: "100-01.xml", Data: []byte(data)}, ReadOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "100-01.xml:4: TEXT: malformed XML") ||
		!strings.Contains(err.Error(), "cut short") || strings.Contains(err.Error(), "&lt;") {
		t.Errorf("a file cut short: got %v, want line 4, cut short", err)
	}
}

func TestDocumentID(t *testing.T) {
	for name, want := range map[string][3]any{
		"train/100-02.xml":              {"100-02", "100", 2},
		"S0004-06142005000500011-1.xml": {"S0004-06142005000500011-1", "S0004-06142005000500011", 1},
		"a.zip:notes/report.xml":        {"report", "report", 1},
	} {
		id, patient, order := DocumentID(name)
		if id != want[0] || patient != want[1] || order != want[2] {
			t.Errorf("%s: got %s %s %d", name, id, patient, order)
		}
	}
}

// FuzzI2B2 checks that whatever the reader accepts is valid and survives its
// own writer unchanged.
func FuzzI2B2(f *testing.F) {
	f.Add([]byte(`<deIdi2b2><TEXT><![CDATA[Seen by Dr. Lee.]]></TEXT><TAGS><NAME id="P0" start="12" end="15" text="Lee" TYPE="DOCTOR" comment="" /></TAGS></deIdi2b2>`))
	f.Add([]byte(`<MEDDOCAN><TEXT>a&#13;b</TEXT><TAGS/></MEDDOCAN>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := ReadI2B2([]File{{Name: "100-01.xml", Data: data}}, ReadOptions{})
		if err != nil {
			return
		}
		for _, d := range docs {
			if err := d.Validate(false); err != nil {
				t.Fatalf("accepted an invalid document: %v", err)
			}
		}
		written, err := WriteI2B2(docs)
		if err != nil {
			return // text XML cannot carry (e.g. U+FFFE from a character reference)
		}
		again, err := ReadI2B2(written, ReadOptions{})
		if err != nil {
			t.Fatalf("cannot read own output: %v", err)
		}
		// The writer names a span without an id ("P" and its position).
		for d := range docs {
			for i, s := range docs[d].Spans {
				if s.ID == "" && i < len(again[d].Spans) && again[d].Spans[i].ID != "" {
					again[d].Spans[i].ID = ""
				}
			}
		}
		if !reflect.DeepEqual(docs, again) {
			t.Fatalf("round trip changed the document")
		}
	})
}

// TestI2B2ErrorsQuoteNoNoteText: a bare '&' or '<' in a note makes the file
// malformed; the error locates it without quoting the words of the note.
func TestI2B2ErrorsQuoteNoNoteText(t *testing.T) {
	for name, text := range map[string]string{
		"entity":  "Patient John &Smith-Jones seen today.",
		"element": "Patient <Smith> seen today.",
	} {
		doc := "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<deIdi2b2>\n<TEXT>" + text + "</TEXT>\n<TAGS>\n</TAGS>\n</deIdi2b2>\n"
		_, err := ReadI2B2File(File{Name: "100-01.xml", Data: []byte(doc)}, ReadOptions{})
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if msg := err.Error(); strings.Contains(msg, "Smith") || !strings.Contains(msg, "100-01.xml:3") {
			t.Errorf("%s: %s", name, msg)
		}
	}
}
