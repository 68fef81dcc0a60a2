package formats

import (
	"fmt"
	"regexp"
	"strings"

	"deidcorpus/pipeline"
)

func init() {
	Register(&Format{
		Name: "mimic",
		Exts: []string{".txt"},
		Doc: "placeholder-redacted text, MIMIC style, one note a file: every [**...**] placeholder becomes a span over the placeholder " +
			"whose type is the placeholder's kind (LAST_NAME, HOSPITAL, DATE, ...; map them with the mimic-i2b2 mapping) and whose comment is its content",
		Read:     ReadMIMIC,
		ReadFile: one(readMIMICFile),
		Write:    WriteMIMIC,
		Batched:  true,
	})
}

// ReadMIMIC parses placeholder-redacted notes, one a .txt file, as MIMIC-III
// writes them: "[**Last Name (NamePattern1) 123**] was seen at [**Hospital1
// 18**] on [**2101-10-20**]". Each placeholder, brackets and stars included,
// becomes one span, so that resynthesis can replace it whole. The span's
// comment is the placeholder's content (the number in it ties mentions of
// one value together) and its type is the placeholder's kind (see
// PlaceholderType), which the built-in mapping "mimic-i2b2" turns into i2b2
// 2014 labels. A placeholder must close on its own line: "[**" without "**]"
// is an error, as is a placeholder inside a placeholder or an empty one.
func ReadMIMIC(files []File, opt ReadOptions) ([]pipeline.Document, error) {
	return readEach(files, opt, one(readMIMICFile), ".txt")
}

func readMIMICFile(f File, opt ReadOptions) (pipeline.Document, error) {
	var doc pipeline.Document
	doc.ID, doc.Patient, doc.RecordOrder = DocumentID(f.Name)
	if err := checkUTF8(f); err != nil {
		return doc, err
	}
	doc.Text = string(f.Data)
	spans, byteLines, err := parsePlaceholders(doc.Text)
	if err != nil {
		pe := err.(*placeholderError)
		li := newLineIndex(f.Data)
		line := li.line(pe.at)
		return doc, errorf(f.where(), line, fmt.Sprintf("placeholder at column %d", pe.at-li[line-1]+1), "%s", pe.msg)
	}
	ix := pipeline.NewIndex(doc.Text)
	li := newLineIndex(f.Data)
	lines := make([]int, len(spans))
	for i := range spans {
		lines[i] = li.line(byteLines[i])
		spans[i].Start, spans[i].End = ix.CodePoint(spans[i].Start), ix.CodePoint(spans[i].End)
	}
	doc.Spans = spans
	return doc, finishFlat(&doc, f.where(), lines, opt)
}

type placeholderError struct {
	at  int // byte offset
	msg string
}

func (e *placeholderError) Error() string { return e.msg }

// parsePlaceholders finds the placeholders of text, with byte offsets, and
// the byte offset each starts at (for error lines).
func parsePlaceholders(text string) ([]pipeline.Span, []int, error) {
	var spans []pipeline.Span
	var starts []int
	for at := 0; ; {
		i := strings.Index(text[at:], "[**")
		if i < 0 {
			return spans, starts, nil
		}
		start := at + i
		rest := text[start+3:]
		j := strings.Index(rest, "**]")
		nl := strings.IndexAny(rest, "\r\n")
		if j < 0 || (nl >= 0 && nl < j) {
			return nil, nil, &placeholderError{start, "unterminated placeholder: \"[**\" without \"**]\" on its line"}
		}
		if k := strings.Index(rest[:j], "[**"); k >= 0 {
			return nil, nil, &placeholderError{start + 3 + k, "placeholder inside a placeholder"}
		}
		content := strings.TrimSpace(rest[:j])
		if content == "" {
			return nil, nil, &placeholderError{start, "empty placeholder"}
		}
		end := start + 3 + j + 3
		spans = append(spans, pipeline.Span{Start: start, End: end, Type: PlaceholderType(content), Comment: content})
		starts = append(starts, start)
		at = end
	}
}

