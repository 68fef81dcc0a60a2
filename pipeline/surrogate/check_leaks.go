package surrogate

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

// replacedValues is the set of a patient's replaced originals, each with the
// type of its first span, and the parts of their names: what a leak is.
func replacedValues(pairs []spanPair, pol *Policy, lang string) *valueSet {
	vals := newValueSet()
	for _, pr := range pairs {
		if pr.class != replacedSpan {
			continue
		}
		vals.addTyped(pr.o.Text, pr.o.Type)
		if pol.searchedAsName(pr.rule, pr.o.Category, pr.o.Type) {
			for _, part := range nameParts(pr.o.Text, lang) {
				vals.addTyped(part, pr.o.Type)
			}
		}
	}
	return vals
}

// nameParts are the runs of two or more words of a name, from one name word
// to another, short of the whole name ("García López" and "Juan García" of
// "Dr. Juan García López"): a name is also written without its first name
// or its second surname, and such a copy is still the person's.
func nameParts(name, lang string) []string {
	ws := splitName(name, lang)
	var at []int // the name words' indexes in ws
	for i, w := range ws {
		if w.role != roleLiteral && w.role != roleInitial {
			at = append(at, i)
		}
	}
	var out []string
	for a := range at {
		for b := a + 1; b < len(at); b++ {
			if a == 0 && b == len(at)-1 {
				continue // the whole name
			}
			var part strings.Builder
			for _, w := range ws[at[a] : at[b]+1] {
				part.WriteString(w.text)
			}
			out = append(out, part.String())
		}
	}
	return out
}

// sourceOffset is the code point of the source document at which text
// copied unchanged into its surrogate, at code point at, stands: at moved
// back by what the surrogates before it added, the spans' and those of the
// occurrences propagated into the document. The spans of both are in the
// same order (resynthesis re-aligns them one for one).
func sourceOffset(orig, sur pipeline.Document, props []Propagation, at int) int {
	if len(orig.Spans) != len(sur.Spans) {
		return at
	}
	moved := 0
	for k, s := range sur.Spans {
		if s.End <= at {
			o := orig.Spans[k]
			moved += (o.End - o.Start) - (s.End - s.Start)
		}
	}
	for _, p := range props {
		if p.End <= at {
			moved += (p.SourceEnd - p.SourceStart) - (p.End - p.Start)
		}
	}
	return at + moved
}

// docFinds are one document's finds.
type docFinds struct {
	leaks, unannotated []Leak
	ids                []IdentifierLeak
}

// scanToken is a token of a scanned document: its bytes in the text, then in
// the folded buffer.
type scanToken struct{ start, end, fs, fe int }

// scanTokens returns the tokens of a document's text (the runs of letters
// and digits that tokens splits a value into), folded into one buffer.
func scanTokens(text string) ([]scanToken, []byte) {
	var toks []scanToken
	folded := make([]byte, 0, len(text))
	start := -1
	for i, r := range text {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if alnum && start < 0 {
			start = i
		} else if !alnum && start >= 0 {
			fs := len(folded)
			folded = appendFold(folded, text[start:i])
			toks = append(toks, scanToken{start, i, fs, len(folded)})
			start = -1
		}
	}
	if start >= 0 {
		fs := len(folded)
		folded = appendFold(folded, text[start:])
		toks = append(toks, scanToken{start, len(text), fs, len(folded)})
	}
	return toks, folded
}

// scan looks for the patient's replaced values in one output document, whose
// tokens scanTokens returned. A single letter alone (an initial) is not
// searched: it occurs everywhere and identifies no one.
func scan(patient string, d pipeline.Document, toks []scanToken, folded []byte, vals *valueSet, pol *Policy) docFinds {
	var out docFinds
	if vals == nil || len(vals.m) == 0 {
		return out
	}
	var ix *pipeline.Index
	var spans [][2]int
	var arr [256]byte
	buf := arr[:0]
	for i := range toks {
		buf = valuesAt(toks, folded, i, vals, buf, func(j int, key []byte) bool {
			v := string(key)
			if j == i && (utf8.RuneCountInString(v) < 2 || vals.abbreviation(v, d.Text[toks[i].start:toks[i].end])) {
				return true
			}
			if ix == nil {
				ix = pipeline.NewIndex(d.Text)
				spans = make([][2]int, len(d.Spans))
				for k, s := range d.Spans {
					spans[k] = [2]int{ix.Byte(s.Start), ix.Byte(s.End)}
				}
			}
			bs, be := toks[i].start, toks[j].end
			l := Leak{Patient: patient, Doc: d.ID, Value: d.Text[bs:be], Start: ix.CodePoint(bs), End: ix.CodePoint(be)}
			touched, at := 0, -1 // the spans the find overlaps, and the last of them
			for k, s := range spans {
				if bs < s[1] && s[0] < be {
					touched++
					l.Type, at = d.Spans[k].Type, k
				}
			}
			if touched > 1 && joinsSurrogates(toks[i:j+1], spans) || touched == 1 && inMaskCode(d, at, spans[at], bs, be, pol) {
				return true
			}
			if touched > 0 {
				out.leaks = append(out.leaks, l)
			} else if l.Type = vals.typ[v]; spelled(vals, v, l.Type, d.Text, bs, be, pol) {
				out.unannotated = append(out.unannotated, l)
			}
			return true
		})
	}
	return out
}

