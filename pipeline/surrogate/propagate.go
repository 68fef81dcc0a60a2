package surrogate

import (
	"slices"
	"strings"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

// Hiding the misses. A gold annotation that marks a value in one place
// often misses it in another ("Murcia" in an affiliation line, a surname
// written again in a signature): copied as written, the original would stand
// in the surrogate text beside its surrogate, which also gives the pair away.
// So where the policy propagates (Policy.Propagate, on by default), an
// annotated value of a name, location, id or contact type, of four letters
// or digits or more, that occurs again in its patient's records outside every
// span is replaced by the value's surrogate. A name is also looked for as its
// run of name words without titles, and without its first name or second
// surname (nameParts), as the leak check looks for it. An occurrence is the
// value's folded tokens as whole tokens (the check's matching, see
// valuesAt): case and accents aside, never part of a longer word, never
// overlapping a span. The surrogate corpus's spans stay the source's, one
// for one: a propagated occurrence is no span of its gold (the annotators
// missed it), and the run lists it (Result.Propagated, Report.Propagated).

// minPropagated is the fewest letters and digits a propagated value has:
// shorter ones ("Ana", "Gil", "3B") are ordinary words and numbers too often.
const minPropagated = 4

// Propagation is an unannotated occurrence of a value its patient's records
// annotate elsewhere, replaced by that value's surrogate. It names no
// original text: where it is and the type of the value it repeats.
type Propagation struct {
	Doc         string `json:"doc"`
	Type        string `json:"type"`  // the annotated value's
	Start       int    `json:"start"` // code points in the output document
	End         int    `json:"end"`
	SourceStart int    `json:"sourceStart"` // code points in the source document
	SourceEnd   int    `json:"sourceEnd"`
}

// misses are the values of one patient's records that a run looks for
// outside the spans.
type misses struct {
	vals *valueSet                // the values' folded token sequences (m, prefix, longest)
	of   map[string]pipeline.Span // by key, the span whose surrogate replaces an occurrence
	need map[string]uint8         // by key, what a find needs (a part's, see parts.go)
}

// missValues collects the values of a patient's records that the policy
// propagates; nil when there are none. Whole values come first: a part of a
// name that spells another value of the records takes that value's surrogate.
// A name's words come last, found alone only with a capital and, where the
// records write them in lower case (a common word), only after a title.
func (g *gen) missValues(docs []pipeline.Document, p patientGroup) *misses {
	pol := g.e.r.Policy
	var m *misses
	add := func(s pipeline.Span, text string, need uint8) {
		t := tokens(text)
		n := 0
		for _, w := range t {
			n += utf8.RuneCountInString(w)
		}
		if n < minPropagated {
			return
		}
		if m == nil {
			m = &misses{vals: newValueSet(), of: map[string]pipeline.Span{}, need: map[string]uint8{}}
		}
		if k := strings.Join(t, " "); !m.vals.m[k] {
			s.Text = text
			k = m.vals.addTokens(t)
			m.of[k] = s
			if need != 0 {
				m.need[k] = need
			}
		}
	}
	var names []pipeline.Span
	for _, i := range p.docs {
		for _, s := range docs[i].Spans {
			if !pol.propagates(s.Category, s.Type) || wordsOnly(pol.Rule(s.Category, s.Type).Strategy, s.Text) {
				continue
			}
			add(s, s.Text, 0)
			if pol.searchedAsName(pol.Rule(s.Category, s.Type), s.Category, s.Type) {
				names = append(names, s)
			}
		}
	}
	for _, s := range names {
		if run := nameRun(s.Text, g.e.lang); run != "" {
			add(s, run, 0)
		}
		for _, part := range nameParts(s.Text, g.e.lang) {
			add(s, part, 0)
		}
	}
	texts := func(yield func(string) bool) {
		for _, i := range p.docs {
			if !yield(docs[i].Text) {
				return
			}
		}
	}
	common := func(w string) bool { return g.e.wide.common(w) || writtenLower(w, texts) }
	for _, s := range names {
		for _, part := range partWords(s.Text, g.e.lang, common) {
			add(s, part.text, part.need())
		}
	}
	return m
}

// nameRun is a name from its first name word to its last, without the
// titles and signs around them ("Juan García" of "Dr. Juan García,"); ""
// for a name without words.
func nameRun(name, lang string) string {
	ws := splitName(name, lang)
	first, last := -1, -1
	for i, w := range ws {
		if w.role != roleLiteral && w.role != roleInitial {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return ""
	}
	var b strings.Builder
	for _, w := range ws[first : last+1] {
		b.WriteString(w.text)
	}
	return b.String()
}

// occurrence is an unannotated occurrence of a value in a source document.
type occurrence struct {
	bs, be int           // bytes of the source text
	cs, ce int           // code points
	of     pipeline.Span // the value's span (see misses.of)
	sur    string
}

// find returns the occurrences of the values in a source document outside
// its spans, in text order: at each token the longest value of the
// patient's that overlaps no span, else the longest of the corpus's (wide),
// then the search goes on after it. A corpus value's occurrence takes the
// surrogate of its own text under the value's label.
func (m *misses) find(d *pipeline.Document, wide *corpusWide, lang string) []occurrence {
	if m == nil && wide.len() == 0 || d.Text == "" {
		return nil
	}
	toks, folded := scanTokens(d.Text)
	var out []occurrence
	var spans [][2]int // bytes, made at the first value found (every span's value is found in it)
	free := func(i, j int) bool {
		if spans == nil {
			spans = spanBytes(d)
		}
		bs, be := toks[i].start, toks[j].end
		return !slices.ContainsFunc(spans, func(s [2]int) bool { return bs < s[1] && s[0] < be })
	}
	var buf []byte
	for i := 0; i < len(toks); {
		best, of := -1, pipeline.Span{}
		if m != nil {
			key := ""
			buf = valuesAt(toks, folded, i, m.vals, buf, func(j int, k []byte) bool {
				if free(i, j) && fitsFind(d.Text, toks, folded, i, j, m.need[string(k)], lang) {
					best, key = j, string(k)
				}
				return true
			})
			if best >= 0 {
				of = m.of[key]
			}
		}
		if best < 0 {
			var v wideValue
			best, v, buf = wide.at(toks, folded, i, buf, func(j int, v wideValue) bool {
				return free(i, j) && fitsFind(d.Text, toks, folded, i, j, v.need(i == j), lang)
			})
			if best >= 0 {
				l := wide.labels[v.label]
				of = pipeline.Span{Category: l[0], Type: l[1], Text: d.Text[toks[i].start:toks[best].end]}
			}
		}
		if best < 0 {
			i++
			continue
		}
		bs, be := toks[i].start, toks[best].end
		cs := utf8.RuneCountInString(d.Text[:bs]) // occurrences are rare: no index of the whole text
		out = append(out, occurrence{bs: bs, be: be, cs: cs, ce: cs + utf8.RuneCountInString(d.Text[bs:be]), of: of})
		i = best + 1
	}
	return out
}

// spanBytes returns the byte offsets of a document's spans, in one walk
// over its text.
func spanBytes(d *pipeline.Document) [][2]int {
	cps := make([]int, 0, 2*len(d.Spans))
	for _, s := range d.Spans {
		cps = append(cps, s.Start, s.End)
	}
	slices.Sort(cps)
	cps = slices.Compact(cps)
	bytes := pipeline.ByteOffsets(d.Text, cps)
	at := func(cp int) int { i, _ := slices.BinarySearch(cps, cp); return bytes[i] }
	out := make([][2]int, len(d.Spans), len(d.Spans)+1) // never nil
	for i, s := range d.Spans {
		out[i] = [2]int{at(s.Start), at(s.End)}
	}
	return out
}

// propagate finds the unannotated occurrences of the patient's values in a
// source document and draws their surrogates: their values' own, since
// every span of the patient's records was replaced before. An occurrence
// whose surrogate would be itself (a value the policy kept after all) is
// left to the check.
func (g *gen) propagate(d *pipeline.Document) []occurrence {
	wide := g.e.wide
	if !g.e.r.Policy.propagating() {
		wide = nil
	}
	occs := g.misses.find(d, wide, g.e.lang)
	out := occs[:0]
	for _, o := range occs {
		text := d.Text[o.bs:o.be]
		s := o.of
		rule := g.e.r.Policy.Rule(s.Category, s.Type)
		if rule.Strategy == Name || rule.Strategy == Redact || fold(text) == fold(s.Text) {
			s.Text = text // its own case; a name is replaced word by word, a redaction as long as the occurrence
		}
		s.Start, s.End = o.cs, o.ce
		o.sur = g.surrogate(d, s, rule, d.Text[max(0, o.bs-16):o.bs])
		if codeStrategy[rule.Strategy] {
			o.sur = g.withAliases(d, o.sur)
		}
		if fold(o.sur) != fold(text) {
			out = append(out, o)
		}
	}
	return out
}

// valuesAt calls fn with the last token j of each value of vals that the
// tokens from i on spell, shortest first, and the value's key, which buf
// holds during the call; fn returns false to stop. It returns buf to reuse.
func valuesAt(toks []scanToken, folded []byte, i int, vals *valueSet, buf []byte, fn func(j int, key []byte) bool) []byte {
	buf = buf[:0]
	for j := i; j < len(toks) && j-i < vals.longest; j++ {
		if j > i {
			buf = append(buf, ' ')
		}
		buf = append(buf, folded[toks[j].fs:toks[j].fe]...)
		if vals.m[string(buf)] {
			if !fn(j, buf) {
				break
			}
		} else if !vals.prefix[string(buf)] {
			break
		}
	}
	return buf
}
