package formats

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

func init() {
	Register(&Format{
		Name: "i2b2",
		Exts: []string{".xml"},
		Doc: "i2b2 2014 XML: one PPP-RR.xml file per note, TEXT as CDATA, TAGS with id, start, end, text, TYPE, comment; " +
			"any root element (MEDDOCAN's <MEDDOCAN> included)",
		Read:     ReadI2B2,
		ReadFile: one(ReadI2B2File),
		Write:    WriteI2B2,
		Batched:  true,
	})
}

// ReadOptions tune a reader.
type ReadOptions struct {
	// Label, when set, checks and normalizes a span's category and type (the
	// corpus's tag set); its error is reported at the span's place in the file.
	Label func(category, typ string) (string, string, error)
	// AllowOverlap accepts overlapping spans.
	AllowOverlap bool
	// Skipped, when set, is told of each file Scan skips: one the format
	// does not read, inside a directory or an archive given.
	Skipped func(file string)
	// KeepGoing is how many files with errors Scan reports before it
	// stops, reading on past each (the documents of good files still go to
	// its function): a curator fixes a corpus's bad files in one round.
	// 0 or 1 stops at the first. Formats that read the input whole stop at
	// the first error whatever it says.
	KeepGoing int
	// MaxNote is the most bytes a note may take (0: DefaultMaxNote): its
	// text, its file in a format of a file per note (annotations included),
	// its line in JSON Lines. Scan checks it as it reads.
	MaxNote int64
	// Columns names, for a format of tables (csv), the header's column
	// that gives each field (ParseColumns); a field not named is read from
	// the column of its own name.
	Columns map[string]string
	// Dropped, when set, is told of what a file held that a document
	// cannot keep (brat's attributes and relations), by kind, so that the
	// import can say so.
	Dropped func(kind string)
}

// ReadI2B2 parses i2b2 2014 XML files (files with other extensions are
// ignored).
func ReadI2B2(files []File, opt ReadOptions) ([]pipeline.Document, error) {
	return readEach(files, opt, one(ReadI2B2File), ".xml")
}

// ReadI2B2File parses one i2b2 2014 XML document.
func ReadI2B2File(f File, opt ReadOptions) (pipeline.Document, error) {
	var doc pipeline.Document
	doc.ID, doc.Patient, doc.RecordOrder = DocumentID(f.Name)
	if err := checkUTF8(f); err != nil {
		return doc, err
	}
	dec := xml.NewDecoder(bytes.NewReader(f.Data))
	var (
		depth    int
		inText   bool
		haveText bool
		text     strings.Builder
		lines    []int
	)
	for {
		// Problems are reported where the token starts, not where the
		// decoder stands after it: a tag is named by its first line however
		// many lines it spans.
		line, markup := tokenStart(dec, f.Data)
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return doc, xmlError(f.where(), line, markup, err, inText)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 2 && t.Name.Local == "TEXT":
				if haveText {
					return doc, errorf(f.where(), line, "TEXT", "more than one TEXT element")
				}
				inText, haveText = true, true
			case depth == 3 && !inText:
				s, err := readTag(t)
				if err != nil {
					return doc, &Error{File: f.where(), Line: line, Field: tagName(t), Err: err}
				}
				doc.Spans = append(doc.Spans, s)
				lines = append(lines, line)
			case inText:
				return doc, errorf(f.where(), line, "TEXT", "an element inside TEXT (write a '<' of the note as &lt;)")
			}
		case xml.EndElement:
			if depth == 2 && inText {
				inText = false
			}
			depth--
		case xml.CharData:
			if inText {
				text.Write(t)
			}
		}
	}
	if !haveText {
		return doc, errorf(f.where(), 0, "TEXT", "no TEXT element")
	}
	doc.Text = text.String()
	return doc, finishDocument(&doc, f.where(), lines, opt)
}

