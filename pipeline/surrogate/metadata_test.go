package surrogate

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"deidcorpus/pipeline"
)

// metadataCorpus is six patients' discharge notes, written on known days,
// under a shared note type, each patient's first note with a span comment
// that restates its name; patient p0 has a second note whose type names
// them, p1 a type no other patient uses, and five more patients share a
// type that names p5.
func metadataCorpus() []pipeline.Document {
	var docs []pipeline.Document
	names := []string{"Rigoberto Zamacola", "Amparo Ybarrondo", "Mendieta Espinosa", "Lucía Garmendia", "Tomás Irigoyen", "Elena Urquijo"}
	for i, name := range names {
		p := fmt.Sprintf("p%d", i)
		text := "Paciente " + name + " ingresa el 12/03/2021."
		start := len([]rune("Paciente "))
		docs = append(docs, pipeline.Document{ID: p + "-1", Patient: p, RecordOrder: 1, NoteType: "Informe de alta",
			Created: time.Date(2021, 3, 12, 10, 30, 0, 0, time.UTC), Text: text,
			Spans: []pipeline.Span{
				{Start: start, End: start + len([]rune(name)), Category: "NAME", Type: "PATIENT", Comment: "real name " + name + ", MRN 99887766"},
				{Start: strings.Index(text, "12/03"), End: strings.Index(text, "12/03") + 10, Category: "DATE", Type: "DATE"},
			}})
	}
	docs[1].NoteType = "Consulta de genética"
	// Five more patients share a type that names a patient of the corpus.
	for i := 6; i < 11; i++ {
		docs = append(docs, pipeline.Document{ID: fmt.Sprintf("p%d-1", i), Patient: fmt.Sprintf("p%d", i), RecordOrder: 1,
			NoteType: "Control de Elena Urquijo", Created: time.Date(2021, 4, i, 0, 0, 0, 0, time.UTC), Text: "Sin cambios."})
	}
	docs = append(docs, pipeline.Document{ID: "p0-2", Patient: "p0", RecordOrder: 2, NoteType: "Alta de Rigoberto Zamacola",
		Created: time.Date(2021, 3, 20, 0, 0, 0, 0, time.UTC), Text: "Sin cambios."})
	for i := range docs {
		docs[i].FillText()
	}
	return docs
}

