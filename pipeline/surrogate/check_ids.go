package surrogate

import (
	"slices"
	"strings"
	"unicode"

	"deidcorpus/pipeline"
)

// idSet is the identifiers searched in one patient's records: each as its
// folded token sequence (see tokens), with the proper prefixes of the longer
// ones, at which a scan extends a sequence.
type idSet struct {
	ids     map[string]idOf
	prefix  map[string]bool
	longest int // tokens
	// The first bytes and the lengths (up to 63) of the ids' first tokens:
	// most tokens of a text begin none, and are passed without a lookup.
	firstByte [256]bool
	firstLen  uint64
}

// idOf is what a sequence of an idSet is the identifier of.
type idOf struct{ kind, id string }

// patientIDs returns the identifiers searched in the text of a patient's
// documents: each of their ids, the part of a document id after the
// patient's id and a separator ("07" of "100234-07"), and the patient's id;
// those of them that are distinctive (distinctiveID). An id that is both a
// document's and its patient's (a document without a patient is its own
// patient) is a document id. A find is the id as whole tokens, so "1002"
// is not found in "10023", and separators are not compared ("100234-07" is
// found written "100234 07"); an id glued to a word ("MRN100234") is not
// found.
func patientIDs(patient string, docs []string) idSet {
	s := idSet{ids: map[string]idOf{}, prefix: map[string]bool{}}
	pt := tokens(patient)
	for _, id := range docs {
		t := tokens(id)
		s.add(t, DocumentIDKind, id)
		if len(pt) > 0 && len(t) > len(pt) && slices.Equal(t[:len(pt)], pt) {
			s.add(t[len(pt):], DocumentIDKind, id)
		}
	}
	s.add(pt, PatientIDKind, patient)
	return s
}

func (s *idSet) add(t []string, kind, id string) {
	if !distinctiveID(t) {
		return
	}
	k := strings.Join(t, " ")
	if _, ok := s.ids[k]; ok {
		return
	}
	s.ids[k] = idOf{kind, id}
	s.longest = max(s.longest, len(t))
	s.firstByte[t[0][0]] = true
	s.firstLen |= 1 << min(len(t[0]), 63)
	for i, n := 0, 0; i < len(t)-1; i++ {
		n += len(t[i])
		s.prefix[k[:n]] = true
		n++ // the space
	}
}

// distinctiveID reports whether an identifier (its tokens) is searched in
// the text: one that is a number needs five digits or more (shorter numbers
// are ages, doses, years, times, room and list numbers); one with letters
// needs a digit, and three or more ("record-318", "A1234"): letters alone
// are a word or a name (names are spans, and the leak check's), and a word
// with a small number is ordinary text ("note 1", "day 12", "SpO2"). So an
// id searched has four letters and digits or more. Separators do not count.
func distinctiveID(t []string) bool {
	letters, digits := 0, 0
	for _, w := range t {
		for _, r := range w {
			if unicode.IsDigit(r) {
				digits++
			} else {
				letters++
			}
		}
	}
	switch {
	case digits == 0:
		return false
	case letters == 0:
		return digits >= 5
	}
	return digits >= 3
}

// scanIDs looks for a patient's identifiers in one of their output
// documents, d, whose original is o and whose tokens scanTokens returned.
// Where several ids begin at a token, the longest is the find ("100234-07",
// not the patient's "100234" in it), and the scan goes on after it. A find
// that lies in surrogates alone (spans whose text the run replaced) is left:
// the run drew them without regard to the source's ids, and one that spells
// an id is a coincidence, not a copy (a shifted date "2075-03-18" spells the
// note "2075-03"); text copied from the source, kept spans included, is the
// source's.
func scanIDs(patient string, d pipeline.Document, o *pipeline.Document, toks []scanToken, folded []byte, ids idSet) []IdentifierLeak {
	if len(ids.ids) == 0 {
		return nil
	}
	var out []IdentifierLeak
	var ix *pipeline.Index
	var surrogates [][2]int // the bytes of the spans replaced
	var arr [128]byte
	for i := 0; i < len(toks); i++ {
		if first := folded[toks[i].fs:toks[i].fe]; len(first) == 0 || !ids.firstByte[first[0]] || ids.firstLen&(1<<min(len(first), 63)) == 0 {
			continue
		}
		buf := arr[:0]
		end, of := -1, idOf{}
		for j := i; j < len(toks) && j-i < ids.longest; j++ {
			if j > i {
				buf = append(buf, ' ')
			}
			buf = append(buf, folded[toks[j].fs:toks[j].fe]...)
			if hit, ok := ids.ids[string(buf)]; ok {
				end, of = j, hit
			}
			if !ids.prefix[string(buf)] {
				break
			}
		}
		if end < 0 {
			continue
		}
		if ix == nil {
			ix = pipeline.NewIndex(d.Text)
			for k, s := range d.Spans {
				if s.Text != o.Spans[k].Text && 0 <= s.Start && s.Start <= s.End && s.End <= ix.Len() {
					surrogates = append(surrogates, [2]int{ix.Byte(s.Start), ix.Byte(s.End)})
				}
			}
		}
		if inSurrogates(toks[i:end+1], surrogates) {
			continue // a find from a later token may reach copied text
		}
		bs, be := toks[i].start, toks[end].end
		out = append(out, IdentifierLeak{Patient: patient, Doc: d.ID, Kind: of.kind, ID: of.id, Value: d.Text[bs:be],
			Start: ix.CodePoint(bs), End: ix.CodePoint(be)})
		i = end
	}
	return out
}

// inSurrogates reports whether every token lies in one of the spans.
func inSurrogates(toks []scanToken, spans [][2]int) bool {
	for _, t := range toks {
		if !slices.ContainsFunc(spans, func(s [2]int) bool { return s[0] <= t.start && t.end <= s[1] }) {
			return false
		}
	}
	return true
}
