package formats

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

func init() {
	Register(&Format{
		Name: "physionet",
		Exts: []string{".text", ".deid", ".phi", ".phrase"},
		Doc: "PhysioNet deid 1.1: notes in .text files (START_OF_RECORD=P||||N|||| ... ||||END_OF_RECORD), " +
			"PHI offsets in .deid (gold) or .phi (deid.pl output) files (\"Patient P Note N\" then \"start start end\" lines), " +
			"typed PHI in .phrase files (\"P N start end type phrase\"); without a .text file the documents carry offsets only",
		Read:      ReadPhysioNet,
		Write:     WritePhysioNet,
		ManyNotes: true,
		Patients:  true,
	})
}

// PhysioNetSpanType labels spans from .deid and .phi files, which carry no
// type.
const PhysioNetSpanType = "PHI"

var (
	physioHeader = regexp.MustCompile(`(?i)^\s*patient\s+(\d+)\s+note\s+(\d+)\s*$`)
	physioRecord = regexp.MustCompile(`^START_OF_RECORD=(\d+)\|\|\|\|(\d+)\|\|\|\|`)
)

const physioEndOfRecord = "||||END_OF_RECORD"

// physioSource is what one file says about one note.
type physioSource struct {
	file  string
	line  int // where the note starts in the file
	spans []pipeline.Span
	lines []int // line of each span
}

// physioNote gathers one note from all files.
type physioNote struct {
	patient, note string
	text          *physioSource // spans unused
	offsets       *physioSource // .deid / .phi
	typed         *physioSource // .phrase
}

