package formats

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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
		Name: "jsonl",
		Exts: []string{".jsonl", ".ndjson"},
		Doc: `JSON Lines, one document a line: {"id","patient","text","spans":[{"start","end","label"}]} with code-point offsets ` +
			`and optional record, note_type, split, created; spaCy/Prodigy "spans" and doccano "label"/"entities" are read too`,
		Read:     ReadJSONL,
		ScanFile: scanJSONL,
		Write:    WriteJSONL,
		Batched:  true,
		Patients: true,
	})
}

// jsonDoc is one line. The field names follow the spaCy / Prodigy convention
// ("text", "spans" with "start", "end", "label"); doccano's two layouts
// ("label": [[start, end, "LABEL"]] and "entities" with start_offset and
// end_offset) are accepted on input. Offsets are code points, as Python
// counts them in all three tools.
type jsonDoc struct {
	ID       json.RawMessage `json:"id,omitempty"` // a string, or a number (doccano)
	Patient  string          `json:"patient,omitempty"`
	Record   int             `json:"record,omitempty"`
	NoteType string          `json:"note_type,omitempty"`
	Split    string          `json:"split,omitempty"`
	Created  string          `json:"created,omitempty"`
	Text     *string         `json:"text"`
	Spans    []jsonSpan      `json:"spans"`

	Label    json.RawMessage `json:"label,omitempty"`
	Entities []jsonEntity    `json:"entities,omitempty"`
}

