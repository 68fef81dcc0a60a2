package tagger

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

// PostConfig tunes the rules for rare types and the post-processing of Yang
// & Garibaldi section 3.4.
type PostConfig struct {
	// RuleMinPrecision is the share of a rule's matches in the training data
	// that must be gold spans of one type for the rule to be bound to it.
	RuleMinPrecision float64 `json:"rule_min_precision"`
	// RuleOverridePrecision: a rule at least this precise in training
	// replaces the CRF's overlapping spans; a less precise one only fills
	// gaps.
	RuleOverridePrecision float64 `json:"rule_override_precision"`
	// PropagatePrecision: a type's terms are trusted when, in the training
	// gold, at least this share of the other occurrences of its span texts in
	// the same document are annotated with the type too; PropagateMinSpans is
	// the evidence needed.
	PropagatePrecision float64 `json:"propagate_precision"`
	PropagateMinSpans  int     `json:"propagate_min_spans"`
	// AcrossRecords looks for a patient's trusted terms in all of the
	// patient's records, not only the one they were found in.
	AcrossRecords bool `json:"across_records"`
	// TemplatePrecision: a template (Yang Table 2) whose matches in the
	// training data are gold spans of one type at least this often, and at
	// least TemplateMinMatches times, is trusted: its matches the CRF left
	// unlabelled become spans of that type (Yang 3.4, the first strategy
	// for trusted terms).
	TemplatePrecision  float64 `json:"template_precision"`
	TemplateMinMatches int     `json:"template_min_matches"`
	// NameCategory is the category whose trusted terms also yield name
	// permutations ("Harlan Valdez" -> "Valdez, Harlan", "H. Valdez",
	// "Valdez"); "" for none.
	NameCategory string `json:"name_category"`
}

// DefaultPost is the post-processing the reported figures were measured with.
func DefaultPost() PostConfig {
	return PostConfig{
		RuleMinPrecision: 0.5, RuleOverridePrecision: 0.8, PropagatePrecision: 0.9, PropagateMinSpans: 10,
		TemplatePrecision: 0.9, TemplateMinMatches: 20,
		AcrossRecords: true, NameCategory: "NAME",
	}
}

func (c PostConfig) validate() error {
	if c.RuleMinPrecision < 0 || c.RuleMinPrecision > 1 || c.RuleOverridePrecision < 0 || c.RuleOverridePrecision > 1 ||
		c.PropagatePrecision < 0 || c.PropagatePrecision > 1 ||
		c.TemplatePrecision < 0 || c.TemplatePrecision > 1 || c.TemplateMinMatches < 0 {
		return fmt.Errorf("precisions must lie in [0, 1]")
	}
	if c.PropagateMinSpans < 0 {
		return fmt.Errorf("propagate_min_spans must be >= 0")
	}
	return nil
}

// rule finds one rare kind of PHI by pattern. Which of a corpus's types a
// rule emits is learnt from the training data (bindRules), so the rules serve
// any label set.
type rule struct {
	Kind string
	// re finds the PHI; with a group named phi, the group is the PHI and
	// the rest of the match its context.
	re *regexp.Regexp
	// keywords, when set: one of them must occur (case-insensitively) in
	// the few bytes before a match, and after any of unless ("Tel.: 948 255
	// 400 Fax: 948 296 500" holds one phone). A match that follows an
	// accepted one across a list separator ("918823884 / 918823984 y
	// 619128686") is listed under the same keyword.
	keywords, unless []string
	// minDigits, when set, is the fewest digits a match holds (a phone
	// number has 9 or more; a record number near "Tel." has fewer).
	minDigits int
	// anyOf, when set, holds characters of which every match has one: a
	// text without any is not scanned.
	anyOf string
}

// phoneFaxRe is a phone or fax number: digits in groups, an optional
// country code and area code in brackets.
var phoneFaxRe = regexp.MustCompile(`(?:\+\s?\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)\s*)?\d[\d\s.-]{5,}\d`)

