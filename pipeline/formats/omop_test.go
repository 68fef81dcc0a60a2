package formats

import (
	"strings"
	"testing"
	"time"

	"deidcorpus/pipeline"
)

// TestOMOPRoundTrip writes a corpus as OMOP NOTE and NOTE_NLP tables and
// reads it back: ids, patients' grouping, dates, note types and spans kept.
func TestOMOPRoundTrip(t *testing.T) {
	docs := sampleDocs()
	docs[0].Created = time.Date(2067, 11, 24, 10, 30, 0, 0, time.UTC)
	files, err := WriteOMOP(docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "note.csv" || files[1].Name != "note_nlp.csv" ||
		!strings.HasPrefix(string(files[0].Data), strings.Join(omopNote, ",")+"\n") ||
		!strings.HasPrefix(string(files[1].Data), strings.Join(omopNLP, ",")+"\n") {
		t.Fatalf("want note.csv and note_nlp.csv with the CDM's columns, got %d files", len(files))
	}
	got, err := ReadOMOP(files, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range docs {
		docs[i].Split = "" // OMOP's NOTE has no split
	}
	sameDocs(t, got, docs, compareOpts{meta: true})

	// A patient that is not a number gets a person_id that no patient has.
	mixed := []pipeline.Document{{ID: "a", Patient: "S0004", Text: "x"}, {ID: "b", Patient: "1", Text: "y"}, {ID: "c", Patient: "S0004", Text: "z"}}
	files, err = WriteOMOP(mixed)
	if err != nil {
		t.Fatal(err)
	}
	got, err = ReadOMOP(files, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Patient != "2" || got[1].Patient != "1" || got[2].Patient != "2" {
		t.Errorf("patients %s %s %s, want 2 1 2", got[0].Patient, got[1].Patient, got[2].Patient)
	}
}

// TestOMOPOfACDM reads tables as a CDM database exports them: upper-case
// columns, other NLP systems' terms (no type= modifier) beside PHI spans,
// other tables beside, a note without a source value named by its note_id.
func TestOMOPOfACDM(t *testing.T) {
	note := "NOTE_ID,PERSON_ID,NOTE_DATE,NOTE_DATETIME,NOTE_TITLE,NOTE_TEXT,NOTE_SOURCE_VALUE\n" +
		"11,5,2067-11-24,,Discharge,\"Seen by Dr. Ana on 11/24/67.\",\n" +
		"12,5,,,,No PHI here.,\n"
	nlp := "NOTE_NLP_ID,NOTE_ID,OFFSET,LEXICAL_VARIANT,NLP_SYSTEM,TERM_MODIFIERS\n" +
		"1,11,12,Ana,philter,type=DOCTOR;category=NAME\n" +
		"2,11,0,Seen,cTAKES,\n" +
		"3,11,19,11/24/67,philter,type=DATE\n"
	var skipped []string
	omop, _ := Lookup("omop")
	var docs []pipeline.Document
	err := omop.Scan(Files([]File{{Name: "cdm/NOTE.csv", Data: []byte(note)}, {Name: "cdm/NOTE_NLP.csv", Data: []byte(nlp)},
		{Name: "cdm/person.csv", Data: []byte("person_id\n5\n")}}), ReadOptions{Skipped: func(f string) { skipped = append(skipped, f) }},
		func(d pipeline.Document) error { docs = append(docs, d); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].ID != "11" || docs[0].Patient != "5" || docs[1].Patient != "5" || len(docs[0].Spans) != 2 ||
		docs[0].Spans[0].Type != "DOCTOR" || docs[0].Spans[0].Category != "NAME" || docs[0].Spans[1].Category != "DATE" ||
		!docs[0].Created.Equal(time.Date(2067, 11, 24, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("got %+v", docs)
	}
	if len(skipped) != 1 || skipped[0] != "cdm/person.csv" {
		t.Errorf("skipped %v, want the person table", skipped)
	}

	bad := "NOTE_NLP_ID,NOTE_ID,OFFSET,LEXICAL_VARIANT,TERM_MODIFIERS\n1,11,13,Ana,type=DOCTOR\n"
	docs, err = ReadOMOP([]File{{Name: "note.csv", Data: []byte(note)}, {Name: "note_nlp.csv", Data: []byte(bad)}}, ReadOptions{})
	wantError(t, "moved span", docs, err, "note_nlp.csv", 2, "tag DOCTOR [13:16]", "does not match")
	orphan := "NOTE_NLP_ID,NOTE_ID,OFFSET,LEXICAL_VARIANT,TERM_MODIFIERS\n1,99,0,x,type=X\n"
	docs, err = ReadOMOP([]File{{Name: "note.csv", Data: []byte(note)}, {Name: "note_nlp.csv", Data: []byte(orphan)}}, ReadOptions{})
	wantError(t, "orphan span", docs, err, "note_nlp.csv", 2, "note_id", "span of note 99, which no note.csv holds")
	offset := "NOTE_NLP_ID,NOTE_ID,OFFSET,LEXICAL_VARIANT,TERM_MODIFIERS\n1,11,twelve,x,type=X\n"
	docs, err = ReadOMOP([]File{{Name: "note.csv", Data: []byte(note)}, {Name: "note_nlp.csv", Data: []byte(offset)}}, ReadOptions{})
	wantError(t, "offset", docs, err, "note_nlp.csv", 2, "offset", "not a code-point offset")
	docs, err = ReadOMOP([]File{{Name: "note.csv", Data: []byte("note_id,note_text\n1,x\n")}}, ReadOptions{})
	wantError(t, "no person", docs, err, "note.csv", 1, "person_id", "no such column")
}

func FuzzOMOP(f *testing.F) {
	f.Add("note_id,person_id,note_text,note_source_value\n1,5,Ann saw Bob,5-01\n", "note_nlp_id,note_id,offset,lexical_variant,term_modifiers\n1,1,0,Ann,type=PATIENT\n")
	f.Add("note_id,person_id,note_datetime,note_text\n1,5,2067-01-01 10:00:00,x\n", "note_id,offset,lexical_variant,term_modifiers\n1,0-1,x,type=X\n")
	omop, _ := Lookup("omop")
	f.Fuzz(func(t *testing.T, note, nlp string) {
		docs, err := ReadOMOP([]File{{Name: "note.csv", Data: []byte(note)}, {Name: "note_nlp.csv", Data: []byte(nlp)}}, ReadOptions{})
		if err != nil || strings.Contains(note, "\r") {
			return
		}
		checkReadable(t, omop, docs, ReadOptions{}, false)
	})
}
