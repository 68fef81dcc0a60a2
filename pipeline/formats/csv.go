package formats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"deidcorpus/pipeline"
)

func init() {
	Register(&Format{
		Name: "csv",
		Exts: []string{".csv"},
		Doc: "CSV (RFC 4180) with a header row, one note a row: columns id, patient, record, date, type, split, text and spans " +
			"(a JSON list of {\"start\",\"end\",\"label\"}, code-point offsets); only text is required, other columns are ignored, " +
			"and --columns names the header's own (id=note_id,text=note_text)",
		Read:     ReadCSV,
		ScanFile: scanCSV,
		Write:    WriteCSV,
		Records:  csvRecords,
		Head:     []File{{Name: csvName, Data: csvHeader()}},
		Batched:  true,
		Patients: true,
	})
}

// csvName is the file a corpus is written to.
const csvName = "documents.csv"

// CSVFields are the fields a CSV file's columns give, in the order WriteCSV
// writes them; ReadOptions.Columns names the header's column for each.
var CSVFields = []string{"id", "patient", "record", "date", "type", "split", "text", "spans"}

// ParseColumns parses --columns, "field=header,...": which header column
// gives each of CSVFields (a field not named is read from the column of its
// own name, if the header has one).
func ParseColumns(s string) (map[string]string, error) {
	cols := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return cols, nil
	}
	for _, pair := range strings.Split(s, ",") {
		field, header, ok := strings.Cut(pair, "=")
		field, header = strings.ToLower(strings.TrimSpace(field)), strings.TrimSpace(header)
		switch {
		case !ok || header == "":
			return nil, fmt.Errorf("columns: want field=header, got %q", pair)
		case !slices.Contains(CSVFields, field):
			return nil, fmt.Errorf("columns: unknown field %q (known: %s)", field, strings.Join(CSVFields, ", "))
		}
		if _, dup := cols[field]; dup {
			return nil, fmt.Errorf("columns: field %q named twice", field)
		}
		cols[field] = header
	}
	return cols, nil
}

// ReadCSV parses CSV files of notes, a note a row (see the format's Doc).
func ReadCSV(files []File, opt ReadOptions) ([]pipeline.Document, error) {
	return readEach(files, opt, func(f File, opt ReadOptions) ([]pipeline.Document, error) {
		var docs []pipeline.Document
		err := scanCSV(f, bytes.NewReader(f.Data), opt, func(d pipeline.Document) error {
			docs = append(docs, d)
			return nil
		})
		return docs, err
	}, ".csv")
}

// csvColumns is where each field is in a file's records (-1: absent).
type csvColumns map[string]int

// scanCSV parses a CSV file a record at a time as r reads it. A row without
// an id gets FILE-LINE (record LINE of patient FILE), as a JSON line does; a
// row without a patient takes it from its id ("100-02": record 2 of 100).
func scanCSV(f File, r io.Reader, opt ReadOptions, fn func(pipeline.Document) error) error {
	t, err := openTable(f, r, opt.maxNote())
	if err != nil {
		return err
	}
	cols := csvColumns{}
	for _, field := range CSVFields {
		header, named := opt.Columns[field]
		if !named {
			header = field
		}
		cols[field] = t.col(header)
		if named && cols[field] < 0 {
			return errorf(t.file, 1, header, "no such column in the header, which --columns names for %s (the header has: %s)",
				field, strings.Join(t.header, ", "))
		}
	}
	if cols["text"] < 0 {
		return errorf(t.file, 1, "text", "no text column in the header (name it with --columns text=HEADER; the header has: %s)",
			strings.Join(t.header, ", "))
	}
	base := strings.TrimSuffix(path.Base(f.Name), path.Ext(f.Name))
	if i := strings.LastIndexByte(base, ':'); i >= 0 {
		base = base[i+1:]
	}
	seen := map[string]int{} // id -> line
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		d, err := csvDocument(t, cols, rec, line, base, opt)
		if err != nil {
			return err
		}
		if prev, dup := seen[d.ID]; dup {
			return errorf(t.file, line, t.name(cols["id"]), "document id %q also on line %d", d.ID, prev)
		}
		seen[d.ID] = line
		if err := fn(d); err != nil {
			return err
		}
	}
}