type jsonSpan struct {
	Start    *int   `json:"start"`
	End      *int   `json:"end"`
	Label    string `json:"label"`
	Category string `json:"category,omitempty"`
	Text     string `json:"text,omitempty"`
	ID       string `json:"id,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

type jsonEntity struct {
	Start *int   `json:"start_offset"`
	End   *int   `json:"end_offset"`
	Label string `json:"label"`
}

// ReadJSONL parses JSON Lines files. A line without "id" gets FILE-LINE as
// its id (so it is record LINE of patient FILE); a document without
// "patient" takes it from its id as i2b2 file names do ("100-02" is record 2
// of patient 100). "created" is RFC 3339 or a bare date (2067-11-24).
func ReadJSONL(files []File, opt ReadOptions) ([]pipeline.Document, error) {
	return readEach(files, opt, readJSONLFile, ".jsonl", ".ndjson")
}

func readJSONLFile(f File, opt ReadOptions) ([]pipeline.Document, error) {
	var docs []pipeline.Document
	err := scanJSONL(f, bytes.NewReader(f.Data), opt, func(d pipeline.Document) error {
		docs = append(docs, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return docs, nil
}

// scanJSONL parses a JSON Lines file a line at a time, as r reads it: memory
// holds one line and one document, and the ids seen.
func scanJSONL(f File, r io.Reader, opt ReadOptions, fn func(pipeline.Document) error) error {
	base := strings.TrimSuffix(path.Base(f.Name), path.Ext(f.Name))
	if i := strings.LastIndexByte(base, ':'); i >= 0 {
		base = base[i+1:]
	}
	seen := map[string]int{} // id -> line
	br := bufio.NewReaderSize(r, 1<<20)
	var offset int64 // of the line in the file, for an encoding error
	for n := 1; ; n++ {
		line, err := readLine(br, opt.maxNote())
		if err == errLongLine {
			return &Error{File: f.where(), Line: n, Err: errors.New("line larger than " + noteLimit(opt.maxNote()))}
		}
		if err != nil && err != io.EOF {
			if errors.As(err, new(*Error)) { // the reader's own, naming the file
				return err
			}
			return &Error{File: f.where(), Line: n, Err: fmt.Errorf("cannot read: %w", err)}
		}
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		start := offset
		offset += int64(len(line))
		if bom := []byte("\ufeff"); n == 1 && bytes.HasPrefix(line, bom) {
			line, start = line[len(bom):], start+int64(len(bom))
		}
		if i := invalidUTF8(line); i >= 0 {
			return &Error{File: f.where(), Line: n, Err: fmt.Errorf("invalid UTF-8 at byte %d (files must be UTF-8)", start+int64(i))}
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte{'\n'}), []byte{'\r'})
		if len(bytes.TrimSpace(line)) > 0 {
			d, perr := parseJSONLine(line, f.where(), n, base, opt)
			if perr != nil {
				return perr
			}
			if prev, dup := seen[d.ID]; dup {
				return errorf(f.where(), n, "id", "document id %q also on %s:%d", d.ID, f.where(), prev)
			}
			seen[d.ID] = n
			if err := fn(d); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

var errLongLine = errors.New("line too long")

// readLine is ReadBytes('\n') of a line of at most max bytes: a longer one
// is errLongLine as soon as it is known to be longer, never held whole.
func readLine(br *bufio.Reader, max int64) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if int64(len(line)+len(frag)) > max {
			return nil, errLongLine
		}
		line = append(line, frag...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

func parseJSONLine(line []byte, file string, n int, base string, opt ReadOptions) (pipeline.Document, error) {
	var doc pipeline.Document
	var jd jsonDoc
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&jd); err != nil {
		return doc, &Error{File: file, Line: n, Field: jsonField(err), Err: jsonErr(err)}
	}
	if dec.More() {
		return doc, errorf(file, n, "", "more than one JSON value on the line")
	}
	if jd.Text == nil {
		return doc, errorf(file, n, "text", "missing")
	}
	doc.Text = *jd.Text
	switch id := strings.TrimSpace(string(jd.ID)); {
	case id == "" || id == "null":
		doc.ID = base + "-" + strconv.Itoa(n)
	case id[0] == '"':
		if err := json.Unmarshal(jd.ID, &doc.ID); err != nil || doc.ID == "" {
			return doc, errorf(file, n, "id", "not a non-empty string")
		}
	default:
		if _, err := strconv.ParseInt(id, 10, 64); err != nil {
			return doc, errorf(file, n, "id", "%s is neither a string nor an integer", id)
		}
		doc.ID = id
	}
	doc.Patient, doc.RecordOrder = jd.Patient, jd.Record
	if doc.Patient == "" {
		_, doc.Patient, doc.RecordOrder = DocumentID(doc.ID)
	}
	if jd.Split != "" && !slices.Contains(pipeline.Splits, strings.ToLower(jd.Split)) {
		// Checked here, not only by the store, so that it is reported at its line.
		return doc, errorf(file, n, "split", "unknown split %q (known: %s)", jd.Split, strings.Join(pipeline.Splits, ", "))
	}
	doc.NoteType, doc.Split = jd.NoteType, jd.Split
	if jd.Created != "" {
		t, err := parseCreated(jd.Created)
		if err != nil {
			return doc, errorf(file, n, "created", "%q is neither RFC 3339 nor YYYY-MM-DD", jd.Created)
		}
		doc.Created = t
	}
	add := func(field string, start, end *int, label string) error {
		switch {
		case start == nil:
			return errorf(file, n, field+".start", "missing")
		case end == nil:
			return errorf(file, n, field+".end", "missing")
		case strings.TrimSpace(label) == "":
			return errorf(file, n, field+".label", "missing label")
		}
		doc.Spans = append(doc.Spans, pipeline.Span{Start: *start, End: *end, Type: label})
		return nil
	}
	for i, s := range jd.Spans {
		if err := add(fmt.Sprintf("spans[%d]", i), s.Start, s.End, s.Label); err != nil {
			return doc, err
		}
		sp := &doc.Spans[len(doc.Spans)-1]
		sp.Category, sp.Text, sp.ID, sp.Comment = s.Category, s.Text, s.ID, s.Comment
	}
	for i, e := range jd.Entities {
		if err := add(fmt.Sprintf("entities[%d]", i), e.Start, e.End, e.Label); err != nil {
			return doc, err
		}
	}
	if len(jd.Label) > 0 && string(jd.Label) != "null" {
		var triples [][]json.RawMessage
		if err := json.Unmarshal(jd.Label, &triples); err != nil {
			return doc, errorf(file, n, "label", "want doccano's [[start, end, \"LABEL\"], ...]")
		}
		for i, t := range triples {
			var start, end int
			var label string
			if len(t) != 3 || json.Unmarshal(t[0], &start) != nil || json.Unmarshal(t[1], &end) != nil || json.Unmarshal(t[2], &label) != nil {
				return doc, errorf(file, n, fmt.Sprintf("label[%d]", i), "want [start, end, \"LABEL\"]")
			}
			if err := add(fmt.Sprintf("label[%d]", i), &start, &end, label); err != nil {
				return doc, err
			}
		}
	}
	lines := make([]int, len(doc.Spans))
	for i := range lines {
		lines[i] = n
	}
	return doc, finishFlat(&doc, file, lines, opt)
}

func parseCreated(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Parse(time.DateOnly, s)
}

// jsonField names the field a decoding error is about, as a JSON path.
func jsonField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}

func jsonErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("want %s, got JSON %s", te.Type, te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("malformed JSON at column %d: %v", se.Offset, err)
	}
	return fmt.Errorf("malformed JSON: %w", err)
}

// WriteJSONL renders all documents as one file, documents.jsonl, in input
// order. Every field this package reads is written, so a round trip is
// lossless; "category" is written only where it differs from the label.
func WriteJSONL(docs []pipeline.Document) ([]File, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // clinical text is full of < and &; keep it readable
	for _, d := range docs {
		if d.ID == "" {
			return nil, errors.New("a document without an id cannot be written")
		}
		id, _ := json.Marshal(d.ID) // a string always marshals
		text := d.Text
		jd := jsonDoc{ID: id, Patient: d.Patient, Record: d.RecordOrder, NoteType: d.NoteType, Split: d.Split,
			Text: &text, Spans: make([]jsonSpan, 0, len(d.Spans))}
		if !d.Created.IsZero() {
			jd.Created = d.Created.Format(time.RFC3339Nano)
		}
		sorted := pipeline.Document{Spans: append([]pipeline.Span(nil), d.Spans...)}
		sorted.SortSpans()
		for _, s := range sorted.Spans {
			js := jsonSpan{Start: &s.Start, End: &s.End, Label: s.Type, Text: s.Text, ID: s.ID, Comment: s.Comment}
			if s.Category != s.Type {
				js.Category = s.Category
			}
			jd.Spans = append(jd.Spans, js)
		}
		if err := enc.Encode(jd); err != nil {
			return nil, fmt.Errorf("document %s: %w", d.ID, err)
		}
	}
	return []File{{Name: "documents.jsonl", Data: b.Bytes()}}, nil
}