var (
	literalDates = []struct {
		re  *regexp.Regexp
		typ string
	}{
		{regexp.MustCompile(`^\d{4}-\d{1,2}-\d{1,2}$`), "DATE"},
		{regexp.MustCompile(`^\d{1,2}/\d{1,2}/\d{2,4}$`), "DATE"},
		{regexp.MustCompile(`^\d{1,2}[-/]\d{1,2}$`), "MONTH_DAY"},
		{regexp.MustCompile(`^(\d{1,2}[-/]\d{4}|\d{4}[-/]\d{1,2})$`), "MONTH_YEAR"},
		{regexp.MustCompile(`^\d{4}$`), "YEAR"},
		{regexp.MustCompile(`^[\d\s/.-]+$`), "NUMBER"},
	}
	valueNumber  = regexp.MustCompile(`\s+\d+$`)
	patternParen = regexp.MustCompile(`\(\s*(NamePattern\d*|\d+)\s*\)`)
	gluedDigits  = regexp.MustCompile(`([A-Za-z])\d+\b`)
	nonAlnum     = regexp.MustCompile(`[^A-Z0-9]+`)
)

// PlaceholderType is the kind of a MIMIC placeholder, given its content
// (without "[**" and "**]"). Literal dates, which MIMIC shifts instead of
// hiding, are DATE (2101-10-20, 10/20/2101), MONTH_DAY (10-20), MONTH_YEAR
// (10/2101) or YEAR (2101); other numbers are NUMBER. Any other content is
// named by its head: the trailing value number, "(NamePatternN)" and "(N)"
// are dropped, as are digits glued to a word's end, and the rest is
// upper-cased with runs of other characters as "_":
// "Last Name (NamePattern1) 123" is LAST_NAME, "Hospital1 18" HOSPITAL,
// "Last Name (STitle)" LAST_NAME_STITLE, "Month (only) 123" MONTH_ONLY.
func PlaceholderType(content string) string {
	content = strings.TrimSpace(content)
	for _, d := range literalDates {
		if d.re.MatchString(content) {
			return d.typ
		}
	}
	head := valueNumber.ReplaceAllString(content, "")
	head = patternParen.ReplaceAllString(head, "")
	head = gluedDigits.ReplaceAllString(head, "$1")
	head = strings.Trim(nonAlnum.ReplaceAllString(strings.ToUpper(head), "_"), "_")
	if strings.Trim(head, "0123456789_") == "" {
		return "NUMBER"
	}
	return head
}

// WriteMIMIC writes each document's text as ID.txt. The text is the whole
// file, so only spans that are its placeholders, with the type ReadMIMIC
// gives them, survive (comments are not written: a placeholder's comment is
// its content); any other span is an error rather than
// silently lost.
func WriteMIMIC(docs []pipeline.Document) ([]File, error) {
	out := make([]File, 0, len(docs))
	for _, d := range docs {
		name, err := fileName(d.ID, ".txt")
		if err != nil {
			return nil, err
		}
		spans, _, err := parsePlaceholders(d.Text)
		if err != nil {
			return nil, fmt.Errorf("document %s: %w", d.ID, err)
		}
		ix := pipeline.NewIndex(d.Text)
		type key struct {
			start, end int
			typ        string
		}
		have := make(map[key]bool, len(spans))
		for _, s := range spans {
			have[key{ix.CodePoint(s.Start), ix.CodePoint(s.End), s.Type}] = true
		}
		for _, s := range d.Spans {
			if !have[key{s.Start, s.End, s.Type}] {
				return nil, fmt.Errorf("document %s: %w", d.ID, &pipeline.SpanError{Span: s,
					Msg: "is not a placeholder of that type in the text, and placeholder text can hold no other span " +
						"(the mimic format writes placeholder-redacted notes, such as a corpus imported from it; choose another format)"})
			}
		}
		out = append(out, File{Name: name, Data: []byte(d.Text)})
	}
	return out, nil
}