// ReadPhysioNet parses PhysioNet deid files (others are ignored): notes from
// .text files, offsets from .deid or .phi files, typed spans from .phrase
// files, joined per (patient, note). A note may take offsets from one
// offsets file and one phrase file only if both list the same offsets, and
// then the phrase file's types are used.
//
// Notes without text (the PhysioNet corpus may not be redistributed, so its
// offsets often travel alone) are returned with empty Text: their spans are
// checked for sane offsets but not against a text, and callers must not run
// pipeline.Document.Validate on them. Offsets are code points, end exclusive.
func ReadPhysioNet(files []File, opt ReadOptions) ([]pipeline.Document, error) {
	files = filterExt(files, ".text", ".deid", ".phi", ".phrase")
	if len(files) == 0 {
		return nil, ErrNoDocuments
	}
	notes := map[string]*physioNote{}
	// Numbers are canonical ("007" is patient 7) so that files agree on ids.
	note := func(p, n int) *physioNote {
		id := strconv.Itoa(p) + "-" + strconv.Itoa(n)
		if notes[id] == nil {
			notes[id] = &physioNote{patient: strconv.Itoa(p), note: strconv.Itoa(n)}
		}
		return notes[id]
	}
	for _, f := range files {
		if err := checkUTF8(f); err != nil {
			return nil, err
		}
		var err error
		switch strings.ToLower(path.Ext(f.Name)) {
		case ".text":
			err = readPhysioText(f, note)
		case ".phrase":
			err = readPhysioPhrases(f, note)
		default:
			err = readPhysioOffsets(f, note)
		}
		if err != nil {
			return nil, err
		}
	}
	ids := make([]string, 0, len(notes))
	for id := range notes {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return physioLess(notes[ids[i]], notes[ids[j]]) })
	docs := make([]pipeline.Document, 0, len(ids))
	for _, id := range ids {
		d, err := notes[id].document(id, opt)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// physioLess orders notes numerically by patient, then note.
func physioLess(a, b *physioNote) bool {
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	if pa, pb := num(a.patient), num(b.patient); pa != pb {
		return pa < pb
	}
	return num(a.note) < num(b.note)
}

func (n *physioNote) document(id string, opt ReadOptions) (pipeline.Document, error) {
	order, _ := strconv.Atoi(n.note)
	d := pipeline.Document{ID: id, Patient: n.patient, RecordOrder: order}
	src := n.offsets
	if n.typed != nil {
		if n.offsets != nil && !sameOffsets(n.offsets.spans, n.typed.spans) {
			return d, errorf(n.typed.file, n.typed.line, "patient "+n.patient+" note "+n.note,
				"spans differ from those %s lists for the note at line %d", n.offsets.file, n.offsets.line)
		}
		src = n.typed
	}
	if src != nil {
		d.Spans = append([]pipeline.Span(nil), src.spans...)
	}
	if n.text == nil {
		return d, offsetsOnly(&d, src, opt)
	}
	d.Text = n.text.text()
	var file string
	var lines []int
	if src != nil {
		file, lines = src.file, src.lines
	}
	if err := finishDocument(&d, file, lines, opt); err != nil {
		// A span past the text's end: the offsets and the text disagree,
		// and either may be at fault (a truncated text file): both are named.
		var fe *Error
		if errors.As(err, &fe) {
			length := utf8.RuneCountInString(d.Text)
			for _, s := range d.Spans {
				if s.End > length && fe.Field == spanName(s) {
					fe.Err = fmt.Errorf("%w of the note at %s line %d", fe.Err, n.text.file, n.text.line)
					break
				}
			}
		}
		return d, err
	}
	return d, nil
}

// text is stored in a text source's single pseudo-span.
func (s *physioSource) text() string { return s.spans[0].Text }

// offsetsOnly checks what can be checked without a text and sorts the spans.
func offsetsOnly(d *pipeline.Document, src *physioSource, opt ReadOptions) error {
	for i := range d.Spans {
		s := &d.Spans[i]
		if s.Start < 0 || s.Start >= s.End {
			return errorf(src.file, src.lines[i], spanName(*s), "start %d is not before end %d", s.Start, s.End)
		}
		if opt.Label != nil {
			cat, typ, err := opt.Label(s.Category, s.Type)
			if err != nil {
				return &Error{File: src.file, Line: src.lines[i], Field: spanName(*s), Err: err}
			}
			s.Category, s.Type = cat, typ
		}
	}
	// Sort spans and their lines together, so that an overlap names its line.
	order := make([]int, len(d.Spans))
	for i := range order {
		order[i] = i
	}
	sorted := pipeline.Document{Spans: d.Spans}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := d.Spans[order[i]], d.Spans[order[j]]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.End != b.End {
			return a.End < b.End
		}
		return a.Type < b.Type
	})
	spans := make([]pipeline.Span, len(order))
	lines := make([]int, len(order))
	for i, k := range order {
		spans[i], lines[i] = sorted.Spans[k], src.lines[k]
	}
	d.Spans = spans
	if !opt.AllowOverlap {
		for i := 1; i < len(spans); i++ {
			if a, b := spans[i-1], spans[i]; b.Start < a.End {
				return errorf(src.file, lines[i], spanName(b), "overlaps %s [%d:%d] (line %d)", a.Label(), a.Start, a.End, lines[i-1])
			}
		}
	}
	return nil
}

func sameOffsets(a, b []pipeline.Span) bool {
	key := func(spans []pipeline.Span) [][2]int {
		out := make([][2]int, len(spans))
		for i, s := range spans {
			out[i] = [2]int{s.Start, s.End}
		}
		slices.SortFunc(out, func(x, y [2]int) int {
			if x[0] != y[0] {
				return x[0] - y[0]
			}
			return x[1] - y[1]
		})
		return out
	}
	return slices.Equal(key(a), key(b))
}

