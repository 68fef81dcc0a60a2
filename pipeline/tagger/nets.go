package tagger

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

// Safety nets: what a CRF trained on a few hundred notes cannot learn,
// added at the privacy point after the model. Each is a layer a model's
// caller can switch off, and each counts the spans it added (NetReport), so
// a run says what each bought.

// Nets switches the safety nets.
type Nets struct {
	// Patterns tags the shapes of e-mails, URLs, phone numbers, long
	// identifiers and dates written in words (Spanish and English).
	Patterns bool `json:"patterns"`
	// Lists tags capitalized phrases of the language packs' lists
	// (municipalities, provinces, countries, hospitals) as the model's
	// place and hospital types.
	Lists bool `json:"lists"`
	// Propagation tags every whole-word recurrence of a tagged string in
	// the patient's notes and, for places and institutions, in every note
	// tagged with it.
	Propagation bool `json:"propagation"`
}

// DefaultNets runs every net.
func DefaultNets() Nets { return Nets{Patterns: true, Lists: true, Propagation: true} }

// NetReport counts the spans each net added.
type NetReport struct {
	Patterns    int `json:"patterns"`
	Lists       int `json:"lists"`
	Propagation int `json:"propagation"`
}

// Add sums two reports (a job's batches).
func (r NetReport) Add(o NetReport) NetReport {
	return NetReport{r.Patterns + o.Patterns, r.Lists + o.Lists, r.Propagation + o.Propagation}
}

// netPattern is one pattern and the types it is tagged as: the first the
// model knows, across tag sets.
type netPattern struct {
	re    *regexp.Regexp
	types []string
	// digits a match needs: a phone-shaped number with fewer is a dose or
	// a lab value.
	digits int
}

const (
	monthsES = `enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre`
	monthsEN = `January|February|March|April|May|June|July|August|September|October|November|December`
)

var netPatterns = []netPattern{
	{regexp.MustCompile(`[\pL\pN._%+-]+@[\pL\pN-]+(?:\.[\pL\pN-]+)+`), []string{"CORREO_ELECTRONICO", "EMAIL"}, 0},
	{regexp.MustCompile(`(?i)\b(?:https?://|www\.)[^\s<>"]+[\pL\pN/]`), []string{"URL_WEB", "URL"}, 0},
	{regexp.MustCompile(`(?:\+\d{1,3}[ .-]?)?\(?\d{2,4}\)?(?:[ .-]?\d{2,4}){2,4}`), []string{"NUMERO_TELEFONO", "PHONE"}, 9},
	{regexp.MustCompile(`\b[\pL]{0,4}[-/ ]?\d{6,}[-/]?[\pL\pN]{0,3}\b`), []string{"ID_SUJETO_ASISTENCIA", "MEDICALRECORD", "IDNUM"}, 0},
	{regexp.MustCompile(`(?i)\b\d{1,2}\s+de\s+(?:` + monthsES + `)(?:\s+(?:de|del)\s+\d{4})?|\b(?:` + monthsES + `)\s+(?:de|del)\s+\d{4}`),
		[]string{"FECHAS", "DATE"}, 0},
	{regexp.MustCompile(`\b(?:` + monthsEN + `)\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:` + monthsEN + `)(?:,?\s+\d{4})?`),
		[]string{"FECHAS", "DATE"}, 0},
}

// applyNets runs the switched-on nets over tagged documents, in order:
// patterns and lists, then propagation, which spreads what they found too.
func (m *Model) applyNets(docs []pipeline.Document, tagged []*taggedDoc, n Nets) NetReport {
	var r NetReport
	for _, td := range tagged {
		if n.Patterns {
			r.Patterns += m.netPatterns(td)
		}
		if n.Lists {
			r.Lists += m.netLists(td)
		}
	}
	if n.Propagation {
		r.Propagation = m.netPropagate(docs, tagged)
	}
	return r
}

// typeIndex returns the index of the first of names the model knows.
func (m *Model) typeIndex(names ...string) (int, bool) {
	for _, name := range names {
		if i := slices.IndexFunc(m.Types, func(t SpanType) bool { return t.Type == name }); i >= 0 {
			return i, true
		}
	}
	return 0, false
}

// addSpan adds the span of tokens overlapping bytes [start, end) unless it
// overlaps a span already there.
func (td *taggedDoc) addSpan(start, end, typ int) bool {
	first, last := -1, -1
	for i, t := range td.tk.Tokens {
		if t.End > start && t.Start < end {
			if first < 0 {
				first = i
			}
			last = i + 1
		}
	}
	sp := tokSpan{first, last, typ}
	if first < 0 || overlapsAny(td.pred, sp) {
		return false
	}
	td.pred = append(td.pred, sp)
	return true
}

