package formats

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
)

// i2b2Labels reads labels as a corpus declaring the i2b2 2014 tag set does.
var i2b2Labels = ReadOptions{Label: func(c, t string) (string, string, error) { return phi.Normalize(phi.I2B2(), c, t) }}

// sampleDocs exercises what writers must carry: non-ASCII text (offsets in
// code points), a span across a line break, a comment, metadata.
func sampleDocs() []pipeline.Document {
	docs := []pipeline.Document{
		mark(pipeline.Document{ID: "100-01", Patient: "100", RecordOrder: 1, NoteType: "discharge summary", Split: "train",
			Created: time.Date(2067, 11, 24, 0, 0, 0, 0, time.UTC),
			Text:    "Patient: John Smith\nSeen by Dr. Ana Pérez on 11/24/67 at MGH.\nPhone (617) 555-0134.\n"},
			"John Smith", "NAME/PATIENT", "Ana Pérez", "NAME/DOCTOR", "11/24/67", "DATE/DATE", "MGH", "LOCATION/HOSPITAL",
			"(617) 555-0134", "CONTACT/PHONE"),
		mark(pipeline.Document{ID: "100-02", Patient: "100", RecordOrder: 2,
			Text: "Fecha: 17/06/2016 😀 País: España & <Ana>."},
			"17/06/2016", "DATE/DATE", "España", "LOCATION/COUNTRY", "Ana", "NAME/PATIENT"),
		mark(pipeline.Document{ID: "200-01", Patient: "200", RecordOrder: 1,
			Text: "Address: 12 Main\nStreet, Boston MA 02114"},
			"12 Main\nStreet", "LOCATION/STREET", "Boston", "LOCATION/CITY", "MA", "LOCATION/STATE", "02114", "LOCATION/ZIP"),
	}
	docs[0].Spans[3].Comment = "Mass General"
	return docs
}

// mark adds spans over the first occurrences, in order, of each phrase,
// labelled CATEGORY/TYPE.
func mark(d pipeline.Document, pairs ...string) pipeline.Document {
	ix := pipeline.NewIndex(d.Text)
	at := 0
	for i := 0; i < len(pairs); i += 2 {
		b := at + strings.Index(d.Text[at:], pairs[i])
		cat, typ, ok := strings.Cut(pairs[i+1], "/")
		if !ok {
			typ = cat
		}
		d.Spans = append(d.Spans, pipeline.Span{Start: ix.CodePoint(b), End: ix.CodePoint(b + len(pairs[i])), Text: pairs[i], Category: cat, Type: typ})
		at = b + len(pairs[i])
	}
	if err := d.Validate(false); err != nil {
		panic(err)
	}
	return d
}

// spanKey renders what a round trip must keep of a span.
func spanKey(s pipeline.Span, ids, comments bool) string {
	k := fmt.Sprintf("[%d:%d]%s=%q", s.Start, s.End, s.Label(), s.Text)
	if ids {
		k += " id=" + s.ID
	}
	if comments {
		k += " comment=" + s.Comment
	}
	return k
}

type compareOpts struct{ ids, comments, meta bool }

func sameDocs(t *testing.T, got, want []pipeline.Document, o compareOpts) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d documents, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Patient != w.Patient || g.RecordOrder != w.RecordOrder || g.Text != w.Text {
			t.Errorf("document %d: got %s/%s/%d %q, want %s/%s/%d %q", i, g.ID, g.Patient, g.RecordOrder, g.Text, w.ID, w.Patient, w.RecordOrder, w.Text)
		}
		if o.meta && (g.NoteType != w.NoteType || g.Split != w.Split || !g.Created.Equal(w.Created)) {
			t.Errorf("document %s: metadata %q %q %v, want %q %q %v", w.ID, g.NoteType, g.Split, g.Created, w.NoteType, w.Split, w.Created)
		}
		if len(g.Spans) != len(w.Spans) {
			t.Errorf("document %s: %d spans, want %d", w.ID, len(g.Spans), len(w.Spans))
			continue
		}
		for j := range w.Spans {
			if a, b := spanKey(g.Spans[j], o.ids, o.comments), spanKey(w.Spans[j], o.ids, o.comments); a != b {
				t.Errorf("document %s span %d: got %s, want %s", w.ID, j, a, b)
			}
		}
	}
}

// wantError checks that err is a *Error naming file, line and field, and
// that nothing was returned with it.
func wantError(t *testing.T, name string, docs []pipeline.Document, err error, file string, line int, field, msg string) {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Errorf("%s: error %v, want a *formats.Error", name, err)
		return
	}
	if fe.File != file || fe.Line != line || !strings.Contains(fe.Field, field) || !strings.Contains(fe.Err.Error(), msg) {
		t.Errorf("%s: got %q (file %q line %d field %q), want file %q line %d field ~%q msg ~%q", name, err, fe.File, fe.Line, fe.Field, file, line, field, msg)
	}
	if docs != nil {
		t.Errorf("%s: documents returned with an error", name)
	}
}

// checkReadable is the property every fuzzed reader must keep: whatever it
// accepts is valid and survives its own writer.
func checkReadable(t *testing.T, f *Format, docs []pipeline.Document, opt ReadOptions, keepText bool) {
	t.Helper()
	for _, d := range docs {
		if err := d.Validate(opt.AllowOverlap); err != nil {
			t.Fatalf("accepted an invalid document: %v", err)
		}
	}
	files, err := f.Write(docs)
	if err != nil {
		return // some valid documents are not writable in every format; writers say so
	}
	again, err := f.Read(files, opt)
	if err != nil {
		t.Fatalf("cannot read what the writer wrote: %v\n%s", err, files[0].Data)
	}
	if keepText {
		sameDocs(t, again, docs, compareOpts{})
	}
}
