// Package pipeline holds the domain values every stage of deidcorpus works on
// (documents and their PHI spans) and the code-point offset arithmetic shared by
// all of them. Its subpackages hold the science: tag sets (phi), file formats
// (formats), scoring (evaluate), resynthesis (surrogate), tagging (tagger) and
// statistics (stats). Nothing under pipeline imports storage or transport.
package pipeline

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Span is one annotated PHI mention. Start and End are Unicode code-point
// offsets into the document text, End exclusive, as every corpus of the field
// counts them.
type Span struct {
	ID       string // identifier in the source file (i2b2 "P3", BRAT "T12"); optional
	Start    int
	End      int
	Text     string
	Category string // coarse class, e.g. NAME; equal to Type in open tag sets
	Type     string // fine label, e.g. DOCTOR
	Comment  string
}

// Label is the span's label as written in i2b2 files: CATEGORY/TYPE, or the
// bare type where the category is the type itself.
func (s Span) Label() string {
	if s.Category == "" || s.Category == s.Type {
		return s.Type
	}
	return s.Category + "/" + s.Type
}

// Splits are the values Document.Split takes ("" is unassigned), in any
// letter case.
var Splits = []string{"train", "dev", "test", "unassigned"}

// Document is one clinical note with one layer of spans.
type Document struct {
	ID          string // external id, unique in its corpus (e.g. "100-02")
	Patient     string // external patient id (e.g. "100")
	RecordOrder int    // position in the patient's record set, from 1; 0 if unknown
	NoteType    string
	Created     time.Time // zero if unknown
	Split       string    // train, dev, test or "" (unassigned)
	Text        string
	Spans       []Span
}

// SortSpans orders spans by start, then end, then type, so that every writer and
// comparison sees them in one canonical order.
func (d *Document) SortSpans() {
	sort.SliceStable(d.Spans, func(i, j int) bool {
		a, b := d.Spans[i], d.Spans[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.End != b.End {
			return a.End < b.End
		}
		return a.Type < b.Type
	})
}

// SpanError locates a problem with one span of a document.
type SpanError struct {
	Span Span
	Msg  string
}

func (e *SpanError) Error() string {
	id := e.Span.ID
	if id == "" {
		id = fmt.Sprintf("%s[%d:%d]", e.Span.Label(), e.Span.Start, e.Span.End)
	} else {
		id = fmt.Sprintf("%s (%s [%d:%d])", id, e.Span.Label(), e.Span.Start, e.Span.End)
	}
	return "span " + id + ": " + e.Msg
}

// Validate checks that every span lies inside the text, is not empty, and that
// its Text (when given) equals the text at its offsets. Overlapping spans are
// reported unless allowOverlap is set. It returns the first problem found.
func (d *Document) Validate(allowOverlap bool) error {
	// Only the spans' offsets need converting: one walk over the text, not an
	// Index, which would cost eight bytes per byte of text on every call (the
	// readers validate span by span).
	bom := strings.HasPrefix(d.Text, "\ufeff")
	cps := make([]int, 0, 2*len(d.Spans))
	for _, s := range d.Spans {
		cps = append(cps, s.Start, s.End)
		if bom { // where offsets counted without the mark would point
			cps = append(cps, s.Start+1, s.End+1)
		}
	}
	slices.Sort(cps)
	cps = slices.Compact(cps)
	bytes := ByteOffsets(d.Text, cps)
	byteOf := func(cp int) int {
		i, _ := slices.BinarySearch(cps, cp)
		return bytes[i]
	}
	for _, s := range d.Spans {
		switch {
		case s.Type == "":
			return &SpanError{s, "missing label"}
		case s.Start < 0 || s.End < 0:
			return &SpanError{s, "negative offset"}
		case s.Start >= s.End:
			return &SpanError{s, fmt.Sprintf("start %d is not before end %d", s.Start, s.End)}
		case byteOf(s.End) < 0:
			n := utf8.RuneCountInString(d.Text)
			return &SpanError{s, fmt.Sprintf("end %d is past the end of the text (%d code points)", s.End, n)}
		}
		if got := d.Text[byteOf(s.Start):byteOf(s.End)]; s.Text != "" && got != s.Text {
			// Neither text is quoted: error messages reach logs and
			// clients, and these are PHI.
			hint := ""
			if bom && byteOf(s.End+1) >= 0 && d.Text[byteOf(s.Start+1):byteOf(s.End+1)] == s.Text {
				hint = "; the text starts with a byte-order mark (U+FEFF), which counts as its first character: " +
					"offsets counted without it are one short"
			}
			return &SpanError{s, fmt.Sprintf("its text does not match the document text at its offsets (%s%s)", textDifference(s.Text, got), hint)}
		}
	}
	if allowOverlap {
		return nil
	}
	// In the spans' order (a file's lines), the first span that overlaps
	// one before it is in error: each is placed among the earlier ones,
	// which do not overlap and are kept by start, and only its neighbours
	// there can overlap it. Spans listed in offset order are appended, in
	// linear time.
	var placed []int // indexes into d.Spans
	for j, s := range d.Spans {
		i := sort.Search(len(placed), func(k int) bool { return d.Spans[placed[k]].Start >= s.Start })
		var first *Span
		switch {
		case i > 0 && d.Spans[placed[i-1]].End > s.Start:
			first = &d.Spans[placed[i-1]]
		case i < len(placed) && d.Spans[placed[i]].Start < s.End:
			first = &d.Spans[placed[i]]
		}
		if first == nil {
			placed = slices.Insert(placed, i, j)
			continue
		}
		what := "overlaps"
		if s.Start == first.Start && s.End == first.End {
			what = "has the offsets of"
		}
		name := first.Label()
		if first.ID != "" {
			name = first.ID + " (" + name + ")"
		}
		return &SpanError{s, fmt.Sprintf("%s %s [%d:%d]", what, name, first.Start, first.End)}
	}
	return nil
}

// textDifference describes where two texts differ without quoting either:
// their lengths and the first differing character.
func textDifference(given, found string) string {
	g, f := []rune(given), []rune(found)
	i := 0
	for i < len(g) && i < len(f) && g[i] == f[i] {
		i++
	}
	return fmt.Sprintf("%d characters given, %d at the offsets, first difference at character %d", len(g), len(f), i+1)
}

// FillText sets every span's Text from the document text at its offsets. It
// assumes the offsets are valid.
func (d *Document) FillText() {
	ix := NewIndex(d.Text)
	for i := range d.Spans {
		d.Spans[i].Text = ix.Slice(d.Spans[i].Start, d.Spans[i].End)
	}
}