// physioLines splits data into lines without "\n" or "\r\n".
func physioLines(data []byte) []string {
	s := string(data)
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

func physioClaim(slot **physioSource, src *physioSource, kind, p, n string) error {
	if *slot != nil {
		return errorf(src.file, src.line, "patient "+p+" note "+n, "%s for this note already come from %s line %d", kind, (*slot).file, (*slot).line)
	}
	*slot = src
	return nil
}

// physioNumbers parses a note's patient and note numbers.
func physioNumbers(file string, line int, p, n string) (int, int, error) {
	pi, err := strconv.Atoi(p)
	if err != nil {
		return 0, 0, errorf(file, line, "patient", "%q is not a patient number", p)
	}
	ni, err := strconv.Atoi(n)
	if err != nil {
		return 0, 0, errorf(file, line, "note", "%q is not a note number", n)
	}
	return pi, ni, nil
}

// readPhysioOffsets reads a .deid or .phi file.
func readPhysioOffsets(f File, note func(p, n int) *physioNote) error {
	var cur *physioSource
	for i, l := range physioLines(f.Data) {
		line := i + 1
		if strings.TrimSpace(l) == "" {
			continue
		}
		if m := physioHeader.FindStringSubmatch(l); m != nil {
			p, n, err := physioNumbers(f.where(), line, m[1], m[2])
			if err != nil {
				return err
			}
			cur = &physioSource{file: f.where(), line: line}
			pn := note(p, n)
			if err := physioClaim(&pn.offsets, cur, "offsets", pn.patient, pn.note); err != nil {
				return err
			}
			continue
		}
		fields := strings.Fields(l)
		if len(fields) != 3 {
			return errorf(f.where(), line, "offsets", "want \"Patient P Note N\" or three numbers \"start start end\", got %q", l)
		}
		if cur == nil {
			return errorf(f.where(), line, "offsets", "offsets before the first \"Patient P Note N\" line")
		}
		var nums [3]int
		for k, name := range []string{"first start", "start", "end"} {
			v, err := strconv.Atoi(fields[k])
			if err != nil || v < 0 {
				return errorf(f.where(), line, name, "%q is not a non-negative integer offset", fields[k])
			}
			nums[k] = v
		}
		// deid.pl writes the start twice; runStat reads the last two
		// numbers, and so does this reader.
		cur.spans = append(cur.spans, pipeline.Span{Start: nums[1], End: nums[2], Category: PhysioNetSpanType, Type: PhysioNetSpanType})
		cur.lines = append(cur.lines, line)
	}
	return nil
}

// readPhysioPhrases reads an id-phi.phrase file: "P N start end type
// phrase", the phrase being the rest of the line (it may hold spaces).
func readPhysioPhrases(f File, note func(p, n int) *physioNote) error {
	sources := map[*physioNote]*physioSource{}
	for i, l := range physioLines(f.Data) {
		line := i + 1
		if strings.TrimSpace(l) == "" {
			continue
		}
		rest := l
		var fields [5]string
		for k := range fields {
			rest = strings.TrimLeft(rest, " \t")
			end := strings.IndexAny(rest, " \t")
			if end < 0 {
				end = len(rest)
			}
			fields[k], rest = rest[:end], rest[end:]
			if fields[k] == "" {
				return errorf(f.where(), line, "phrase", "want \"patient note start end type phrase\", got %d of those fields", k)
			}
		}
		if len(rest) > 0 {
			rest = rest[1:] // the single separator before the phrase
		}
		var nums [4]int
		for k, name := range []string{"patient", "note", "start", "end"} {
			v, err := strconv.Atoi(fields[k])
			if err != nil || v < 0 {
				return errorf(f.where(), line, name, "%q is not a non-negative integer", fields[k])
			}
			nums[k] = v
		}
		pn := note(nums[0], nums[1])
		src := sources[pn]
		if src == nil {
			src = &physioSource{file: f.where(), line: line}
			if err := physioClaim(&pn.typed, src, "typed spans", pn.patient, pn.note); err != nil {
				return err
			}
			sources[pn] = src
		}
		src.spans = append(src.spans, pipeline.Span{Start: nums[2], End: nums[3], Type: fields[4], Text: rest})
		src.lines = append(src.lines, line)
	}
	return nil
}

// readPhysioText reads the notes of a .text file. A note's text is
// everything between the end of its START_OF_RECORD line and the
// END_OF_RECORD marker, as deid.pl takes it.
func readPhysioText(f File, note func(p, n int) *physioNote) error {
	data := f.Data
	line := 1
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			nl = len(data) - 1
		}
		head := data[:nl+1]
		if len(bytes.TrimSpace(head)) == 0 {
			data, line = data[nl+1:], line+1
			continue
		}
		m := physioRecord.FindSubmatch(head)
		if m == nil {
			return errorf(f.where(), line, "START_OF_RECORD", "want \"START_OF_RECORD=P||||N||||\", got %q", strings.TrimRight(string(head), "\r\n"))
		}
		if rest := bytes.TrimSpace(head[len(m[0]):]); len(rest) > 0 {
			return errorf(f.where(), line, "START_OF_RECORD", "unexpected text (%d bytes) after the record header", len(rest))
		}
		body := data[nl+1:]
		end := bytes.Index(body, []byte(physioEndOfRecord))
		if end < 0 {
			return errorf(f.where(), line, "END_OF_RECORD", "record has no %s marker", physioEndOfRecord)
		}
		if next := physioRecord.FindIndex(body[:end]); next != nil && (next[0] == 0 || body[next[0]-1] == '\n') {
			return errorf(f.where(), line, "END_OF_RECORD", "record is not closed before the next START_OF_RECORD")
		}
		p, n, err := physioNumbers(f.where(), line, string(m[1]), string(m[2]))
		if err != nil {
			return err
		}
		src := &physioSource{file: f.where(), line: line, spans: []pipeline.Span{{Text: string(body[:end])}}}
		pn := note(p, n)
		if err := physioClaim(&pn.text, src, "the text", pn.patient, pn.note); err != nil {
			return err
		}
		consumed := nl + 1 + end + len(physioEndOfRecord)
		line += bytes.Count(data[:consumed], []byte{'\n'})
		data = data[consumed:]
		// The rest of the marker's line (normally just its newline).
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 && len(bytes.TrimSpace(data[:nl])) == 0 {
			data, line = data[nl+1:], line+1
		} else if len(bytes.TrimSpace(data)) == 0 {
			data = nil
		}
	}
	return nil
}

