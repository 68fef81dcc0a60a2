package surrogate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"deidcorpus/pipeline"
)

// partsCorpus is issue 60's crafted corpus: patient A's first note
// annotates "Harlan Valdez", a doctor and a clinic; A's second note writes
// the surname alone, after a title and as a possessive, unannotated; patient
// B's note writes A's whole name, the doctor's surname after a title and the
// clinic, all unannotated.
func partsCorpus(t *testing.T) []pipeline.Document {
	a1 := "Patient Harlan Valdez was admitted by Dr. Ines Okafor at Fairview Clinic on 03/12/2021."
	a2 := "Mr. Valdez is stable. Valdez's wife Rosalind Valdez visited; the wife is pleased."
	b1 := "Patient Tobias Brennan, 52. Roommate Harlan Valdez was discharged. Seen by Dr. Okafor at Fairview Clinic."
	return []pipeline.Document{
		{ID: "a-1", Patient: "a", RecordOrder: 1, Text: a1, Spans: []pipeline.Span{
			spanOf(t, a1, "Harlan Valdez", "NAME", "PATIENT", 0),
			spanOf(t, a1, "Ines Okafor", "NAME", "DOCTOR", 0),
			spanOf(t, a1, "Fairview Clinic", "LOCATION", "HOSPITAL", 0),
			spanOf(t, a1, "03/12/2021", "DATE", "DATE", 0),
		}},
		{ID: "a-2", Patient: "a", RecordOrder: 2, Text: a2},
		{ID: "b-1", Patient: "b", RecordOrder: 1, Text: b1, Spans: []pipeline.Span{
			spanOf(t, b1, "Tobias Brennan", "NAME", "PATIENT", 0),
		}},
	}
}

// TestMissesFoundByParts: a surname written alone or after a title in its
// patient's other notes, and a name, a doctor's surname after a title and a
// clinic written in another patient's notes, are replaced; no original
// string of the crafted corpus is left.
func TestMissesFoundByParts(t *testing.T) {
	docs := partsCorpus(t)
	pol := DefaultPolicy()
	res, err := New(pol, nil, 9).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	rep := assertClean(t, docs, res, pol)
	for _, d := range res.Docs {
		for _, secret := range []string{"Valdez", "Harlan", "Okafor", "Fairview"} {
			if strings.Contains(d.Text, secret) {
				t.Errorf("%s: %q is left in %q", d.ID, secret, d.Text)
			}
		}
	}
	if len(rep.Unannotated) > 0 {
		t.Errorf("unannotated finds left: %+v", rep.Unannotated)
	}
	// The surname takes the surname of the name's surrogate, every time.
	surname := strings.Fields(res.Docs[0].Spans[0].Text)[1]
	if n := strings.Count(res.Docs[1].Text, surname); n != 3 {
		t.Errorf("%q: the surname's surrogate %q %d times, want 3", res.Docs[1].Text, surname, n)
	}
	if !strings.Contains(res.Docs[1].Text, "the wife is pleased") || !strings.Contains(res.Docs[1].Text, "Rosalind") {
		t.Errorf("text that names no one changed: %q", res.Docs[1].Text)
	}
	// The doctor's and the clinic's surrogates hold across the corpus.
	doctor, clinic := strings.Fields(res.Docs[0].Spans[1].Text), res.Docs[0].Spans[2].Text
	if !strings.Contains(res.Docs[2].Text, "Dr. "+doctor[len(doctor)-1]+" at "+clinic) {
		t.Errorf("%q: want Dr. %s at %s", res.Docs[2].Text, doctor[len(doctor)-1], clinic)
	}
	if len(rep.Propagated) != 6 {
		t.Errorf("propagated %d occurrences, want 6: %+v", len(rep.Propagated), rep.Propagated)
	}
}

