package formats

import (
	"bytes"
	"sort"

	"deidcorpus/pipeline"
)

// finishFlat finishes a document read from a format whose labels are bare
// types (BRAT, JSONL, CoNLL, inline XML, placeholders). With a tag set
// (opt.Label) the category comes from it; without one, as in an open tag set,
// the category is the type.
func finishFlat(doc *pipeline.Document, file string, lines []int, opt ReadOptions) error {
	if err := finishDocument(doc, file, lines, opt); err != nil {
		return err
	}
	for i := range doc.Spans {
		if doc.Spans[i].Category == "" {
			doc.Spans[i].Category = doc.Spans[i].Type
		}
	}
	return nil
}

// lineIndex answers "which line holds byte b" for error messages.
type lineIndex []int // byte offsets of line starts

func newLineIndex(data []byte) lineIndex {
	starts := lineIndex{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// line returns the 1-based line of byte offset b.
func (li lineIndex) line(b int) int {
	return sort.Search(len(li), func(i int) bool { return li[i] > b })
}

// splitLines splits data into lines without their "\n" (or "\r\n"), keeping a
// final line that lacks a newline.
func splitLines(data []byte) [][]byte {
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte{'\r'})
	}
	return lines
}
