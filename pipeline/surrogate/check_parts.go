package surrogate

import (
	"cmp"
	"slices"

	"deidcorpus/pipeline"
)

// partValues are the words of a patient's replaced names that the check
// looks for alone (see parts.go), each with its name's type: those of four
// letters or more that neither the corpus nor the patient's notes write in
// lower case (common), and that the name does not write in capitals. (A
// common word is a find only after a title, which propagation replaces and
// the check does not look for; a word found in capitals, "ELISA", is not
// a find of the name "Elisa".)
func partValues(pairs []spanPair, pol *Policy, common func(w string) bool, lang string) *valueSet {
	vals := newValueSet()
	for _, pr := range pairs {
		if pr.class != replacedSpan || !pol.searchedAsName(pr.rule, pr.o.Category, pr.o.Type) {
			continue
		}
		for _, p := range partWords(pr.o.Text, lang, common) {
			if !p.titled && !allCaps(p.text) {
				vals.addTyped(p.text, pr.o.Type)
			}
		}
	}
	return vals
}

// acrossCorpus is what the check looks for beyond a patient's own values:
// the corpus's values (wide, nil when the check knows only its part of the
// run) and, by document, the occurrences the run propagated, whose
// surrogates may spell another patient's place as any surrogate may.
type acrossCorpus struct {
	wide  *corpusWide
	props map[string][]Propagation
}

// finds adds to a document's unannotated finds those of the name words of
// its patient (parts) and of the corpus's values, in text copied from the
// source: outside the spans and the propagated occurrences, and apart from
// what was found already. They are returned in text order.
func (a acrossCorpus) finds(patient string, d pipeline.Document, parts *valueSet, pol *Policy, lang string, found docFinds) []Leak {
	out := found.unannotated
	if len(parts.m) == 0 && a.wide.len() == 0 {
		return out
	}
	toks, folded := scanTokens(d.Text)
	var ix *pipeline.Index // made at the first candidate: most notes hold none
	cp := func(b int) int {
		if ix == nil {
			ix = pipeline.NewIndex(d.Text)
		}
		return ix.CodePoint(b)
	}
	taken := make([][2]int, 0, len(d.Spans)+len(a.props[d.ID])+len(found.leaks)+len(out)) // code points
	for _, s := range d.Spans {
		taken = append(taken, [2]int{s.Start, s.End})
	}
	for _, p := range a.props[d.ID] {
		taken = append(taken, [2]int{p.Start, p.End})
	}
	for _, l := range slices.Concat(found.leaks, out) {
		taken = append(taken, [2]int{l.Start, l.End})
	}
	free := func(start, end int) bool {
		return !slices.ContainsFunc(taken, func(s [2]int) bool { return start < s[1] && s[0] < end })
	}
	if len(parts.m) > 0 {
		for _, l := range scan(patient, d, toks, folded, parts, pol).unannotated {
			if free(l.Start, l.End) && capitalized(l.Value) && !allCaps(l.Value) {
				out = append(out, l)
				taken = append(taken, [2]int{l.Start, l.End})
			}
		}
	}
	var buf []byte
	for i := 0; i < len(toks); i++ {
		var best int
		var v wideValue
		best, v, buf = a.wide.at(toks, folded, i, buf, func(j int, v wideValue) bool {
			return fitsFind(d.Text, toks, folded, i, j, v.need(i == j), lang) &&
				free(cp(toks[i].start), cp(toks[j].end))
		})
		if best < 0 {
			continue
		}
		bs, be := toks[i].start, toks[best].end
		out = append(out, Leak{Patient: patient, Doc: d.ID, Type: a.wide.labels[v.label][1], Value: d.Text[bs:be],
			Start: cp(bs), End: cp(be)})
		i = best
	}
	slices.SortStableFunc(out, func(x, y Leak) int { return cmp.Compare(x.Start, y.Start) })
	return out
}