// finishDocument normalizes labels, validates offsets and span text, and sorts
// the spans, reporting problems at lines[i] of file for span i (lines may be nil).
func finishDocument(doc *pipeline.Document, file string, lines []int, opt ReadOptions) error {
	lineOf := func(i int) int {
		if i < len(lines) {
			return lines[i]
		}
		return 0
	}
	// Labels first, stopping at the first bad one; then the offsets and texts
	// of the spans before it in one walk over the text (a walk per span made
	// reading quadratic in the note's length). The first problem in file order
	// is reported, as a span-by-span check would.
	checked := len(doc.Spans)
	var labelErr error
	if opt.Label != nil {
		for i := range doc.Spans {
			s := &doc.Spans[i]
			cat, typ, err := opt.Label(s.Category, s.Type)
			if err != nil {
				checked = i
				labelErr = &Error{File: file, Line: lineOf(i), Field: spanName(*s), Err: err}
				break
			}
			s.Category, s.Type = cat, typ
		}
	}
	prefix := pipeline.Document{Text: doc.Text, Spans: doc.Spans[:checked]}
	if err := prefix.Validate(true); err != nil {
		var se *pipeline.SpanError
		if errors.As(err, &se) {
			for i, s := range prefix.Spans {
				if s == se.Span {
					return &Error{File: file, Line: lineOf(i), Field: spanName(s), Err: errors.New(se.Msg)}
				}
			}
			return &Error{File: file, Field: spanName(se.Span), Err: errors.New(se.Msg)}
		}
		return &Error{File: file, Err: err}
	}
	if labelErr != nil {
		return labelErr
	}
	doc.FillText() // spans without a text attribute get theirs; the rest are unchanged
	if !opt.AllowOverlap {
		if err := doc.Validate(false); err != nil {
			var se *pipeline.SpanError
			if errors.As(err, &se) {
				line := 0
				for i, s := range doc.Spans {
					if s == se.Span {
						line = lineOf(i)
					}
				}
				return &Error{File: file, Line: line, Field: spanName(se.Span), Err: errors.New(se.Msg)}
			}
			return &Error{File: file, Err: err}
		}
	}
	doc.SortSpans()
	return nil
}

// tokenStart is the line where the decoder's next token starts, and whether
// that token is markup (a tag, comment or CDATA section: it starts with '<')
// rather than character data. Call it before dec.Token.
func tokenStart(dec *xml.Decoder, data []byte) (line int, markup bool) {
	line, _ = dec.InputPos()
	off := dec.InputOffset()
	return line, off < int64(len(data)) && data[off] == '<'
}

// xmlError reports a malformed XML file by file and line: line, where the
// token being read starts, if it is markup (a malformed tag is reported
// where it starts, not where the decoder gave up, lines later); otherwise
// where the error is (a bad '&' deep in a note's text). Inside TEXT it says
// what is wrong without the names or entities encoding/xml quotes: there
// they are words of the note (an unescaped "<Smith>" or "&Jones").
func xmlError(file string, line int, markup bool, err error, inText bool) error {
	var se *xml.SyntaxError
	if !errors.As(err, &se) {
		return &Error{File: file, Line: line, Err: fmt.Errorf("malformed XML: %w", err)}
	}
	// A file cut short ends inside a token: where it ends is the news,
	// not where the token began.
	eof := strings.Contains(se.Msg, "unexpected EOF")
	if !markup || eof {
		line = se.Line
	}
	if !inText {
		return &Error{File: file, Line: line, Err: fmt.Errorf("malformed XML: %s", se.Msg)}
	}
	msg := quotedMarkup.ReplaceAllStringFunc(se.Msg, func(m string) string { return m[:1] + "…" })
	if eof {
		return &Error{File: file, Line: line, Field: "TEXT",
			Err: fmt.Errorf("malformed XML: %s: the file ends inside the note's text (is it cut short?)", msg)}
	}
	return &Error{File: file, Line: line, Field: "TEXT",
		Err: fmt.Errorf("malformed XML: %s (a '<' or '&' of the note is written &lt; or &amp;)", msg)}
}

// quotedMarkup is what encoding/xml quotes of the input: element names and
// entities.
var quotedMarkup = regexp.MustCompile(`&[^\s;]*;?|</?[^>\s]*>?`)

func spanName(s pipeline.Span) string {
	if s.ID != "" {
		return fmt.Sprintf("tag %s (%s)", s.ID, s.Label())
	}
	return fmt.Sprintf("tag %s [%d:%d]", s.Label(), s.Start, s.End)
}

func tagName(t xml.StartElement) string {
	for _, a := range t.Attr {
		if a.Name.Local == "id" {
			return fmt.Sprintf("tag %s (%s)", a.Value, t.Name.Local)
		}
	}
	return "tag <" + t.Name.Local + ">"
}