// csvDocument is one record's note.
func csvDocument(t *table, cols csvColumns, rec []string, line int, base string, opt ReadOptions) (pipeline.Document, error) {
	field := func(name string) string { return get(rec, cols[name]) }
	bad := func(name, format string, args ...any) error {
		return errorf(t.file, line, t.name(cols[name]), format, args...)
	}
	d := pipeline.Document{ID: strings.TrimSpace(field("id")), Text: field("text"), NoteType: field("type")}
	if d.ID == "" {
		d.ID = base + "-" + strconv.Itoa(line)
	}
	d.Patient = strings.TrimSpace(field("patient"))
	if rec := strings.TrimSpace(field("record")); rec != "" {
		n, err := strconv.Atoi(rec)
		if err != nil || n < 0 {
			return d, bad("record", "%q is not a record number", rec)
		}
		d.RecordOrder = n
	}
	if d.Patient == "" {
		_, d.Patient, d.RecordOrder = DocumentID(d.ID)
	}
	if sp := strings.TrimSpace(field("split")); sp != "" {
		if !slices.Contains(pipeline.Splits, strings.ToLower(sp)) {
			return d, bad("split", "unknown split %q (known: %s)", sp, strings.Join(pipeline.Splits, ", "))
		}
		d.Split = sp
	}
	if date := strings.TrimSpace(field("date")); date != "" {
		t, err := parseCreated(date)
		if err != nil {
			if t, err = time.Parse(time.DateTime, date); err != nil {
				return d, bad("date", "%q is neither RFC 3339, YYYY-MM-DD nor YYYY-MM-DD HH:MM:SS", date)
			}
		}
		d.Created = t
	}
	if spans := strings.TrimSpace(field("spans")); spans != "" {
		var list []jsonSpan
		if err := json.Unmarshal([]byte(spans), &list); err != nil {
			return d, bad("spans", "want a JSON list of {\"start\",\"end\",\"label\"}: %v", jsonErr(err))
		}
		for i, s := range list {
			if s.Start == nil || s.End == nil || strings.TrimSpace(s.Label) == "" {
				return d, bad("spans", "span %d: want start, end and label", i)
			}
			d.Spans = append(d.Spans, pipeline.Span{Start: *s.Start, End: *s.End, Type: s.Label, Category: s.Category,
				Text: s.Text, ID: s.ID, Comment: s.Comment})
		}
	}
	lines := make([]int, len(d.Spans))
	for i := range lines {
		lines[i] = line
	}
	return d, finishFlat(&d, t.file, lines, opt)
}

func csvHeader() []byte {
	b, _ := writeCSV([][]string{CSVFields}) // plain names: cannot fail
	return b
}

// WriteCSV renders documents as one file, documents.csv, a note a row with
// every field CSVFields names: read back, it gives the same documents,
// except that a "\r\n" line end comes back as "\n" (see plainNewlines).
func WriteCSV(docs []pipeline.Document) ([]File, error) {
	rows, err := csvRecords(docs)
	if err != nil {
		return nil, err
	}
	data := csvHeader()
	if len(rows) > 0 {
		data = append(data, rows[0].Data...)
	}
	return []File{{Name: csvName, Data: data}}, nil
}

// csvRecords renders documents as the rows of documents.csv, without its
// header.
func csvRecords(docs []pipeline.Document) ([]File, error) {
	rows := make([][]string, 0, len(docs))
	for _, d := range docs {
		if d.ID == "" {
			return nil, fmt.Errorf("a document without an id cannot be written")
		}
		text, spans := plainDocument(d)
		var list []byte
		if len(spans) > 0 {
			var err error
			if list, err = json.Marshal(spans); err != nil {
				return nil, fmt.Errorf("document %s: %w", d.ID, err)
			}
		}
		record, created := "", ""
		if d.RecordOrder > 0 {
			record = strconv.Itoa(d.RecordOrder)
		}
		if !d.Created.IsZero() {
			created = d.Created.Format(time.RFC3339Nano)
		}
		rows = append(rows, []string{d.ID, d.Patient, record, created, d.NoteType, d.Split, text, string(list)})
	}
	if len(rows) == 0 {
		return nil, nil
	}
	data, err := writeCSV(rows)
	if err != nil {
		return nil, err
	}
	return []File{{Name: csvName, Data: data}}, nil
}

// plainDocument is a document's text with "\n" line ends and its spans,
// sorted, moved with it, as a CSV file can carry them.
func plainDocument(d pipeline.Document) (string, []jsonSpan) {
	sorted := append([]pipeline.Span(nil), d.Spans...)
	(&pipeline.Document{Spans: sorted}).SortSpans()
	offsets := make([]int, 0, 2*len(sorted))
	for _, s := range sorted {
		offsets = append(offsets, s.Start, s.End)
	}
	text, moved := plainNewlines(d.Text, offsets)
	spans := make([]jsonSpan, len(sorted))
	for i, s := range sorted {
		start, end := moved[2*i], moved[2*i+1]
		spans[i] = jsonSpan{Start: &start, End: &end, Label: s.Type, ID: s.ID, Comment: s.Comment,
			Text: strings.ReplaceAll(s.Text, "\r\n", "\n")}
		if s.Category != s.Type {
			spans[i].Category = s.Category
		}
	}
	return text, spans
}