func TestResynthesisRewritesNoteFields(t *testing.T) {
	docs := metadataCorpus()
	pol := DefaultPolicy()
	res, err := New(pol, nil, 7).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	shift := map[string]int{}
	for _, s := range res.Shifts {
		shift[s.Patient] = s.Days
	}
	for i, d := range res.Docs {
		o := docs[i]
		if want := o.Created.AddDate(0, 0, shift[o.Patient]); !d.Created.Equal(want) {
			t.Errorf("%s: created %v, want the original moved by the patient's %d days: %v", d.ID, d.Created, shift[o.Patient], want)
		}
		for _, s := range d.Spans {
			if s.Comment != "" {
				t.Errorf("%s: comment %q kept; the default policy drops comments", d.ID, s.Comment)
			}
		}
	}
	types := map[string]string{}
	for _, d := range res.Docs {
		types[d.ID] = d.NoteType
	}
	for id, want := range map[string]string{"p0-1": "Informe de alta", "p2-1": "Informe de alta", // five patients share it
		"p6-1": "note", "p10-1": "note", // five share it, but it names a patient of the corpus
		"p1-1": "note", // one patient's type
		"p0-2": "note", // names its patient
	} {
		if types[id] != want {
			t.Errorf("%s: note type %q, want %q", id, types[id], want)
		}
	}
	if rep := assertClean(t, docs, res, pol); len(rep.Metadata) != 0 {
		t.Errorf("metadata findings on a clean run: %+v", rep.Metadata)
	}

	// A stricter policy: a type needs seven patients.
	strict, err := ParsePolicy([]byte(`{"noteTypes": {"minPatients": 7, "neutral": "nota"}}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err = New(strict, nil, 7).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Docs {
		if d.NoteType != "nota" {
			t.Errorf("%s: note type %q under minPatients 7, want the neutral nota", d.ID, d.NoteType)
		}
	}
}

func TestKeptCommentsAreChecked(t *testing.T) {
	docs := metadataCorpus()
	pol, err := ParsePolicy([]byte(`{"comments": "keep"}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := New(pol, nil, 7).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	rep := Check(docs, res, pol)
	if rep.OK() {
		t.Fatal("the check passed surrogate notes whose kept comments name their patients")
	}
	found := map[string]bool{}
	for _, m := range rep.Metadata {
		if m.Field == "comment" && m.Span == 0 {
			found[m.Doc] = true
		}
	}
	for _, d := range docs {
		if len(d.Spans) > 0 && !found[d.ID] {
			t.Errorf("%s: the comment naming its patient is not reported (%+v)", d.ID, rep.Metadata)
		}
	}

	// A comment that names nothing passes.
	for i := range docs {
		for j := range docs[i].Spans {
			if docs[i].Spans[j].Comment != "" {
				docs[i].Spans[j].Comment = "checked by two annotators"
			}
		}
	}
	res, err = New(pol, nil, 7).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	if rep := Check(docs, res, pol); len(rep.Metadata) != 0 {
		t.Errorf("harmless kept comments reported: %+v", rep.Metadata)
	}
	if got := res.Docs[0].Spans[0].Comment; got != "checked by two annotators" {
		t.Errorf("kept comment = %q", got)
	}
}

func TestCheckFindsNoteFieldsCopiedAsTheyWere(t *testing.T) {
	docs := metadataCorpus()
	pol := DefaultPolicy()
	res, err := New(pol, nil, 7).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	// What a pipeline that copied the fields would write.
	for i := range res.Docs {
		res.Docs[i].Created = docs[i].Created
		res.Docs[i].NoteType = docs[i].NoteType
		for j := range res.Docs[i].Spans {
			res.Docs[i].Spans[j].Comment = docs[i].Spans[j].Comment
		}
	}
	rep := Check(docs, res, pol)
	kinds := map[string]int{}
	for _, m := range rep.Metadata {
		kinds[m.Field]++
	}
	if kinds["created"] != len(docs) || kinds["comment"] != 6 || kinds["noteType"] != 1 {
		t.Errorf("findings by field = %v, want created %d, comment 6, noteType 1 (%+v)", kinds, len(docs), rep.Metadata)
	}
	if rep.OK() {
		t.Error("the check passed")
	}
}

func TestPolicyRefusesBadNoteFieldRules(t *testing.T) {
	for _, bad := range []string{`{"comments": "redact"}`, `{"noteTypes": {"minPatients": -1}}`, `{"noteTypes": {"neutral": "  "}}`} {
		if _, err := ParsePolicy([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestSpanIDsAreNeverCopied: a source span id is free text (a JSONL "id", an
// i2b2 tag's id="...") that may name the patient. The surrogate note's spans
// get new ids, T1... in text order, and a result that copies the source's
// fails the check.
func TestSpanIDsAreNeverCopied(t *testing.T) {
	docs := metadataCorpus()
	for i := range docs {
		for j := range docs[i].Spans {
			docs[i].Spans[j].ID = fmt.Sprintf("Harlan Valdez MRN 44711%d%d", i, j)
		}
	}
	// Spans out of text order: the ids follow the text, not the list.
	docs[0].Spans[0], docs[0].Spans[1] = docs[0].Spans[1], docs[0].Spans[0]
	pol := DefaultPolicy()
	res, err := New(pol, nil, 7).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Docs {
		for _, s := range d.Spans {
			if strings.Contains(s.ID, "Valdez") || !isSurrogateSpanID(s.ID) {
				t.Errorf("%s: span id %q, want a new T<n>", d.ID, s.ID)
			}
		}
	}
	if got := [2]string{res.Docs[0].Spans[0].ID, res.Docs[0].Spans[1].ID}; got != [2]string{"T2", "T1"} {
		t.Errorf("ids of the first note's spans (the date listed first) = %v, want [T2 T1]", got)
	}
	if rep := assertClean(t, docs, res, pol); len(rep.Metadata) != 0 {
		t.Errorf("metadata findings on a clean run: %+v", rep.Metadata)
	}

	// What a pipeline that copied the ids would write.
	for i := range res.Docs {
		for j := range res.Docs[i].Spans {
			res.Docs[i].Spans[j].ID = docs[i].Spans[j].ID
		}
	}
	rep := Check(docs, res, pol)
	n := 0
	for _, m := range rep.Metadata {
		if m.Field == "spanID" {
			n++
		}
	}
	if n != 12 || rep.OK() {
		t.Errorf("copied span ids: %d spanID findings, OK %v, want 12 and a failed check (%+v)", n, rep.OK(), rep.Metadata)
	}
	// A label of an open tag set that copies the name, where no rule names it.
	res, err = New(pol, nil, 7).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	res.Docs[0].Spans[1].Type = "Rigoberto Zamacola"
	if rep := Check(docs, res, pol); !slices.ContainsFunc(rep.Metadata, func(m MetadataProblem) bool { return m.Field == "label" && m.Doc == "p0-1" }) {
		t.Errorf("a label holding the patient's name: %+v", rep.Metadata)
	}
	for _, id := range []string{"T1", "T12"} {
		if !isSurrogateSpanID(id) {
			t.Errorf("%s is the run's id", id)
		}
	}
	for _, id := range []string{"", "T", "T01", "P1", "T1 Valdez", "t1"} {
		if isSurrogateSpanID(id) {
			t.Errorf("%q taken for an id the run gives", id)
		}
	}
}

// TestEveryFieldOfANoteIsChecked: each field of a note and of its spans is
// made or read by the check, or named here with what makes it safe. A field
// added to pipeline.Document or pipeline.Span fails this test until the
// check reads it (checkMetadata) or it is listed with its reason.
func TestEveryFieldOfANoteIsChecked(t *testing.T) {
	known := map[string]string{
		"Document.ID":          "the source's: the store names surrogate notes by keyed pseudonyms, and the check searches the text for it (scanIDs)",
		"Document.Patient":     "as Document.ID",
		"Document.RecordOrder": "a number the source's order gives",
		"Document.NoteType":    "checkMetadata: kept only as a category holding no value nor name word",
		"Document.Created":     "checkMetadata: moved by the patient's shift",
		"Document.Split":       "one of pipeline.Splits",
		"Document.Text":        "the leak check, the unannotated finds, the identifiers",
		"Document.Spans":       "below",
		"Span.ID":              "checkMetadata: a surrogate span's id is one the run gives (T1, T2, ...)",
		"Span.Start":           "a number, checked aligned",
		"Span.End":             "a number, checked aligned",
		"Span.Text":            "the text at the span's offsets (misaligned), a surrogate (equalToOriginal, leaks)",
		"Span.Category":        "checkMetadata: a label the policy does not name holds no replaced value",
		"Span.Type":            "as Span.Category",
		"Span.Comment":         "checkMetadata: dropped by the policy, or read as text",
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[pipeline.Document](), reflect.TypeFor[pipeline.Span]()} {
		for f := range typ.Fields() {
			name := typ.Name() + "." + f.Name
			if known[name] == "" {
				t.Errorf("%s: a field the check does not know; make the check read it, or say here why it cannot carry an original", name)
			}
		}
	}
}