func (m *Model) netPatterns(td *taggedDoc) int {
	added := 0
	for _, p := range netPatterns {
		ty, ok := m.typeIndex(p.types...)
		if !ok {
			continue
		}
		for _, loc := range p.re.FindAllStringIndex(td.tk.Text, -1) {
			if digits(td.tk.Text[loc[0]:loc[1]]) < p.digits {
				continue
			}
			if td.addSpan(loc[0], loc[1], ty) {
				added++
			}
		}
	}
	return added
}

// listTypes maps a pack list to the types its phrases are tagged as.
var listTypes = map[string][]string{
	"city": {"TERRITORIO", "CITY"}, "region": {"TERRITORIO", "STATE"}, "state": {"TERRITORIO", "STATE"},
	"country": {"PAIS", "COUNTRY"}, "hospital": {"HOSPITAL"},
}

// netLists tags the capitalized phrases (one to four words) of the packs'
// place and hospital lists, longest first.
func (m *Model) netLists(td *taggedDoc) int {
	lex, ok := lookupLexicon(PacksLexicon)
	if !ok {
		return 0
	}
	tk, added := td.tk, 0
	for i := 0; i < len(tk.Tokens); i++ {
		if !isCapitalized(tk.Word(i)) || utf8.RuneCountInString(tk.Word(i)) < 4 {
			continue
		}
		for n := min(4, len(tk.Tokens)-i); n >= 1; n-- {
			phrase := tk.Text[tk.Tokens[i].Start:tk.Tokens[i+n-1].End]
			ty, ok := m.listType(lex.Lookup(phrase))
			if ok && td.addSpan(tk.Tokens[i].Start, tk.Tokens[i+n-1].End, ty) {
				added++
				i += n - 1
				break
			}
		}
	}
	return added
}

func (m *Model) listType(lists []string) (int, bool) {
	for _, l := range lists {
		// A first name ("Dolores"), a month or a profession is a common
		// word as often as a place; a surname is PHI too ("Toledo").
		if strings.HasPrefix(l, "first") || l == "month" || l == "weekday" || l == "profession" {
			return 0, false
		}
	}
	for _, l := range lists {
		if names, ok := listTypes[l]; ok {
			if ty, ok := m.typeIndex(names...); ok {
				return ty, true
			}
		}
	}
	return 0, false
}

// netPropagate tags the recurrences of every tagged string: in the
// patient's notes for every type, in every note for places and
// institutions (category LOCATION).
func (m *Model) netPropagate(docs []pipeline.Document, tagged []*taggedDoc) int {
	patients := map[string][]int{}
	var corpus []trustedTerm
	seen := map[string]bool{}
	for i, d := range docs {
		key := cmp.Or(d.Patient, "\x00"+d.ID)
		patients[key] = append(patients[key], i)
		for _, t := range netTerms(m, tagged[i]) {
			if m.Types[t.typ].Category == "LOCATION" && !seen[t.text] {
				seen[t.text] = true
				corpus = append(corpus, t)
			}
		}
	}
	added := 0
	for _, members := range patients {
		var terms []trustedTerm
		for _, i := range members {
			terms = append(terms, netTerms(m, tagged[i])...)
		}
		terms = append(terms, corpus...)
		for _, i := range members {
			added += tagged[i].mark(terms)
		}
	}
	return added
}

// netTerms are a document's tagged strings worth looking for: a letter or
// digit and three characters at least.
func netTerms(m *Model, td *taggedDoc) []trustedTerm {
	var out []trustedTerm
	for _, p := range td.pred {
		text := td.tk.Text[td.tk.Tokens[p.first].Start:td.tk.Tokens[p.last-1].End]
		if utf8.RuneCountInString(text) >= 3 && hasAlnum(text) {
			out = append(out, trustedTerm{text, p.typ})
		}
	}
	return out
}

// netMaxTokens bounds the terms propagation looks for, in tokens.
const netMaxTokens = 8

// mark tags the whole-word occurrences of terms not yet tagged, longest
// first: every run of up to netMaxTokens tokens is looked up, so a note
// costs the same whatever the number of terms.
func (td *taggedDoc) mark(terms []trustedTerm) int {
	types := make(map[string]int, len(terms))
	for _, t := range terms {
		if _, ok := types[t.text]; !ok {
			types[t.text] = t.typ
		}
	}
	tk, added := td.tk, 0
	for i := 0; i < len(tk.Tokens); i++ {
		for n := min(netMaxTokens, len(tk.Tokens)-i); n >= 1; n-- {
			ty, ok := types[tk.Text[tk.Tokens[i].Start:tk.Tokens[i+n-1].End]]
			if !ok {
				continue
			}
			if sp := (tokSpan{i, i + n, ty}); !overlapsAny(td.pred, sp) {
				td.pred = append(td.pred, sp)
				added++
				i += n - 1
			}
			break
		}
	}
	return added
}
