package formats

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"deidcorpus/pipeline"
)

func init() {
	Register(&Format{
		Name: "i2b2-2006",
		Exts: []string{".xml"},
		Doc: `i2b2 2006 inline XML: <ROOT><RECORD ID="..."><TEXT>... <PHI TYPE="DOCTOR">..</PHI> ...</TEXT></RECORD></ROOT>, ` +
			"any number of records a file; the text is TEXT's character data, PHI elements become spans",
		Read:      ReadI2B22006,
		ReadFile:  readI2B22006File,
		Write:     WriteI2B22006,
		Records:   writeI2B22006Records,
		Head:      []File{{Name: i2b22006File, Data: i2b22006Head}},
		Tail:      []File{{Name: i2b22006File, Data: i2b22006Tail}},
		Batched:   true,
		ManyNotes: true,
	})
}

// ReadI2B22006 parses i2b2 2006 de-identification files: RECORD elements
// (under any root) each with an ID attribute and one TEXT element whose PHI
// children, with a TYPE attribute, mark the spans. The document text is all
// character data inside TEXT, line breaks included, so offsets count from
// just after <TEXT>. A record's ID is the document id; patient and record
// order come from it as from i2b2 2014 file names ("100-02").
func ReadI2B22006(files []File, opt ReadOptions) ([]pipeline.Document, error) {
	return readEach(files, opt, readI2B22006File, ".xml")
}

func readI2B22006File(f File, opt ReadOptions) ([]pipeline.Document, error) {
	if err := checkUTF8(f); err != nil {
		return nil, err
	}
	dec := xml.NewDecoder(bytes.NewReader(f.Data))
	var (
		docs     []pipeline.Document
		doc      *pipeline.Document
		recLine  int
		haveText bool
		inText   bool
		inPHI    bool
		text     strings.Builder
		spans    []pipeline.Span // byte offsets until the text is complete
		lines    []int
	)
	for {
		line, markup := tokenStart(dec, f.Data) // a tag's first line (see ReadI2B2File)
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, xmlError(f.where(), line, markup, err, inText)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case inPHI:
				return nil, errorf(f.where(), line, "PHI", "an element inside PHI: PHI cannot nest (write a '<' of the note as &lt;)")
			case inText && t.Name.Local == "PHI":
				typ := attr(t, "TYPE")
				if strings.TrimSpace(typ) == "" {
					return nil, errorf(f.where(), line, "PHI TYPE", "missing label")
				}
				inPHI = true
				spans = append(spans, pipeline.Span{Start: text.Len(), Type: typ})
				lines = append(lines, line)
			case inText:
				return nil, errorf(f.where(), line, "TEXT", "an element other than PHI inside TEXT (write a '<' of the note as &lt;)")
			case t.Name.Local == "RECORD":
				if doc != nil {
					return nil, errorf(f.where(), line, "RECORD", "RECORD inside RECORD")
				}
				id := attr(t, "ID")
				if strings.TrimSpace(id) == "" {
					return nil, errorf(f.where(), line, "RECORD ID", "missing")
				}
				doc = &pipeline.Document{ID: id}
				_, doc.Patient, doc.RecordOrder = DocumentID(id)
				recLine, haveText = line, false
			case t.Name.Local == "TEXT":
				if doc == nil {
					return nil, errorf(f.where(), line, "TEXT", "TEXT outside a RECORD")
				}
				if haveText {
					return nil, errorf(f.where(), line, "TEXT", "more than one TEXT in record %s", doc.ID)
				}
				inText, haveText = true, true
				text.Reset()
				spans, lines = nil, nil
			}
		case xml.EndElement:
			switch {
			case inPHI:
				inPHI = false
				spans[len(spans)-1].End = text.Len()
			case inText:
				inText = false
			case t.Name.Local == "RECORD" && doc != nil:
				if !haveText {
					return nil, errorf(f.where(), recLine, "TEXT", "record %s has no TEXT", doc.ID)
				}
				doc.Text = text.String()
				ix := pipeline.NewIndex(doc.Text)
				for _, s := range spans {
					s.Start, s.End = ix.CodePoint(s.Start), ix.CodePoint(s.End)
					doc.Spans = append(doc.Spans, s)
				}
				if err := finishFlat(doc, f.where(), lines, opt); err != nil {
					return nil, err
				}
				docs = append(docs, *doc)
				doc = nil
			}
		case xml.CharData:
			if inText {
				text.Write(t)
			}
		}
	}
	return docs, nil
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// i2b22006File is the one file WriteI2B22006 writes, its records between
// i2b22006Head and i2b22006Tail.
const i2b22006File = "records.xml"

var (
	i2b22006Head = []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ROOT>\n")
	i2b22006Tail = []byte("</ROOT>\n")
)

// WriteI2B22006 renders all documents as one file, records.xml, one RECORD a
// document. Inline markup cannot hold overlapping spans, nor carry span
// categories, ids or comments, or document metadata other than the id.
func WriteI2B22006(docs []pipeline.Document) ([]File, error) {
	records, err := writeI2B22006Records(docs)
	if err != nil {
		return nil, err
	}
	data := slices.Concat(i2b22006Head, records[0].Data, i2b22006Tail)
	return []File{{Name: i2b22006File, Data: data}}, nil
}

// writeI2B22006Records renders documents as the RECORD elements of
// records.xml, without its root element.
func writeI2B22006Records(docs []pipeline.Document) ([]File, error) {
	var b bytes.Buffer
	for _, d := range docs {
		if d.ID == "" {
			return nil, errors.New("a document without an id cannot be written")
		}
		if err := d.Validate(false); err != nil {
			return nil, fmt.Errorf("document %s: %w", d.ID, err)
		}
		fmt.Fprintf(&b, "<RECORD ID=\"%s\">\n<TEXT>", escapeAttr(d.ID))
		sorted := pipeline.Document{Spans: append([]pipeline.Span(nil), d.Spans...)}
		sorted.SortSpans()
		ix := pipeline.NewIndex(d.Text)
		at := 0
		for _, s := range sorted.Spans {
			if err := writeXMLText(&b, ix.Slice(at, s.Start)); err != nil {
				return nil, fmt.Errorf("document %s: %w", d.ID, err)
			}
			fmt.Fprintf(&b, "<PHI TYPE=\"%s\">", escapeAttr(s.Type))
			if err := writeXMLText(&b, ix.Slice(s.Start, s.End)); err != nil {
				return nil, fmt.Errorf("document %s: %w", d.ID, err)
			}
			b.WriteString("</PHI>")
			at = s.End
		}
		if err := writeXMLText(&b, ix.Slice(at, ix.Len())); err != nil {
			return nil, fmt.Errorf("document %s: %w", d.ID, err)
		}
		b.WriteString("</TEXT>\n</RECORD>\n")
	}
	return []File{{Name: i2b22006File, Data: b.Bytes()}}, nil
}

// writeXMLText escapes character data. Unlike xml.EscapeText it leaves line
// feeds and tabs literal, so the file reads like the note; carriage returns
// become references because parsers would fold a literal CR into LF.
func writeXMLText(b *bytes.Buffer, s string) error {
	for i, r := range s {
		if !isXMLChar(r) {
			return fmt.Errorf("text holds U+%04X at byte %d, which XML 1.0 cannot carry", r, i)
		}
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\r':
			b.WriteString("&#13;")
		default:
			b.WriteRune(r)
		}
	}
	return nil
}