// WritePhysioNet renders documents as one PhysioNet corpus: id.deid with
// every note's offsets, id-phi.phrase with their types and text, and id.text
// with the notes when they have text. A document's patient and record order
// become "Patient P Note N", so both must be numeric.
func WritePhysioNet(docs []pipeline.Document) ([]File, error) {
	var deid, phrase, text bytes.Buffer
	haveText := false
	sorted := make([]pipeline.Document, len(docs))
	copy(sorted, docs)
	// A note is named by its patient and note number only (the reader's
	// canonical numbers: "007" is 7): two alike would make files the
	// reader refuses.
	notes := make(map[[2]int]string, len(docs))
	for i := range sorted {
		d := &sorted[i]
		patient, err := strconv.Atoi(d.Patient)
		if err != nil || d.RecordOrder <= 0 {
			return nil, fmt.Errorf("document %s: PhysioNet files need a numeric patient and record order (have %q, %d)", d.ID, d.Patient, d.RecordOrder)
		}
		if prev, dup := notes[[2]int{patient, d.RecordOrder}]; dup {
			return nil, fmt.Errorf("document %s: patient %d note %d, as document %s is: PhysioNet files name a note by its patient and note number only, and could not tell the two apart", d.ID, patient, d.RecordOrder, prev)
		}
		notes[[2]int{patient, d.RecordOrder}] = d.ID
		if strings.Contains(d.Text, physioEndOfRecord) {
			return nil, fmt.Errorf("document %s: text holds the %s marker", d.ID, physioEndOfRecord)
		}
		d.Spans = append([]pipeline.Span(nil), d.Spans...)
		d.SortSpans()
		fmt.Fprintf(&deid, "Patient %s\tNote %d\n", d.Patient, d.RecordOrder)
		for _, s := range d.Spans {
			fmt.Fprintf(&deid, "%d\t%d\t%d\n", s.Start, s.Start, s.End)
			typ := s.Type
			if typ == "" || strings.ContainsAny(typ, " \t\n") {
				return nil, fmt.Errorf("document %s: type %q cannot be written to a phrase file", d.ID, typ)
			}
			if strings.ContainsAny(s.Text, "\r\n") {
				return nil, fmt.Errorf("document %s: span [%d:%d] text holds a line break, which a phrase file cannot carry", d.ID, s.Start, s.End)
			}
			fmt.Fprintf(&phrase, "%s %d %d %d %s %s\n", d.Patient, d.RecordOrder, s.Start, s.End, typ, s.Text)
		}
		if d.Text != "" {
			haveText = true
		}
		fmt.Fprintf(&text, "START_OF_RECORD=%s||||%d||||\n%s%s\n", d.Patient, d.RecordOrder, d.Text, physioEndOfRecord)
	}
	out := []File{{Name: "id.deid", Data: deid.Bytes()}, {Name: "id-phi.phrase", Data: phrase.Bytes()}}
	if haveText {
		out = append(out, File{Name: "id.text", Data: text.Bytes()})
	}
	return out, nil
}