// makerRe is a maker named after a trademarked product in a report's
// brackets ("(Zovirax®, Glaxo Smith Kline)", "(Travatan®, Alcon, Fort Worth,
// Texas)"): the field after the product, up to the next separator. A field
// that is itself marked as a product ("Exviera® y Rebetol®") is not one.
var makerRe = regexp.MustCompile(`[(\[][^()\[\]\n]*?[®™]\s*[,;]\s*(?P<phi>\p{Lu}[^,;()\[\]®™\n]*?)\s*[,;)\]]`)

var rules = []rule{
	{Kind: "EMAIL", re: emailRe},
	{Kind: "URL", re: urlRe},
	{Kind: "IPADDR", re: ipRe},
	{Kind: "SSN", re: ssnRe},
	{Kind: "FAX", re: phoneFaxRe, keywords: []string{"fax"}, minDigits: 9},
	{Kind: "PHONE", re: phoneFaxRe, keywords: []string{"tel", "tfno", "móvil", "movil", "phone"}, unless: []string{"fax"}, minDigits: 9},
	{Kind: "MAKER", re: makerRe, anyOf: "®™"},
}

// keywordReach is how far before a match a rule's keyword may be.
const keywordReach = 24

// RuleBinding ties a rule to the type it emits.
type RuleBinding struct {
	Kind string `json:"kind"`
	Type int    `json:"type"` // index into Model.Types
	// Precision is the share of the rule's training matches that were gold
	// spans of Type; 0 when the training data had no match and the rule was
	// bound by name.
	Precision float64 `json:"precision"`
	Matches   int     `json:"matches"`
}

// matches returns the token ranges of a rule's matches that fall on token
// boundaries.
func (r *rule) matches(tk *Tokens) [][2]int {
	// Most notes name no phone, fax or trademark: skip the pattern's scan.
	if len(r.keywords) > 0 && lastIndexAny(strings.ToLower(tk.Text), r.keywords) < 0 ||
		r.anyOf != "" && !strings.ContainsAny(tk.Text, r.anyOf) {
		return nil
	}
	var out [][2]int
	lastEnd := -1
	phi := r.re.SubexpIndex("phi")
	for _, m := range r.re.FindAllStringSubmatchIndex(tk.Text, -1) {
		if phi > 0 {
			if m = m[2*phi : 2*phi+2]; m[0] < 0 {
				continue
			}
		}
		if r.minDigits > 0 && digits(tk.Text[m[0]:m[1]]) < r.minDigits {
			continue
		}
		if len(r.keywords) > 0 {
			// Lower-cased piece by piece: lower-casing may change a text's
			// length, so offsets into tk.Text do not fit its lower case.
			listed := lastEnd >= 0 && m[0]-lastEnd <= listGap && strings.Trim(strings.ToLower(tk.Text[lastEnd:m[0]]), " /,;y-") == ""
			window := strings.ToLower(tk.Text[max(0, m[0]-keywordReach):m[0]])
			if !listed && lastIndexAny(window, r.keywords) <= lastIndexAny(window, r.unless) {
				continue
			}
		}
		first, last := -1, -1
		markTokens(tk, m[0], m[1], func(i int, begin bool) {
			if begin {
				first = i
			}
			last = i + 1
		})
		if first >= 0 && tk.Tokens[first].Start == m[0] && tk.Tokens[last-1].End == m[1] {
			out = append(out, [2]int{first, last})
			lastEnd = m[1]
		}
	}
	return out
}

func digits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if '0' <= s[i] && s[i] <= '9' {
			n++
		}
	}
	return n
}

// listGap is the longest separator between two listed numbers.
const listGap = 4

// lastIndexAny is the last position in s of any of words, -1 for none.
func lastIndexAny(s string, words []string) int {
	last := -1
	for _, w := range words {
		last = max(last, strings.LastIndex(s, w))
	}
	return last
}

