package formats

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode"

	"deidcorpus/pipeline"
)

func init() {
	Register(&Format{
		Name: "conll",
		Exts: []string{".conll", ".bio"},
		Doc: "CoNLL BIO: one token a line, the token in the first column and its label (B-TYPE, I-TYPE, O; BIOES also read) in the last; " +
			"blank lines end sentences, '-DOCSTART- [ID]' lines start documents; the text is rebuilt as tokens joined by a space, sentences by a line feed",
		Read:         ReadCoNLL,
		ReadFile:     readCoNLLFile,
		Write:        WriteCoNLL,
		Batched:      true,
		ManyNotes:    true,
		RebuildsText: true,
	})
}

// ReadCoNLL parses CoNLL files with BIO labels.
//
// Layout: the first whitespace-separated column is the token and the last is
// its label, so CoNLL-2003's four columns read as well as two; every token
// line of a file must have the same number of columns. A blank line ends a
// sentence. A line whose first column is -DOCSTART- starts a document; when
// it has exactly one more column, that column is the document id, otherwise
// (CoNLL-2003's "-DOCSTART- -X- -X- O") the id is FILE-N for the file's Nth
// document. A file without -DOCSTART- lines is one document named by the
// file, as i2b2 file names are. Documents without tokens are skipped.
//
// Labels: O, or B-, I-, E-, S-, L-, U- and a type. An I- (or E-, L-) that does
// not continue a span of the same type starts one (IOB1 leniency); a sentence
// end closes any span.
//
// Text: CoNLL keeps tokens, not the text between them, so the text is
// rebuilt: the tokens of a sentence joined by one space, sentences joined by
// one line feed, nothing before the first or after the last. Offsets refer to
// that text. Reading what WriteCoNLL wrote gives this same text back.
func ReadCoNLL(files []File, opt ReadOptions) ([]pipeline.Document, error) {
	return readEach(files, opt, readCoNLLFile, ".conll", ".bio")
}

// conllDoc is a document being read: text built in bytes, spans in bytes
// until the text is complete and pipeline.Index converts them.
type conllDoc struct {
	id       string
	text     bytes.Buffer
	sentence bool // a sentence is open (has tokens)
	spans    []pipeline.Span
	lines    []int
	open     bool // spans[len-1] is still growing
}

func (c *conllDoc) closeSpan() { c.open = false }

