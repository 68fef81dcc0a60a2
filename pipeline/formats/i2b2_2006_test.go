package formats

import (
	"strings"
	"testing"

	"deidcorpus/pipeline"
)

func TestI2B22006RoundTrip(t *testing.T) {
	docs := sampleDocs()
	docs[0].Text += "CRLF\r\nline ]]> end"
	files, err := WriteI2B22006(docs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadI2B22006(files, i2b2Labels)
	if err != nil {
		t.Fatal(err)
	}
	sameDocs(t, got, docs, compareOpts{})
}

func TestI2B22006Read(t *testing.T) {
	data := `<?xml version="1.0" encoding="UTF-8"?>
<ROOT>
<RECORD ID="101">
<TEXT>
Admitted to <PHI TYPE="HOSPITAL">BMH</PHI> on <PHI TYPE="DATE">01/02</PHI>.
Dr. <PHI TYPE="DOCTOR">Zúñiga</PHI> &amp; <PHI TYPE="PATIENT">Ms. Lee</PHI>
</TEXT>
</RECORD>
<RECORD ID="102-03"><TEXT><![CDATA[a <b>]]> <PHI TYPE="ID">12-345</PHI></TEXT></RECORD>
</ROOT>
`
	docs, err := ReadI2B22006([]File{{Name: "train.xml", Data: []byte(data)}}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 {
		t.Fatalf("%d documents", len(docs))
	}
	d := docs[0]
	if d.ID != "101" || !strings.HasPrefix(d.Text, "\nAdmitted to BMH on 01/02.\nDr. Zúñiga & Ms. Lee\n") {
		t.Errorf("record 101: %q", d.Text)
	}
	want := []string{"[13:16]HOSPITAL", "[20:25]DATE", "[31:37]DOCTOR", "[40:47]PATIENT"}
	for i, s := range d.Spans {
		if got := spanKey(s, false, false); !strings.HasPrefix(got, want[i]) {
			t.Errorf("span %d: %s, want %s", i, got, want[i])
		}
	}
	if e := docs[1]; e.Patient != "102" || e.RecordOrder != 3 || e.Text != "a <b> 12-345" || e.Spans[0].Text != "12-345" {
		t.Errorf("record 102-03: %+v", e)
	}
}

func TestI2B22006Errors(t *testing.T) {
	wrap := func(body string) string {
		return "<ROOT>\n<RECORD ID=\"1\">\n<TEXT>" + body + "</TEXT>\n</RECORD>\n</ROOT>\n"
	}
	cases := []struct {
		name, data string
		line       int
		field, msg string
	}{
		{"missing TYPE", wrap("a\n<PHI>b</PHI>"), 4, "PHI TYPE", "missing label"},
		{"nested PHI", wrap(`<PHI TYPE="A">x<PHI TYPE="B">y</PHI></PHI>`), 3, "PHI", "cannot nest"},
		{"other element", wrap("<b>x</b>"), 3, "TEXT", "an element other than PHI inside TEXT"},
		{"empty PHI", wrap(`x<PHI TYPE="A"></PHI>`), 3, "tag A", "not before end"},
		{"missing ID", "<ROOT><RECORD><TEXT>x</TEXT></RECORD></ROOT>", 1, "RECORD ID", "missing"},
		{"no TEXT", "<ROOT>\n<RECORD ID=\"1\">\n</RECORD></ROOT>", 2, "TEXT", "has no TEXT"},
		{"broken XML", wrap("a < b"), 3, "", "malformed XML"},
		// A tag over several lines is reported at its first.
		{"missing TYPE, tag over two lines", wrap("a\n<PHI\n  TYPE=\" \">b</PHI>"), 4, "PHI TYPE", "missing label"},
		{"broken tag over two lines", wrap("a\n<PHI\n  TYPE=A>b</PHI>"), 4, "TEXT", "malformed XML"},
		{"empty PHI over two lines", wrap("a\n<PHI\n  TYPE=\"A\"></PHI>"), 4, "tag A", "not before end"},
	}
	for _, c := range cases {
		docs, err := ReadI2B22006([]File{{Name: "r.xml", Data: []byte(c.data)}}, ReadOptions{})
		wantError(t, c.name, docs, err, "r.xml", c.line, c.field, c.msg)
	}
	docs, err := ReadI2B22006([]File{{Name: "r.xml", Data: []byte(wrap(`<PHI TYPE="LOCATION">x</PHI>`))}}, i2b2Labels)
	wantError(t, "not an i2b2 2014 type", docs, err, "r.xml", 3, "tag LOCATION", "unknown type")
	overlap := mark(pipeline.Document{ID: "1", Text: "Ann Lee"}, "Ann Lee", "PATIENT")
	overlap.Spans = append(overlap.Spans, pipeline.Span{Start: 4, End: 7, Type: "DOCTOR", Category: "NAME"})
	if _, err := WriteI2B22006([]pipeline.Document{overlap}); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("overlapping spans written inline: %v", err)
	}
}

func FuzzI2B22006(f *testing.F) {
	f.Add(`<ROOT><RECORD ID="1-01"><TEXT>Dr. <PHI TYPE="DOCTOR">Zúñiga</PHI>&#13;</TEXT></RECORD></ROOT>`)
	f.Add("<ROOT><RECORD ID=\"2\"><TEXT><![CDATA[<x>]]><PHI TYPE=\"A\">y</PHI>\n</TEXT></RECORD><RECORD ID=\"3\"><TEXT/></RECORD></ROOT>")
	format, _ := Lookup("i2b2-2006")
	f.Fuzz(func(t *testing.T, data string) {
		docs, err := ReadI2B22006([]File{{Name: "f.xml", Data: []byte(data)}}, ReadOptions{})
		if err != nil {
			return
		}
		checkReadable(t, format, docs, ReadOptions{}, true)
	})
}