// bindRules learns which type each rule's matches are in the training gold.
func bindRules(toks []*Tokens, gold []goldSpans, types []SpanType, cfg PostConfig) []RuleBinding {
	var out []RuleBinding
	for _, r := range rules {
		counts := make([]int, len(types))
		n := 0
		for di, tk := range toks {
			for _, m := range r.matches(tk) {
				n++
				if ty, ok := gold[di][m]; ok {
					counts[ty]++
				}
			}
		}
		best := -1
		for ty, c := range counts {
			if c > 0 && (best < 0 || c > counts[best]) {
				best = ty
			}
		}
		switch {
		case best >= 0 && float64(counts[best]) >= cfg.RuleMinPrecision*float64(n):
			out = append(out, RuleBinding{Kind: r.Kind, Type: best, Precision: float64(counts[best]) / float64(n), Matches: n})
		case n == 0:
			for ty, t := range types {
				if strings.EqualFold(t.Type, r.Kind) {
					out = append(out, RuleBinding{Kind: r.Kind, Type: ty})
				}
			}
		}
	}
	return out
}

// bindTemplates finds the trusted templates: those whose training matches
// are, almost always, gold spans of one type.
func bindTemplates(toks []*Tokens, gold []goldSpans, types []SpanType, cfg PostConfig) []RuleBinding {
	counts := make([][]int, len(templates))
	n := make([]int, len(templates))
	for k := range counts {
		counts[k] = make([]int, len(types))
	}
	for di, tk := range toks {
		for k, ms := range matchTemplates(tk) {
			for _, r := range ms {
				n[k]++
				if ty, ok := gold[di][r]; ok {
					counts[k][ty]++
				}
			}
		}
	}
	if len(types) == 0 {
		return nil
	}
	var out []RuleBinding
	for k, t := range templates {
		best := 0
		for ty, c := range counts[k] {
			if c > counts[k][best] {
				best = ty
			}
		}
		c := counts[k][best]
		if n[k] >= cfg.TemplateMinMatches && n[k] > 0 && float64(c) >= cfg.TemplatePrecision*float64(n[k]) {
			out = append(out, RuleBinding{Kind: t.Name, Type: best, Precision: float64(c) / float64(n[k]), Matches: n[k]})
		}
	}
	return out
}

// applyTemplates marks the trusted templates' matches that no span covers.
func (m *Model) applyTemplates(td *taggedDoc, matches [][][2]int) {
	if len(m.learnt.Templates) == 0 {
		return
	}
	if matches == nil {
		matches = matchTemplates(td.tk)
	}
	for _, b := range m.learnt.Templates {
		for k, t := range templates {
			if t.Name != b.Kind {
				continue
			}
			for _, r := range matches[k] {
				if sp := (tokSpan{r[0], r[1], b.Type}); !overlapsAny(td.pred, sp) {
					td.pred = append(td.pred, sp)
				}
			}
		}
	}
}

// goldSpans maps the token range of each of a document's gold spans to its
// type index.
type goldSpans map[[2]int]int

// goldTokenSpans finds every training document's gold spans in its tokens,
// once for all the learners of post-processing.
func goldTokenSpans(docs []pipeline.Document, toks []*Tokens, types []SpanType) []goldSpans {
	index := map[SpanType]int{}
	for i, t := range types {
		index[t] = i
	}
	out := make([]goldSpans, len(docs))
	for di, d := range docs {
		tk := toks[di]
		ix := pipeline.NewIndex(d.Text)
		out[di] = goldSpans{}
		for _, s := range d.Spans {
			ty, ok := index[SpanType{s.Category, s.Type}]
			if !ok {
				continue
			}
			first, last := -1, -1
			markTokens(tk, ix.Byte(s.Start), ix.Byte(s.End), func(i int, begin bool) {
				if begin {
					first = i
				}
				last = i + 1
			})
			if first >= 0 {
				out[di][[2]int{first, last}] = ty
			}
		}
	}
	return out
}

// sorted returns the spans' token ranges in text order, for learners whose
// result must not depend on map order.
func (g goldSpans) sorted() [][2]int {
	rs := slices.Collect(maps.Keys(g))
	slices.SortFunc(rs, func(a, b [2]int) int { return cmp.Or(a[0]-b[0], a[1]-b[1]) })
	return rs
}

