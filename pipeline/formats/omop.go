package formats

import (
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

func init() {
	Register(&Format{
		Name: "omop",
		Exts: []string{".csv"},
		Only: func(name string) bool { return omopTable(name) != "" },
		Doc: "OMOP CDM 5.4 tables as CSV: note.csv (NOTE: note_id, person_id, note_date, note_datetime, note_title, note_text, " +
			"note_source_value...) and note_nlp.csv (NOTE_NLP: a PHI span a row, offset and lexical_variant, its type in term_modifiers " +
			"as type=TYPE); other tables are skipped",
		Read:       ReadOMOP,
		ScanSource: scanOMOP,
		Write:      WriteOMOP,
		Patients:   true,
	})
}

// The OMOP CDM 5.4 columns of the two tables, in the CDM's order.
var (
	omopNote = []string{"note_id", "person_id", "note_date", "note_datetime", "note_type_concept_id", "note_class_concept_id",
		"note_title", "note_text", "encoding_concept_id", "language_concept_id", "provider_id", "visit_occurrence_id",
		"visit_detail_id", "note_source_value", "note_event_id", "note_event_field_concept_id"}
	omopNLP = []string{"note_nlp_id", "note_id", "section_concept_id", "snippet", "offset", "lexical_variant",
		"note_nlp_concept_id", "note_nlp_source_concept_id", "nlp_system", "nlp_date", "nlp_datetime", "term_exists",
		"term_temporal", "term_modifiers"}
)

// omopTable is which OMOP table a file holds, by its name (note.csv,
// NOTE_NLP.csv), "" for another.
func omopTable(name string) string {
	base := strings.ToLower(path.Base(name))
	if i := strings.LastIndexByte(base, ':'); i >= 0 {
		base = base[i+1:]
	}
	switch strings.TrimSuffix(base, path.Ext(base)) {
	case "note":
		return "note"
	case "note_nlp":
		return "note_nlp"
	}
	return ""
}

// ReadOMOP parses an OMOP NOTE table and, if there is one, its NOTE_NLP
// table (see scanOMOP).
func ReadOMOP(files []File, opt ReadOptions) ([]pipeline.Document, error) {
	var docs []pipeline.Document
	err := scanOMOP(Files(files), opt, func(d pipeline.Document) error {
		docs = append(docs, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return docs, nil
}

// omopSpan is a NOTE_NLP row's span, and where it was read.
type omopSpan struct {
	span pipeline.Span
	line int
	file string
}

// scanOMOP reads src (note.csv and note_nlp.csv files only) twice: first the NOTE_NLP rows that are PHI spans
// (those whose term_modifiers say type=TYPE; an NLP system's other terms are
// not), held by note_id, then the NOTE table a row at a time, each note
// given with its spans. A note's id is its note_source_value (where a
// corpus written in this format keeps it), else its note_id; its patient
// is person_id; its record order comes from its id as a file name's does.
func scanOMOP(src Source, opt ReadOptions, fn func(pipeline.Document) error) error {
	spans, err := readNoteNLP(src, opt)
	if err != nil {
		return err
	}
	seen := map[string]string{} // id -> where
	used := map[string]bool{}   // note_ids read
	n := 0
	err = src(func(f File) error {
		if omopTable(f.Name) != "note" {
			return nil
		}
		r, err := f.reader()
		if err != nil {
			return err
		}
		defer r.Close()
		return scanNote(f, r, opt, spans, func(noteID string, d pipeline.Document, where string) error {
			if prev, dup := seen[d.ID]; dup {
				return fmt.Errorf("%s: document id %q also on %s", where, d.ID, prev)
			}
			seen[d.ID], used[noteID] = where, true
			n++
			return fn(d)
		})
	})
	if err != nil {
		return err
	}
	for id, list := range spans {
		if !used[id] {
			s := list[0]
			return errorf(s.file, s.line, "note_id", "span of note %s, which no note.csv holds", id)
		}
	}
	if n == 0 {
		return ErrNoDocuments
	}
	return nil
}

// readNoteNLP reads the PHI spans of src's NOTE_NLP tables by note_id.
func readNoteNLP(src Source, opt ReadOptions) (map[string][]omopSpan, error) {
	spans := map[string][]omopSpan{}
	err := src(func(f File) error {
		if omopTable(f.Name) != "note_nlp" {
			return nil
		}
		r, err := f.reader()
		if err != nil {
			return err
		}
		defer r.Close()
		t, err := openTable(f, r, opt.maxNote())
		if err != nil {
			return err
		}
		if err := t.requireColumns("NOTE_NLP", "note_id", "offset", "lexical_variant", "term_modifiers"); err != nil {
			return err
		}
		for {
			rec, line, err := t.next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			s, ok, err := nlpSpan(t, rec, line)
			if err != nil {
				return err
			}
			if ok {
				id := strings.TrimSpace(get(rec, t.col("note_id")))
				spans[id] = append(spans[id], omopSpan{span: s, line: line, file: t.file})
			}
		}
	})
	return spans, err
}

var offsetForm = regexp.MustCompile(`^\s*(\d+)(?:\s*[-:]\s*(\d+))?\s*$`)

// nlpSpan is a NOTE_NLP row's span: ok is false for a row that is not a
// PHI span (no type= in term_modifiers).
func nlpSpan(t *table, rec []string, line int) (pipeline.Span, bool, error) {
	var s pipeline.Span
	for _, mod := range strings.FieldsFunc(get(rec, t.col("term_modifiers")), func(r rune) bool { return r == ';' || r == ',' }) {
		k, v, _ := strings.Cut(mod, "=")
		switch strings.TrimSpace(k) {
		case "type":
			s.Type = strings.TrimSpace(v)
		case "category":
			s.Category = strings.TrimSpace(v)
		}
	}
	if s.Type == "" {
		return s, false, nil
	}
	off := get(rec, t.col("offset"))
	m := offsetForm.FindStringSubmatch(off)
	if m == nil {
		return s, false, errorf(t.file, line, "offset", "%q is not a code-point offset (START or START-END)", off)
	}
	s.Start, _ = strconv.Atoi(m[1])
	s.Text = get(rec, t.col("lexical_variant"))
	s.End = s.Start + utf8.RuneCountInString(s.Text)
	if m[2] != "" {
		s.End, _ = strconv.Atoi(m[2])
	}
	return s, true, nil
}

// scanNote reads a NOTE table a row at a time, giving each note with its
// spans (by note_id) to give.
func scanNote(f File, r io.Reader, opt ReadOptions, spans map[string][]omopSpan, give func(noteID string, d pipeline.Document, where string) error) error {
	t, err := openTable(f, r, opt.maxNote())
	if err != nil {
		return err
	}
	if err := t.requireColumns("NOTE", "note_id", "person_id", "note_text"); err != nil {
		return err
	}
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		noteID := strings.TrimSpace(get(rec, t.col("note_id")))
		if noteID == "" {
			return errorf(t.file, line, "note_id", "missing")
		}
		d, err := omopDocument(t, rec, line, noteID)
		if err != nil {
			return err
		}
		lines := make([]int, 0, len(spans[noteID]))
		for _, s := range spans[noteID] {
			d.Spans = append(d.Spans, s.span)
			lines = append(lines, s.line)
		}
		// A span's error is at its NOTE_NLP line.
		file := t.file
		if len(lines) > 0 {
			file = spans[noteID][0].file
		}
		if err := finishFlat(&d, file, lines, opt); err != nil {
			return err
		}
		if err := give(noteID, d, fmt.Sprintf("%s:%d", t.file, line)); err != nil {
			return err
		}
	}
}

// omopDocument is a NOTE row's note, without its spans.
func omopDocument(t *table, rec []string, line int, noteID string) (pipeline.Document, error) {
	field := func(name string) string { return strings.TrimSpace(get(rec, t.col(name))) }
	d := pipeline.Document{ID: field("note_source_value"), Patient: field("person_id"), Text: get(rec, t.col("note_text")),
		NoteType: field("note_title")}
	if d.ID == "" {
		d.ID = noteID
	}
	if d.Patient == "" {
		return d, errorf(t.file, line, "person_id", "missing")
	}
	_, _, d.RecordOrder = DocumentID(d.ID)
	if dt := field("note_datetime"); dt != "" {
		c, err := parseOMOPTime(dt)
		if err != nil {
			return d, errorf(t.file, line, "note_datetime", "%q is not YYYY-MM-DD HH:MM:SS", dt)
		}
		d.Created = c
	} else if date := field("note_date"); date != "" {
		c, err := time.Parse(time.DateOnly, date)
		if err != nil {
			return d, errorf(t.file, line, "note_date", "%q is not YYYY-MM-DD", date)
		}
		d.Created = c
	}
	return d, nil
}

func parseOMOPTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateTime, s); err == nil {
		return t, nil
	}
	if t, err := parseCreated(s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02T15:04:05", s)
}

var digits = regexp.MustCompile(`^[1-9][0-9]{0,17}$`)

// WriteOMOP renders documents as OMOP CDM 5.4 tables: note.csv, a note a
// row (note_id and person_id numbered, since the CDM's are integers: a
// patient that is a number keeps it; the document's id is
// note_source_value), and note_nlp.csv, a span a row (offset its start in
// code points, lexical_variant its text, term_modifiers
// "type=TYPE;category=CATEGORY", nlp_system deidcorpus). Concept ids the
// corpus does not know are 0 (OMOP's "no matching concept"); the text is
// UTF-8 (32678). Read back, it gives the same documents, save the split,
// span ids and comments, and "\r\n" line ends (as "\n").
func WriteOMOP(docs []pipeline.Document) ([]File, error) {
	notes := [][]string{omopNote}
	nlp := [][]string{omopNLP}
	persons := map[string]string{} // patient -> person_id
	used := map[string]bool{}      // person_ids that are patients' own
	for _, d := range docs {
		if digits.MatchString(d.Patient) {
			persons[d.Patient], used[d.Patient] = d.Patient, true
		}
	}
	next := 0
	for i, d := range docs {
		if d.ID == "" {
			return nil, fmt.Errorf("a document without an id cannot be written")
		}
		person, ok := persons[d.Patient]
		for !ok {
			next++
			person = strconv.Itoa(next)
			if !used[person] {
				persons[d.Patient], ok = person, true
			}
		}
		noteID := strconv.Itoa(i + 1)
		date, datetime := "", ""
		if !d.Created.IsZero() {
			date, datetime = d.Created.UTC().Format(time.DateOnly), d.Created.UTC().Format(time.DateTime)
		}
		text, spans := plainDocument(d)
		notes = append(notes, []string{noteID, person, date, datetime, "0", "0", d.NoteType, text, "32678", "0", "", "", "",
			d.ID, "", ""})
		runes := []rune(text)
		for _, s := range spans {
			if *s.Start < 0 || *s.End > len(runes) || *s.Start >= *s.End {
				return nil, fmt.Errorf("document %s: span %s [%d:%d] is not within its text", d.ID, s.Label, *s.Start, *s.End)
			}
			label := "type=" + s.Label
			if s.Category != "" {
				label += ";category=" + s.Category
			}
			nlp = append(nlp, []string{strconv.Itoa(len(nlp)), noteID, "0", "", strconv.Itoa(*s.Start),
				string(runes[*s.Start:*s.End]), "0", "0", "deidcorpus", date, datetime, "", "", label})
		}
	}
	noteData, err := writeCSV(notes)
	if err != nil {
		return nil, err
	}
	nlpData, err := writeCSV(nlp)
	if err != nil {
		return nil, err
	}
	return []File{{Name: "note.csv", Data: noteData}, {Name: "note_nlp.csv", Data: nlpData}}, nil
}
