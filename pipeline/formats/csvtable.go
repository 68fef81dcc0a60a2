package formats

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// table reads a CSV file (RFC 4180, encoding/csv) with a header row a record
// at a time, as its reader gives it: memory holds one record. Header names
// are matched without regard to case (an OMOP table exported from Oracle is
// NOTE_ID, from PostgreSQL note_id).
type table struct {
	file   string // where the user finds the file
	r      *csv.Reader
	count  *countingReader
	header []string
	cols   map[string]int // lower-cased header name -> index
	last   int            // the line the last record read ends on, about (where its last field begins)
}

// errLongRecord: a record is larger than the per-note limit.
var errLongRecord = errors.New("record too long")

// countingReader fails once more than max bytes have been read past the end
// of the last whole record (at), so that a record larger than a note may be
// is refused as it is read, never held whole.
type countingReader struct {
	r        io.Reader
	n, at    int64
	max      int64
	overflow bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n-c.at > c.max {
		c.overflow = true
		return 0, errLongRecord
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// openTable reads the header row of a CSV file; max bounds a record.
func openTable(f File, r io.Reader, max int64) (*table, error) {
	t := &table{file: f.where(), count: &countingReader{r: r, max: max}, cols: map[string]int{}}
	t.r = csv.NewReader(t.count)
	t.r.ReuseRecord = true
	header, line, err := t.next()
	if err == io.EOF {
		return nil, errorf(t.file, 1, "", "empty file: want a header row naming the columns")
	}
	if err != nil {
		return nil, err
	}
	t.header = append([]string(nil), header...)
	t.header[0] = strings.TrimPrefix(t.header[0], "\ufeff")
	for i, h := range t.header {
		name := strings.ToLower(strings.TrimSpace(h))
		if _, dup := t.cols[name]; dup && name != "" {
			return nil, errorf(t.file, line, h, "column named twice in the header")
		}
		t.cols[name] = i
	}
	return t, nil
}

// next returns the next record and the line it starts on; io.EOF at the end.
// The record is reused by the following call.
func (t *table) next() ([]string, int, error) {
	rec, err := t.r.Read()
	t.count.at = t.r.InputOffset()
	line := t.last + 1 // where a record that cannot be read begins, about
	if err == nil {
		line, _ = t.r.FieldPos(0)
		t.last, _ = t.r.FieldPos(len(rec) - 1)
	}
	if err == io.EOF {
		return nil, 0, err
	}
	var pe *csv.ParseError
	switch {
	case t.count.overflow || errors.Is(err, errLongRecord):
		return nil, 0, &Error{File: t.file, Line: line, Err: errors.New("record larger than " + noteLimit(t.count.max))}
	case errors.As(err, &pe):
		return nil, 0, &Error{File: t.file, Line: pe.Line, Field: t.columnName(pe.Column), Err: pe.Err}
	case errors.As(err, new(*Error)): // the reader's own (an archive member's limit)
		return nil, 0, err
	case err != nil:
		return nil, 0, &Error{File: t.file, Line: line, Err: fmt.Errorf("cannot read: %w", err)}
	}
	for i, v := range rec {
		if !utf8.ValidString(v) {
			l, _ := t.r.FieldPos(i)
			return nil, 0, errorf(t.file, l, t.name(i), "invalid UTF-8 (files must be UTF-8)")
		}
	}
	return rec, line, nil
}

// columnName names a field of a parse error by its 1-based byte column in
// the line: the column of the header is not known from it.
func (t *table) columnName(col int) string {
	if col <= 0 {
		return ""
	}
	return fmt.Sprintf("byte %d", col)
}

// name is the header's name of field i, or its position.
func (t *table) name(i int) string {
	if i < len(t.header) && t.header[i] != "" {
		return t.header[i]
	}
	return fmt.Sprintf("column %d", i+1)
}

// col is the index of the named column, -1 if the header has none.
func (t *table) col(name string) int {
	if i, ok := t.cols[strings.ToLower(name)]; ok {
		return i
	}
	return -1
}

// get is field i of rec, "" for a column the header lacks (i < 0).
func get(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return rec[i]
}

// writeCSV renders rows as RFC 4180 CSV (fields quoted where they must be).
func writeCSV(rows [][]string) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// plainNewlines returns a document whose "\r\n" line ends are "\n", its
// spans moved with the text: an RFC 4180 reader (encoding/csv, Python's,
// a spreadsheet's) gives a quoted field's "\r\n" back as "\n", so a CSV
// file can only say the one. Other text is unchanged.
func plainNewlines(text string, offsets []int) (string, []int) {
	if !strings.Contains(text, "\r\n") {
		return text, offsets
	}
	// removed[k]: how many "\r" were dropped before code point k.
	removed := make([]int, 0, len(text)+1)
	var b strings.Builder
	dropped := 0
	runes := []rune(text)
	for k, r := range runes {
		removed = append(removed, dropped)
		if r == '\r' && k+1 < len(runes) && runes[k+1] == '\n' {
			dropped++
			continue
		}
		b.WriteRune(r)
	}
	removed = append(removed, dropped)
	out := make([]int, len(offsets))
	for i, o := range offsets {
		if o >= 0 && o < len(removed) {
			out[i] = o - removed[o]
		} else {
			out[i] = o
		}
	}
	return b.String(), out
}

// requireColumns refuses a header without one of cols, naming the OMOP
// table (name) that has it.
func (t *table) requireColumns(name string, cols ...string) error {
	for _, c := range cols {
		if t.col(c) < 0 {
			return errorf(t.file, 1, c, "no such column in the header: %s has it", name)
		}
	}
	return nil
}
