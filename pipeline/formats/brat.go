package formats

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
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
		Name: "brat",
		Exts: []string{".txt", ".ann"},
		Doc: "BRAT standoff: NAME.txt with the text and NAME.ann with text-bound annotations (T lines, code-point offsets); " +
			"fragments split only by whitespace become one span, other discontinuous spans are an error; " +
			"AnnotatorNotes become span comments; relations, events, attributes and normalizations are not kept (the import counts them)",
		Read:       ReadBRAT,
		ScanSource: scanBRAT,
		Write:      WriteBRAT,
		Batched:    true,
	})
}

// ReadBRAT parses BRAT standoff pairs: each NAME.txt with its NAME.ann (a
// .txt without an .ann is a document without spans; an .ann without a .txt is
// an error). What BRAT can say that a span cannot hold is handled so:
//   - text-bound annotations (T) become spans; the type is the label;
//   - a discontinuous annotation whose fragments are separated only by
//     whitespace (BRAT splits spans at line breaks) becomes one span from the
//     first fragment's start to the last one's end; any other discontinuous
//     annotation is an error, since one span cannot hold it;
//   - AnnotatorNotes (#) on a T annotation become the span's comment;
//   - relations (R), events (E), attributes (A, M), normalizations (N) and
//     equivalences (*) carry no PHI span of their own and are not kept:
//     opt.Dropped is told of each.
func ReadBRAT(files []File, opt ReadOptions) ([]pipeline.Document, error) {
	var docs []pipeline.Document
	err := scanBRAT(Files(files), opt, func(d pipeline.Document) error {
		docs = append(docs, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return docs, nil
}

// scanBRAT is ReadBRAT of a Source, a document at a time: a pair is parsed
// and given as soon as both of its files have come, so memory holds an
// annotation file only until its text arrives (in a directory or an
// archive, read in name order, NAME.ann comes just before NAME.txt). A text
// that comes without its annotation file is not held: it is read when its
// annotation file comes after it, else in a second reading of the source,
// after the first, as a document without spans: a thousand notes without
// .ann files would otherwise all be in memory at once. An annotation file
// without its text is an error.
func scanBRAT(src Source, opt ReadOptions, fn func(pipeline.Document) error) error {
	key := func(name string) string { return strings.TrimSuffix(name, path.Ext(name)) }
	isText := func(name string) bool { return strings.EqualFold(path.Ext(name), ".txt") }
	seen := map[string]string{} // document id -> its text file
	bad := fileErrors{max: opt.KeepGoing}
	// give gives a document to fn; an error of its files is noted, and the
	// scan reads on until bad holds as many as it may.
	give := func(txt File, ann *File) error {
		d, err := ReadBRATPair(txt, ann, opt)
		if err != nil {
			return bad.add(err)
		}
		if prev, dup := seen[d.ID]; dup {
			return bad.add(errorf(txt.where(), 0, "", "document id %q also comes from %s", d.ID, prev))
		}
		seen[d.ID] = txt.where()
		return fn(d)
	}
	anns := map[string]File{}     // by key: an annotation file (read) whose text has not come yet
	waiting := 0                  // ... their bytes
	later := map[string]File{}    // by key: a text (unread) without its annotation file
	laterAnn := map[string]File{} // by key: an annotation file that came after its text, which could not be read again then
	err := src(func(f File) error {
		if !hasExt(f.Name, []string{".txt", ".ann"}) {
			return nil
		}
		k := key(f.Name)
		if txt, ok := later[k]; ok {
			if isText(f.Name) {
				return bad.add(errorf(f.where(), 0, "", "the same file as %s", txt.where()))
			}
			ann, err := f.loaded()
			if err != nil {
				return bad.add(err)
			}
			if txt, err = txt.loaded(); err != nil {
				// Its archive is closed (another one given): it is read
				// again with the texts left over.
				laterAnn[k] = ann
				return nil
			}
			delete(later, k)
			return give(txt, &ann)
		}
		if !isText(f.Name) {
			if other, ok := anns[k]; ok {
				return bad.add(errorf(f.where(), 0, "", "the same file as %s", other.where()))
			}
			ann, err := f.loaded()
			if err != nil {
				return bad.add(err)
			}
			if waiting += len(ann.Data); waiting > maxWaitingAnn {
				return errorf(f.where(), 0, "", "more than %s of annotation files wait for their text files: give each NAME.ann "+
					"in the same directory or archive as its NAME.txt", size(maxWaitingAnn))
			}
			anns[k] = ann
			return nil
		}
		ann, ok := anns[k]
		if !ok {
			later[k] = f
			return nil
		}
		delete(anns, k)
		waiting -= len(ann.Data)
		txt, err := f.loaded()
		if err != nil {
			return bad.add(err)
		}
		return give(txt, &ann)
	})
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(anns)) {
		if err := bad.add(errorf(anns[k].where(), 0, "", "annotation file without its text file %s.txt", path.Base(k))); err != nil {
			return err
		}
	}
	if err := scanLater(src, later, laterAnn, key, &bad, give); err != nil {
		return err
	}
	if err := bad.err(); err != nil {
		return err
	}
	if len(seen) == 0 {
		return ErrNoDocuments
	}
	return nil
}

// scanLater reads src again for the texts that came without their
// annotation files (later, by key), reading each when it comes and giving
// it with the annotation file that came after it, if any; it stops when
// none is left.
func scanLater(src Source, later, anns map[string]File, key func(string) string, bad *fileErrors,
	give func(txt File, ann *File) error) error {
	if len(later) == 0 {
		return nil
	}
	err := src(func(f File) error {
		k := key(f.Name)
		if txt, ok := later[k]; !ok || !hasExt(f.Name, []string{".txt"}) || txt.where() != f.where() {
			return nil
		}
		delete(later, k)
		txt, err := f.loaded()
		if err != nil {
			err = bad.add(err)
		} else if ann, ok := anns[k]; ok {
			err = give(txt, &ann)
		} else {
			err = give(txt, nil)
		}
		if err == nil && len(later) == 0 {
			return errAllRead
		}
		return err
	})
	if err == errAllRead {
		return nil
	}
	return err
}

// maxWaitingAnn bounds the annotation files held for their texts: in a
// directory or an archive NAME.ann comes just before NAME.txt, so only
// annotation files given apart from their texts (another directory given
// first) wait, and an import of only .ann files would otherwise hold them
// all.
const maxWaitingAnn = 64 << 20

// errAllRead stops a reading that has found what it looked for.
var errAllRead = errors.New("all read")

// ReadBRATPair parses one document: its text file and its annotation file
// (nil for none).
func ReadBRATPair(txt File, ann *File, opt ReadOptions) (pipeline.Document, error) {
	var doc pipeline.Document
	doc.ID, doc.Patient, doc.RecordOrder = DocumentID(txt.Name)
	if err := checkUTF8(txt); err != nil {
		return doc, err
	}
	doc.Text = string(txt.Data)
	if ann == nil {
		return doc, nil
	}
	if err := checkUTF8(*ann); err != nil {
		return doc, err
	}
	ix := pipeline.NewIndex(doc.Text)
	var (
		lines []int
		byID  = map[string]int{} // T id -> index in doc.Spans
		notes []bratNote
	)
	for i, raw := range splitLines(ann.Data) {
		n := i + 1
		line := string(raw)
		if strings.TrimSpace(line) == "" {
			continue
		}
		id, rest, ok := strings.Cut(line, "\t")
		if !ok || id == "" {
			return doc, errorf(ann.where(), n, "", "want an id, a tab and the annotation, got a line without a tab after its id")
		}
		switch id[0] {
		case 'T':
			s, err := parseTextBound(id, rest, ix)
			if err != nil {
				return doc, &Error{File: ann.where(), Line: n, Field: id, Err: err}
			}
			if _, dup := byID[id]; dup {
				return doc, errorf(ann.where(), n, id, "annotation id used twice")
			}
			byID[id] = len(doc.Spans)
			doc.Spans = append(doc.Spans, s)
			lines = append(lines, n)
		case '#':
			kind, note, _ := strings.Cut(rest, "\t")
			k, target, _ := strings.Cut(kind, " ")
			if k == "AnnotatorNotes" && strings.HasPrefix(target, "T") {
				notes = append(notes, bratNote{line: n, target: target, text: note})
			}
		case 'R', 'E', 'A', 'M', 'N', '*':
			// No span of their own (see ReadBRAT): the import says how
			// many it lost.
			if opt.Dropped != nil {
				opt.Dropped(bratKinds[id[0]])
			}
		default:
			return doc, errorf(ann.where(), n, id, "unknown annotation kind %q (want T, R, E, A, M, N, * or #)", id[:1])
		}
	}
	for _, nt := range notes {
		i, ok := byID[nt.target]
		if !ok {
			return doc, errorf(ann.where(), nt.line, nt.target, "note on an annotation that does not exist")
		}
		if c := doc.Spans[i].Comment; c != "" {
			doc.Spans[i].Comment = c + "; " + nt.text
		} else {
			doc.Spans[i].Comment = nt.text
		}
	}
	return doc, finishFlat(&doc, ann.where(), lines, opt)
}

// bratKinds names the annotations a document cannot keep.
var bratKinds = map[byte]string{'R': "relation", 'E': "event", 'A': "attribute", 'M': "attribute", 'N': "normalization", '*': "equivalence"}

type bratNote struct {
	line         int
	target, text string
}

// parseTextBound parses "TYPE START END[;START END...]\tTEXT".
func parseTextBound(id, rest string, ix *pipeline.Index) (pipeline.Span, error) {
	s := pipeline.Span{ID: id}
	spec, text, hasText := strings.Cut(rest, "\t")
	typ, offsets, _ := strings.Cut(spec, " ")
	if typ == "" {
		return s, fmt.Errorf("missing label")
	}
	s.Type = typ
	if strings.TrimSpace(offsets) == "" {
		return s, fmt.Errorf("missing offsets: want TYPE START END")
	}
	var frags [][2]int
	for _, fr := range strings.Split(offsets, ";") {
		f := strings.Fields(fr)
		if len(f) != 2 {
			return s, fmt.Errorf("offsets %q: want START END pairs separated by ';'", offsets)
		}
		a, err1 := strconv.Atoi(f[0])
		b, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			return s, fmt.Errorf("offsets %q are not integers", offsets)
		}
		if a < 0 || b < a {
			return s, fmt.Errorf("fragment %d %d: start must be at least 0 and not after end", a, b)
		}
		if b > ix.Len() {
			return s, fmt.Errorf("end %d is past the end of the text (%d code points)", b, ix.Len())
		}
		frags = append(frags, [2]int{a, b})
	}
	sort.Slice(frags, func(i, j int) bool { return frags[i][0] < frags[j][0] })
	for i := 1; i < len(frags); i++ {
		if frags[i][0] < frags[i-1][1] {
			return s, fmt.Errorf("fragments %v overlap", frags)
		}
		if gap := ix.Slice(frags[i-1][1], frags[i][0]); strings.TrimSpace(gap) != "" {
			n, unit := utf8.RuneCountInString(gap), "characters"
			if n == 1 {
				unit = "character"
			}
			return s, fmt.Errorf("discontinuous span: fragments are separated by %d %s of text (from %d), which one span cannot leave out",
				n, unit, frags[i-1][1])
		}
	}
	s.Start, s.End = frags[0][0], frags[len(frags)-1][1]
	if len(frags) == 1 && hasText {
		s.Text = text // checked against the document text
	}
	return s, nil
}

var bratID = regexp.MustCompile(`^T[0-9]+$`)

// WriteBRAT renders each document as ID.txt and ID.ann. Span ids are kept
// when all are BRAT ids (T1, T2, ...), else renumbered; a span that crosses a
// line break is written as fragments split there, as BRAT itself does, and
// reads back as one span.
func WriteBRAT(docs []pipeline.Document) ([]File, error) {
	out := make([]File, 0, 2*len(docs))
	for _, d := range docs {
		txtName, err := fileName(d.ID, ".txt")
		if err != nil {
			return nil, err
		}
		ann, err := marshalANN(d)
		if err != nil {
			return nil, fmt.Errorf("document %s: %w", d.ID, err)
		}
		out = append(out, File{Name: txtName, Data: []byte(d.Text)}, File{Name: d.ID + ".ann", Data: ann})
	}
	return out, nil
}

func marshalANN(d pipeline.Document) ([]byte, error) {
	sorted := pipeline.Document{Spans: append([]pipeline.Span(nil), d.Spans...)}
	sorted.SortSpans()
	spans := sorted.Spans
	keepIDs := true
	seen := map[string]bool{}
	for _, s := range spans {
		if !bratID.MatchString(s.ID) || seen[s.ID] {
			keepIDs = false
			break
		}
		seen[s.ID] = true
	}
	ix := pipeline.NewIndex(d.Text)
	var b bytes.Buffer
	notes := 0
	for i, s := range spans {
		if s.Type == "" || strings.ContainsAny(s.Type, " \t\r\n") {
			return nil, fmt.Errorf("span %d [%d:%d]: label %q cannot be a BRAT type (empty or with white space)", i, s.Start, s.End, s.Type)
		}
		if s.Start < 0 || s.End > ix.Len() || s.Start >= s.End {
			return nil, &pipeline.SpanError{Span: s, Msg: "offsets outside the text"}
		}
		id := s.ID
		if !keepIDs {
			id = "T" + strconv.Itoa(i+1)
		}
		var offs, texts []string
		start := s.Start
		flush := func(end int) {
			if t := ix.Slice(start, end); strings.Trim(t, "\r\n") != "" {
				offs = append(offs, fmt.Sprintf("%d %d", start, end))
				texts = append(texts, t)
			}
		}
		for cp := s.Start; cp < s.End; cp++ {
			if c := ix.Slice(cp, cp+1); c == "\n" || c == "\r" {
				flush(cp)
				start = cp + 1
			}
		}
		flush(s.End)
		if len(offs) == 0 {
			return nil, &pipeline.SpanError{Span: s, Msg: "covers only line breaks, which BRAT cannot annotate"}
		}
		fmt.Fprintf(&b, "%s\t%s %s\t%s\n", id, s.Type, strings.Join(offs, ";"), strings.Join(texts, " "))
		if s.Comment != "" {
			if strings.ContainsAny(s.Comment, "\r\n") {
				return nil, &pipeline.SpanError{Span: s, Msg: "comment holds a line break, which a BRAT note cannot"}
			}
			notes++
			fmt.Fprintf(&b, "#%d\tAnnotatorNotes %s\t%s\n", notes, id, s.Comment)
		}
	}
	return b.Bytes(), nil
}