func (m *Model) applyRules(td *taggedDoc) {
	for _, b := range m.learnt.Rules {
		var r *rule
		for k := range rules {
			if rules[k].Kind == b.Kind {
				r = &rules[k]
			}
		}
		if r == nil {
			continue
		}
		for _, mt := range r.matches(td.tk) {
			sp := tokSpan{mt[0], mt[1], b.Type}
			if b.Precision >= m.Config.Post.RuleOverridePrecision {
				td.pred = removeOverlapping(td.pred, sp)
				td.pred = append(td.pred, sp)
			} else if !overlapsAny(td.pred, sp) {
				td.pred = append(td.pred, sp)
			}
		}
	}
}

func removeOverlapping(pred []tokSpan, sp tokSpan) []tokSpan {
	out := pred[:0]
	for _, p := range pred {
		if p.last <= sp.first || sp.last <= p.first {
			out = append(out, p)
		}
	}
	return out
}

func overlapsAny(pred []tokSpan, sp tokSpan) bool {
	for _, p := range pred {
		if p.first < sp.last && sp.first < p.last {
			return true
		}
	}
	return false
}

// trimmedTypes lists the types whose gold spans almost never begin or end
// with punctuation: the CRF's spans of these types lose such edges.
func trimmedTypes(toks []*Tokens, gold []goldSpans, types []SpanType) []string {
	edge := make([]int, len(types))
	total := make([]int, len(types))
	for di, tk := range toks {
		for r, ty := range gold[di] {
			total[ty]++
			if !isWordy(tk.Word(r[0])) || !isWordy(tk.Word(r[1]-1)) {
				edge[ty]++
			}
		}
	}
	var out []string
	for ty, t := range types {
		if total[ty] > 0 && edge[ty]*50 <= total[ty] {
			out = append(out, t.Type)
		}
	}
	return out
}

// titleMin is how often a word must come just before a type's gold spans,
// and never begin one, to be trimmed from the start of the type's spans.
const titleMin = 5

// titleWords learns, per type, the words (isTitleLike) that often come just
// before its gold spans (at most one punctuation token between) but never
// begin one: "Dr" and "Dra" before a clinician's name, "de" before a town. A
// span of the type that the CRF begins with one loses it.
func titleWords(toks []*Tokens, gold []goldSpans, types []SpanType) map[string][]string {
	before := make([]map[string]int, len(types))
	begins := make([]map[string]bool, len(types))
	for ty := range types {
		before[ty], begins[ty] = map[string]int{}, map[string]bool{}
	}
	for di, tk := range toks {
		for r, ty := range gold[di] {
			begins[ty][strings.ToLower(tk.Word(r[0]))] = true
			for i := r[0] - 1; i >= max(0, r[0]-2); i-- {
				if w := tk.Word(i); isWordy(w) {
					if isTitleLike(w) {
						before[ty][strings.ToLower(w)]++
					}
					break
				}
			}
		}
	}
	out := map[string][]string{}
	for ty, t := range types {
		for w, n := range before[ty] {
			if n >= titleMin && !begins[ty][w] {
				out[t.Type] = append(out[t.Type], w)
			}
		}
		sort.Strings(out[t.Type])
	}
	return out
}

// isTitleLike tells whether w could be a title: a word of two letters or
// more, not a number ("46" before a postal code) or an initial.
func isTitleLike(w string) bool { return runesAll(w, unicode.IsLetter) >= 2 }

// runesAll is the number of code points of w if every one is, 0 if not.
func runesAll(w string, is func(rune) bool) int {
	n := 0
	for _, r := range w {
		if !is(r) {
			return 0
		}
		n++
	}
	return n
}

