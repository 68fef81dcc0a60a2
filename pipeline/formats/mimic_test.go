package formats

import (
	"strings"
	"testing"

	"deidcorpus/pipeline/phi"
)

// A hand-written note in the style of MIMIC-III's redacted notes.
const mimicNote = `Admission Date:  [**2101-10-20**]     Discharge Date:   [**2101-10-29**]

Service: MEDICINE

HISTORY: Mr. [**Known lastname 1234**] is a 72 yo man seen at [**Hospital1 18**]
by Dr. [**Last Name (STitle) 2345**] and [**First Name8 (NamePattern2) 17**] [**Last Name (NamePattern1) 123**].
Follow-up on [**2-12**] ([**Month (only) 116**]) with [**Doctor First Name **], [**Telephone/Fax (1) 2442**].
Seen in [**2102**]; age [**Age over 90 **]. Née [**Last Name (un) 55**] of [**Location (un) 4373**], [**State 350**].
`

func TestMIMICPlaceholders(t *testing.T) {
	docs, err := ReadMIMIC([]File{{Name: "notes/1234-01.txt", Data: []byte(mimicNote)}}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := docs[0]
	if d.ID != "1234-01" || d.Patient != "1234" || d.Text != mimicNote {
		t.Fatalf("document %s/%s", d.ID, d.Patient)
	}
	want := []struct{ typ, text string }{
		{"DATE", "[**2101-10-20**]"},
		{"DATE", "[**2101-10-29**]"},
		{"KNOWN_LASTNAME", "[**Known lastname 1234**]"},
		{"HOSPITAL", "[**Hospital1 18**]"},
		{"LAST_NAME_STITLE", "[**Last Name (STitle) 2345**]"},
		{"FIRST_NAME", "[**First Name8 (NamePattern2) 17**]"},
		{"LAST_NAME", "[**Last Name (NamePattern1) 123**]"},
		{"MONTH_DAY", "[**2-12**]"},
		{"MONTH_ONLY", "[**Month (only) 116**]"},
		{"DOCTOR_FIRST_NAME", "[**Doctor First Name **]"},
		{"TELEPHONE_FAX", "[**Telephone/Fax (1) 2442**]"},
		{"YEAR", "[**2102**]"},
		{"AGE_OVER", "[**Age over 90 **]"},
		{"LAST_NAME_UN", "[**Last Name (un) 55**]"},
		{"LOCATION_UN", "[**Location (un) 4373**]"},
		{"STATE", "[**State 350**]"},
	}
	if len(d.Spans) != len(want) {
		t.Fatalf("%d spans, want %d", len(d.Spans), len(want))
	}
	for i, w := range want {
		s := d.Spans[i]
		// Offsets are code points: "Née" before the last three shifts bytes, not code points.
		at := strings.Index(mimicNote, w.text)
		start := len([]rune(mimicNote[:at]))
		if s.Type != w.typ || s.Text != w.text || s.Start != start || s.End != start+len([]rune(w.text)) {
			t.Errorf("span %d: %s %q [%d:%d], want %s %q at %d", i, s.Type, s.Text, s.Start, s.End, w.typ, w.text, start)
		}
	}
	if c := d.Spans[6].Comment; c != "Last Name (NamePattern1) 123" {
		t.Errorf("comment %q", c)
	}

	// The built-in mapping turns placeholder kinds into i2b2 2014 labels.
	m, err := phi.LoadMapping("mimic-i2b2")
	if err != nil {
		t.Fatal(err)
	}
	mapped, err := m.Apply(d)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, s := range mapped.Spans {
		labels = append(labels, s.Label())
	}
	wantLabels := "DATE DATE NAME/PATIENT LOCATION/HOSPITAL NAME/DOCTOR NAME/PATIENT NAME/PATIENT DATE DATE NAME/DOCTOR " +
		"CONTACT/PHONE DATE AGE NAME/PATIENT LOCATION/LOCATION-OTHER LOCATION/STATE"
	if got := strings.Join(labels, " "); got != wantLabels {
		t.Errorf("mapped labels\n%s\nwant\n%s", got, wantLabels)
	}
}

func TestMIMICRoundTrip(t *testing.T) {
	in := []File{{Name: "1-01.txt", Data: []byte(mimicNote)}}
	docs, err := ReadMIMIC(in, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := WriteMIMIC(docs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadMIMIC(files, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameDocs(t, got, docs, compareOpts{comments: true})
	docs[0].Spans[0].Type = "DATE_OF_BIRTH"
	if _, err := WriteMIMIC(docs); err == nil || !strings.Contains(err.Error(), "not a placeholder of that type") {
		t.Errorf("a span the text cannot carry was written: %v", err)
	}
}

func TestMIMICErrors(t *testing.T) {
	cases := []struct {
		name, data string
		line       int
		field, msg string
	}{
		{"unterminated", "ok [**2101-1-1**]\nseen by [**Last Name 12\n**] today", 2, "placeholder at column 9", "unterminated placeholder"},
		{"unterminated at end", "x [**Hospital1 18", 1, "column 3", "unterminated"},
		{"nested", "a [**Name [**Hospital**] **]", 1, "column 11", "inside a placeholder"},
		{"empty", "\n\n [** **]", 3, "column 2", "empty placeholder"},
	}
	for _, c := range cases {
		docs, err := ReadMIMIC([]File{{Name: "m.txt", Data: []byte(c.data)}}, ReadOptions{})
		wantError(t, c.name, docs, err, "m.txt", c.line, c.field, c.msg)
	}
}

func FuzzMIMIC(f *testing.F) {
	f.Add(mimicNote)
	f.Add("[**2-12**][**Hospital1 18**]**] [**")
	f.Add("Née [**Known lastname 9**]\r\n")
	format, _ := Lookup("mimic")
	f.Fuzz(func(t *testing.T, data string) {
		docs, err := ReadMIMIC([]File{{Name: "f.txt", Data: []byte(data)}}, ReadOptions{})
		if err != nil {
			return
		}
		checkReadable(t, format, docs, ReadOptions{}, true)
	})
}