// TestPartsAreNotCommonWords: a name word that the notes also write in lower
// case ("White" and "white matter") is no find alone, and still one after a
// title; a word of fewer than four letters never is.
func TestPartsAreNotCommonWords(t *testing.T) {
	t1 := "Patient Amanda White and Lee Roy Kovacs, seen 03/12/2021."
	t2 := "MRI: white matter normal. White is a color. Mrs. White called. Lee called. Kovacs called."
	docs := []pipeline.Document{
		{ID: "1", Patient: "p", Text: t1, Spans: []pipeline.Span{
			spanOf(t, t1, "Amanda White", "NAME", "PATIENT", 0),
			spanOf(t, t1, "Lee Roy Kovacs", "NAME", "PATIENT", 0),
			spanOf(t, t1, "03/12/2021", "DATE", "DATE", 0),
		}},
		{ID: "2", Patient: "p", Text: t2},
	}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 9).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, docs, res, pol)
	out := res.Docs[1].Text
	for _, kept := range []string{"white matter", "White is a color", "Lee called"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q: %q changed", out, kept)
		}
	}
	for _, gone := range []string{"Mrs. White", "Kovacs"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q: %q is left", out, gone)
		}
	}
}

// TestCheckFindsPartsAndOtherPatientsValues: with propagation off, the
// check lists every miss of the crafted corpus as an unannotated find: the
// surname alone and after a title in A's notes, and in B's note A's name,
// the doctor's surname after a title and the clinic.
func TestCheckFindsPartsAndOtherPatientsValues(t *testing.T) {
	docs := partsCorpus(t)
	pol, err := ParsePolicy([]byte(`{"propagate": false}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := New(pol, nil, 9).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	rep := Check(docs, res, pol)
	var got []string
	for _, l := range rep.Unannotated {
		got = append(got, l.Doc+" "+l.Value)
		if src := pipeline.NewIndex(docs[slices.IndexFunc(docs, func(d pipeline.Document) bool { return d.ID == l.Doc })].Text).Slice(l.SourceStart, l.SourceEnd); src != l.Value {
			t.Errorf("%+v: the source holds %q there", l, src)
		}
	}
	want := []string{"a-2 Valdez", "a-2 Valdez", "a-2 Valdez", "b-1 Harlan Valdez", "b-1 Okafor", "b-1 Fairview Clinic"}
	if !slices.Equal(got, want) {
		t.Errorf("unannotated finds %q, want %q", got, want)
	}
}

// TestNoteTypeHoldingANameWord: a note type five patients share is no
// category when it holds a word of an annotated name ("Okafor clinic" of
// the doctor "Ines Okafor"), and the check fails a type that does.
func TestNoteTypeHoldingANameWord(t *testing.T) {
	var docs []pipeline.Document
	for i := range 6 {
		text := fmt.Sprintf("Patient Bo Lundqvist%c seen by Dr. Ines Okafor.", 'a'+i)
		docs = append(docs, pipeline.Document{ID: fmt.Sprintf("p%d", i), Patient: fmt.Sprintf("p%d", i), NoteType: "Okafor clinic", Text: text,
			Spans: []pipeline.Span{spanOf(t, text, fmt.Sprintf("Bo Lundqvist%c", 'a'+i), "NAME", "PATIENT", 0), spanOf(t, text, "Ines Okafor", "NAME", "DOCTOR", 0)}})
		docs = append(docs, pipeline.Document{ID: fmt.Sprintf("p%d-2", i), Patient: fmt.Sprintf("p%d", i), NoteType: "Discharge summary", Text: "No change."})
	}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 9).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range res.Docs {
		want := "Discharge summary"
		if docs[i].NoteType == "Okafor clinic" {
			want = pol.NoteTypes.Neutral
		}
		if d.NoteType != want {
			t.Errorf("%s: note type %q, want %q", d.ID, d.NoteType, want)
		}
	}
	assertClean(t, docs, res, pol)
	for i := range res.Docs {
		res.Docs[i].NoteType = docs[i].NoteType // what a run that kept the type would write
	}
	n := 0
	for _, m := range Check(docs, res, pol).Metadata {
		if m.Field == "noteType" {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d noteType findings, want 6 (the notes typed Okafor clinic)", n)
	}
}