// trim extracts PHI from inside the tokens the CRF marked (Yang 3.4 step 1):
// punctuation at the edges of spans of types that never have it goes, and so
// does a title word at the start of a span of a type it never begins.
func (m *Model) trim(td *taggedDoc) {
	out := td.pred[:0]
	for _, p := range td.pred {
		titles := m.learnt.Titles[m.Types[p.typ].Type]
		for slices.Contains(titles, strings.ToLower(td.tk.Word(p.first))) {
			j := p.first + 1
			for j < p.last && !isWordy(td.tk.Word(j)) {
				j++
			}
			if j == p.last {
				break // the title is all the span holds
			}
			p.first = j
		}
		if slices.Contains(m.learnt.TrimEdges, m.Types[p.typ].Type) {
			for p.first < p.last && !isWordy(td.tk.Word(p.first)) {
				p.first++
			}
			for p.last > p.first && !isWordy(td.tk.Word(p.last-1)) && !abbreviationEnd(td.tk, p.first, p.last) {
				p.last--
			}
		}
		if p.first < p.last {
			out = append(out, p)
		}
	}
	td.pred = out
}

// abbreviationEnd tells whether the span's final '.' closes an abbreviation
// with inner periods ("EE.UU.", "D.F.", "S.A.", or spaced when its pieces
// are capitals, "EE. UU."), which keeps it.
func abbreviationEnd(tk *Tokens, first, last int) bool {
	if tk.Word(last-1) != "." || last-first < 4 {
		return false
	}
	piece := tk.Word(last - 2)
	if tk.Tokens[last-1].Flags&SpaceBefore != 0 || utf8.RuneCountInString(piece) > 3 || !isWordy(piece) || tk.Word(last-3) != "." {
		return false
	}
	return tk.Tokens[last-2].Flags&SpaceBefore == 0 || isCapitals(piece) && isCapitals(tk.Word(last-4))
}

// isCapitals tells whether w is one to three upper-case letters.
func isCapitals(w string) bool {
	n := runesAll(w, unicode.IsUpper)
	return n >= 1 && n <= 3
}

// propagatingTypes learns which types' terms can be trusted: those whose
// gold span texts, wherever else they occur in the same document, are
// annotated with the same type.
func propagatingTypes(toks []*Tokens, golds []goldSpans, types []SpanType, cfg PostConfig) []string {
	hits := make([]int, len(types))
	occ := make([]int, len(types))
	spans := make([]int, len(types))
	for di, tk := range toks {
		gold := golds[di]
		al := newAlignment(tk)
		terms := map[string]int{} // a text annotated with two types counts for the later span's
		for _, r := range gold.sorted() {
			ty := gold[r]
			spans[ty]++
			terms[tk.Text[tk.Tokens[r[0]].Start:tk.Tokens[r[1]-1].End]] = ty
		}
		for term, ty := range terms {
			if !trustworthy(term) {
				continue
			}
			for _, r := range al.find(term) {
				occ[ty]++
				if g, ok := gold[r]; ok && g == ty {
					hits[ty]++
				}
			}
		}
	}
	var out []string
	for ty, t := range types {
		if spans[ty] >= cfg.PropagateMinSpans && occ[ty] > 0 && float64(hits[ty]) >= cfg.PropagatePrecision*float64(occ[ty]) {
			out = append(out, t.Type)
		}
	}
	return out
}

// trustworthy rules out terms too short or too bare to propagate.
func trustworthy(term string) bool {
	return utf8.RuneCountInString(term) >= 2 && hasAlnum(term)
}

// alignment finds a term's occurrences that fall on token boundaries.
type alignment struct {
	tk       *Tokens
	startTok map[int]int
	endTok   map[int]int
}

func newAlignment(tk *Tokens) *alignment {
	a := &alignment{tk: tk, startTok: make(map[int]int, len(tk.Tokens)), endTok: make(map[int]int, len(tk.Tokens))}
	for i, t := range tk.Tokens {
		a.startTok[t.Start] = i
		a.endTok[t.End] = i + 1
	}
	return a
}