func readCoNLLFile(f File, opt ReadOptions) ([]pipeline.Document, error) {
	if err := checkUTF8(f); err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(path.Base(f.Name), path.Ext(f.Name))
	if i := strings.LastIndexByte(base, ':'); i >= 0 {
		base = base[i+1:]
	}
	var (
		done     []*conllDoc
		cur      *conllDoc
		columns  int
		colsLine int
		docstart bool
	)
	finish := func() {
		if cur != nil && cur.text.Len() > 0 {
			done = append(done, cur)
		}
		cur = nil
	}
	for i, raw := range splitLines(bytes.TrimPrefix(f.Data, []byte("\ufeff"))) {
		n := i + 1
		fields := strings.Fields(string(raw))
		if len(fields) == 0 {
			if cur != nil {
				cur.sentence = false
				cur.closeSpan()
			}
			continue
		}
		if fields[0] == "-DOCSTART-" {
			docstart = true
			finish()
			cur = &conllDoc{}
			if len(fields) == 2 {
				cur.id = fields[1]
			}
			continue
		}
		if len(fields) < 2 {
			return nil, errorf(f.where(), n, "label", "ragged line: want a token and a label, got %d column", len(fields))
		}
		if columns == 0 {
			columns, colsLine = len(fields), n
		} else if len(fields) != columns {
			return nil, errorf(f.where(), n, "columns", "ragged line: %d columns, but line %d has %d", len(fields), colsLine, columns)
		}
		if cur == nil {
			cur = &conllDoc{}
		}
		tok, label := fields[0], fields[len(fields)-1]
		if cur.sentence {
			cur.text.WriteByte(' ')
		} else if cur.text.Len() > 0 {
			cur.text.WriteByte('\n')
		}
		cur.sentence = true
		start := cur.text.Len()
		cur.text.WriteString(tok)
		end := cur.text.Len()
		if label == "O" {
			cur.closeSpan()
			continue
		}
		prefix, typ, ok := strings.Cut(label, "-")
		if !ok || len(prefix) != 1 || !strings.Contains("BIESLU", prefix) || typ == "" {
			return nil, errorf(f.where(), n, "label", "%q is not O or B-, I-, E-, S-, L-, U- and a type", label)
		}
		last := len(cur.spans) - 1
		continues := (prefix == "I" || prefix == "E" || prefix == "L") && cur.open && cur.spans[last].Type == typ
		if continues {
			cur.spans[last].End = end
		} else {
			cur.spans = append(cur.spans, pipeline.Span{Start: start, End: end, Type: typ})
			cur.lines = append(cur.lines, n)
			cur.open = true
		}
		if prefix == "E" || prefix == "L" || prefix == "S" || prefix == "U" {
			cur.closeSpan()
		}
	}
	finish()
	docs := make([]pipeline.Document, 0, len(done))
	for k, c := range done {
		var d pipeline.Document
		switch {
		case c.id != "":
			d.ID = c.id
			_, d.Patient, d.RecordOrder = DocumentID(c.id)
		case docstart:
			d.ID = base + "-" + strconv.Itoa(k+1)
			_, d.Patient, d.RecordOrder = DocumentID(d.ID)
		default:
			d.ID, d.Patient, d.RecordOrder = DocumentID(f.Name)
		}
		d.Text = c.text.String()
		ix := pipeline.NewIndex(d.Text)
		d.Spans = c.spans
		for i := range d.Spans {
			d.Spans[i].Start, d.Spans[i].End = ix.CodePoint(d.Spans[i].Start), ix.CodePoint(d.Spans[i].End)
		}
		if err := finishFlat(&d, f.where(), c.lines, opt); err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// WriteCoNLL renders all documents as one file, documents.conll: for each a
// "-DOCSTART- ID" line, then one "TOKEN<TAB>LABEL" line per token and a blank
// line after each sentence. Tokens are the text's runs of non-space
// characters, cut again where a span starts or ends inside one ("Smith's" with
// a span over "Smith" gives "Smith" and "'s"); a line break outside spans ends
// a sentence. See ReadCoNLL for the text that reading it gives back.
func WriteCoNLL(docs []pipeline.Document) ([]File, error) {
	var b bytes.Buffer
	for _, d := range docs {
		if d.ID == "" || strings.IndexFunc(d.ID, unicode.IsSpace) >= 0 {
			return nil, fmt.Errorf("document id %q cannot follow -DOCSTART- (empty or with white space)", d.ID)
		}
		if err := writeCoNLLDoc(&b, d); err != nil {
			return nil, fmt.Errorf("document %s: %w", d.ID, err)
		}
	}
	return []File{{Name: "documents.conll", Data: b.Bytes()}}, nil
}

func writeCoNLLDoc(b *bytes.Buffer, d pipeline.Document) error {
	if err := d.Validate(false); err != nil {
		return err // BIO cannot hold overlapping spans
	}
	ix := pipeline.NewIndex(d.Text)
	n := ix.Len()
	// Per code point: the index+1 of the span covering it (0 for none), and
	// whether a span starts or ends there.
	owner := make([]int, n)
	cut := make([]bool, n+1)
	for i, s := range d.Spans {
		if strings.IndexFunc(s.Type, unicode.IsSpace) >= 0 {
			return &pipeline.SpanError{Span: s, Msg: "label with white space cannot be a CoNLL label"}
		}
		for cp := s.Start; cp < s.End; cp++ {
			owner[cp] = i + 1
		}
		cut[s.Start], cut[s.End] = true, true
	}
	fmt.Fprintf(b, "-DOCSTART- %s\n", d.ID)
	inSentence := false
	lastOwner := 0
	for cp := 0; cp < n; {
		r := ix.Slice(cp, cp+1)
		if strings.TrimSpace(r) == "" {
			if r == "\n" && owner[cp] == 0 && inSentence {
				b.WriteByte('\n')
				inSentence = false
			}
			cp++
			continue
		}
		end := cp + 1
		for end < n && !cut[end] && strings.TrimSpace(ix.Slice(end, end+1)) != "" {
			end++
		}
		label := "O"
		if o := owner[cp]; o > 0 {
			prefix := "I-"
			if o != lastOwner {
				prefix = "B-"
			}
			label = prefix + d.Spans[o-1].Type
		}
		lastOwner = owner[cp]
		fmt.Fprintf(b, "%s\t%s\n", ix.Slice(cp, end), label)
		inSentence = true
		cp = end
	}
	if inSentence {
		b.WriteByte('\n')
	}
	return nil
}