// inMaskCode reports whether a find lies in the label of span k's mask
// where that label is a code (Policy.maskCode): "[DATE]" spells the
// surname Date, and copies nothing.
func inMaskCode(d pipeline.Document, k int, bytes [2]int, bs, be int, pol *Policy) bool {
	s := d.Spans[k]
	s.Text = d.Text[bytes[0]:bytes[1]]
	ls, le, ok := pol.maskCode(s)
	return ok && bytes[0]+ls <= bs && be <= bytes[0]+le
}

// joinsSurrogates reports whether every token of a find lies inside one of
// the spans and they are not all in one: the end of one surrogate and the
// start of the next, joined by what separates them ("HOSPITAL-1    12/08"
// reads "1 12"). Such a find is a coincidence of two surrogates, not a copy:
// a copied value lies in one span, or reaches text outside the spans.
func joinsSurrogates(toks []scanToken, spans [][2]int) bool {
	in := -1
	for _, t := range toks {
		k := slices.IndexFunc(spans, func(s [2]int) bool { return s[0] <= t.start && t.end <= s[1] })
		if k < 0 {
			return false
		}
		if in >= 0 && k != in {
			return true
		}
		in = k
	}
	return false
}

// spelled reports whether a find in text copied from the original is the
// value rather than an ordinary word or number that spells it: a surname
// "White" written "white" ("white matter"), the state "CT" or "PA" outside an
// address ("CT HEAD", "CHEST, PA AND LATERAL"), an age of 95 that is a
// saturation ("SpO2 95%"), a date "3/2" that is a list's "3" and "2" on two
// lines. Finds that touch a surrogate are leaks and are never judged so.
func spelled(vals *valueSet, v, typ, text string, bs, be int, pol *Policy) bool {
	w := text[bs:be]
	if !vals.lower[v] && strings.ContainsFunc(w, unicode.IsLetter) && !strings.ContainsFunc(w, unicode.IsUpper) {
		return false
	}
	if !strings.Contains(v, " ") && vals.exact[strings.ToUpper(v)] && len(v) <= 3 {
		// A state or country abbreviation: after "City, " and before no
		// word, or before a ZIP code.
		prev := strings.TrimRight(text[:bs], " \t")
		next := nextWord(text[be:])
		return strings.HasSuffix(prev, ",") && !isLetters(next) || len(next) == 5 && isDigits(next)
	}
	if isDigits(strings.ReplaceAll(v, " ", "")) {
		if strings.ContainsAny(w, "\n\r") {
			return false
		}
		if pol.Rule("", typ).Strategy == Age || pol.categoryOf("", typ) == "AGE" {
			// An age, replaced or masked, is a number of years: "95 yo",
			// "95-year-old", "aged 95"; not the 84 of "BP 142/84".
			next := fold(nextWord(text[be:]))
			prevWords := strings.Fields(fold(text[max(0, bs-12):bs]))
			prev := ""
			if len(prevWords) > 0 {
				prev = strings.Trim(prevWords[len(prevWords)-1], ":")
			}
			return strings.HasPrefix(next, "y") || strings.HasPrefix(next, "ano") || strings.HasPrefix(next, "a") && len(next) == 1 ||
				prev == "age" || prev == "aged" || prev == "edad"
		}
	}
	return true
}

// nextWord returns the run of letters or digits after spaces and hyphens at
// the start of s.
func nextWord(s string) string {
	s = strings.TrimLeft(s, " \t-")
	end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if end < 0 {
		end = len(s)
	}
	return s[:end]
}