func (a *alignment) find(term string) [][2]int {
	var out [][2]int
	text := a.tk.Text
	for from := 0; ; {
		k := strings.Index(text[from:], term)
		if k < 0 {
			return out
		}
		s := from + k
		e := s + len(term)
		first, ok1 := a.startTok[s]
		last, ok2 := a.endTok[e]
		if ok1 && ok2 {
			out = append(out, [2]int{first, last})
		}
		from = s + 1
	}
}

// propagate marks every occurrence of a patient's trusted terms (Yang 3.4
// steps 2 and 3): the spans of trusted types found anywhere in the patient's
// records, with name permutations, are looked for in every record (or only
// their own, without AcrossRecords).
func (m *Model) propagate(docs []pipeline.Document, tagged []*taggedDoc) {
	if len(m.learnt.Propagate) == 0 {
		return
	}
	groups := map[string][]int{}
	var order []string
	for i, d := range docs {
		key := "\x00" + d.ID
		if d.Patient != "" && m.Config.Post.AcrossRecords {
			key = d.Patient
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], i)
	}
	for _, key := range order {
		members := groups[key]
		terms := m.trustedTerms(tagged, members)
		for _, i := range members {
			td := tagged[i]
			al := newAlignment(td.tk)
			for _, t := range terms {
				for _, r := range al.find(t.text) {
					sp := tokSpan{r[0], r[1], t.typ}
					if !overlapsAny(td.pred, sp) {
						td.pred = append(td.pred, sp)
					}
				}
			}
		}
	}
}

type trustedTerm struct {
	text string
	typ  int
}

// trustedTerms collects the terms of trusted types predicted in a patient's
// records, longest first so that a full name is marked before its parts. A
// term predicted with several types keeps the most frequent.
func (m *Model) trustedTerms(tagged []*taggedDoc, members []int) []trustedTerm {
	votes := map[string]map[int]int{}
	add := func(text string, ty int) {
		if !trustworthy(text) {
			return
		}
		if votes[text] == nil {
			votes[text] = map[int]int{}
		}
		votes[text][ty]++
	}
	for _, i := range members {
		td := tagged[i]
		for _, p := range td.pred {
			t := m.Types[p.typ]
			if !slices.Contains(m.learnt.Propagate, t.Type) {
				continue
			}
			text := td.tk.Text[td.tk.Tokens[p.first].Start:td.tk.Tokens[p.last-1].End]
			add(text, p.typ)
			if m.Config.Post.NameCategory != "" && t.Category == m.Config.Post.NameCategory {
				for _, v := range namePermutations(td.tk, p.first, p.last) {
					add(v, p.typ)
				}
			}
		}
	}
	out := make([]trustedTerm, 0, len(votes))
	for text, v := range votes {
		best := -1
		for ty, c := range v {
			if best < 0 || c > v[best] || (c == v[best] && ty < best) {
				best = ty
			}
		}
		out = append(out, trustedTerm{text, best})
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].text) != len(out[j].text) {
			return len(out[i].text) > len(out[j].text)
		}
		return out[i].text < out[j].text
	})
	return out
}

// namePermutations generates the other ways a full name is written (Yang
// 3.4): "Harlan Valdez" -> "Valdez, Harlan", "H. Valdez", "Valdez"; with two
// surnames, as Spanish names have, also the first surname alone.
func namePermutations(tk *Tokens, first, last int) []string {
	var words []string
	for i := first; i < last; i++ {
		w := tk.Word(i)
		if !isCapitalized(w) {
			if isWordy(w) {
				return nil
			}
			continue
		}
		words = append(words, w)
	}
	if len(words) < 2 {
		return nil
	}
	given := words[0]
	rest := strings.Join(words[1:], " ")
	initial, _ := utf8.DecodeRuneInString(given)
	out := []string{rest + ", " + given, string(initial) + ". " + rest}
	if utf8.RuneCountInString(rest) >= 3 {
		out = append(out, rest)
	}
	if len(words) >= 3 && utf8.RuneCountInString(words[1]) >= 3 {
		out = append(out, words[1])
	}
	return out
}

func isCapitalized(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}