func readTag(t xml.StartElement) (pipeline.Span, error) {
	s := pipeline.Span{Category: t.Name.Local}
	var haveStart, haveEnd bool
	for _, a := range t.Attr {
		var err error
		switch a.Name.Local {
		case "id":
			s.ID = a.Value
		case "start":
			s.Start, err = strconv.Atoi(strings.TrimSpace(a.Value))
			haveStart = true
		case "end":
			s.End, err = strconv.Atoi(strings.TrimSpace(a.Value))
			haveEnd = true
		case "text":
			s.Text = a.Value
		case "TYPE":
			s.Type = a.Value
		case "comment":
			s.Comment = a.Value
		}
		if err != nil {
			return s, fmt.Errorf("attribute %s=%q is not an integer offset", a.Name.Local, a.Value)
		}
	}
	switch {
	case !haveStart:
		return s, errors.New("missing attribute start")
	case !haveEnd:
		return s, errors.New("missing attribute end")
	case s.Type == "":
		return s, errors.New("missing attribute TYPE")
	}
	return s, nil
}

// checkUTF8 reports the line and byte of the first invalid UTF-8 sequence.
func checkUTF8(f File) error {
	if i := invalidUTF8(f.Data); i >= 0 {
		line := 1 + bytes.Count(f.Data[:i], []byte{'\n'})
		return &Error{File: f.where(), Line: line, Err: fmt.Errorf("invalid UTF-8 at byte %d (files must be UTF-8)", i)}
	}
	return nil
}

// invalidUTF8 is the offset of the first byte of data that is not UTF-8,
// -1 if there is none.
func invalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// WriteI2B2 renders documents as i2b2 2014 XML files named ID.xml, in the
// layout the official i2b2 2014 evaluation script reads.
func WriteI2B2(docs []pipeline.Document) ([]File, error) {
	out := make([]File, 0, len(docs))
	for _, d := range docs {
		name, err := fileName(d.ID, ".xml")
		if err != nil {
			return nil, err
		}
		data, err := MarshalI2B2(d)
		if err != nil {
			return nil, fmt.Errorf("document %s: %w", d.ID, err)
		}
		out = append(out, File{Name: name, Data: data})
	}
	return out, nil
}

// MarshalI2B2 renders one document as i2b2 2014 XML.
func MarshalI2B2(d pipeline.Document) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(d.Text) + 120*len(d.Spans) + 128)
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<deIdi2b2>\n<TEXT>")
	if err := writeCDATA(&b, d.Text); err != nil {
		return nil, err
	}
	b.WriteString("</TEXT>\n<TAGS>\n")
	spans := append([]pipeline.Span(nil), d.Spans...)
	sorted := pipeline.Document{Spans: spans}
	sorted.SortSpans()
	for i, s := range sorted.Spans {
		elem := s.Category
		if elem == "" {
			elem = s.Type
		}
		if !isXMLName(elem) {
			return nil, fmt.Errorf("label %q cannot be an XML element name", elem)
		}
		id := s.ID
		if id == "" {
			id = "P" + strconv.Itoa(i)
		}
		fmt.Fprintf(&b, "<%s id=\"%s\" start=\"%d\" end=\"%d\" text=\"%s\" TYPE=\"%s\" comment=\"%s\" />\n",
			elem, escapeAttr(id), s.Start, s.End, escapeAttr(s.Text), escapeAttr(s.Type), escapeAttr(s.Comment))
	}
	b.WriteString("</TAGS>\n</deIdi2b2>\n")
	return b.Bytes(), nil
}

// writeCDATA writes text as CDATA sections. "]]>" is split across sections and
// carriage returns are written as character references, because XML parsers
// turn a literal CR (or CRLF) into LF and the offsets would shift.
func writeCDATA(b *bytes.Buffer, text string) error {
	for i, r := range text {
		if !isXMLChar(r) {
			return fmt.Errorf("text holds U+%04X at byte %d, which XML 1.0 cannot carry", r, i)
		}
	}
	b.WriteString("<![CDATA[")
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '\r':
			b.WriteString("]]>&#13;<![CDATA[")
		case strings.HasPrefix(text[i:], "]]>"):
			b.WriteString("]]]]><![CDATA[>")
			i += 2
		default:
			b.WriteByte(text[i])
		}
	}
	b.WriteString("]]>")
	return nil
}

func escapeAttr(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // writes to a strings.Builder cannot fail
	return b.String()
}

func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || (r >= 0x20 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

func isXMLName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || r == ':' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || r > 0x7F
		if i == 0 && !letter {
			return false
		}
		if !letter && !(r >= '0' && r <= '9') && r != '-' && r != '.' {
			return false
		}
	}
	return true
}

// fileName makes a document id into a safe relative file name.
func fileName(id, ext string) (string, error) {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\\:\x00") {
		return "", fmt.Errorf("document id %q cannot be used as a file name", id)
	}
	return id + ext, nil
}
