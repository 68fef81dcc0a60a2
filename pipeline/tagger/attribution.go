package tagger

import (
	"slices"
	"strings"
)

// Case reports credit a product to its maker in brackets, with the maker's
// town and country: "(Sonos 100 CF, Hewlett Packard, Massachusetts, USA)",
// "Nanoblast® (Galimplant, Sarria, España)". MEDDOCAN annotates the maker,
// the places and the country, yet the CRF finds few of them: the makers and
// foreign towns are words it has never seen. An attribution is known by its
// last field, a phrase the gazetteer holds as the country type; the fields
// before it are the maker and its places. Each role is bound to the type its
// training matches are, as the other rules are, so nothing here names a
// corpus's labels.

// Attribution roles, as the Kind of their RuleBinding.
const (
	roleMaker   = "ATTRIBUTION_MAKER"
	rolePlace   = "ATTRIBUTION_PLACE"
	roleCountry = "ATTRIBUTION_COUNTRY"
)

// attributionMaxTokens bounds the tokens between an attribution's brackets.
const attributionMaxTokens = 60

// attributionField is one field of a bracketed attribution: tokens
// [first, last) in the given role.
type attributionField struct {
	role        string
	first, last int
}

// corporateSuffixes are fields of their own that only end a maker's name
// ("Ohio Medical Instrument Co, Inc., Cincinnati"): neither maker nor place.
var corporateSuffixes = []string{"inc", "ltd", "co", "corp", "sa", "s.a", "gmbh", "sl", "s.l", "llc", "plc", "ag", "bv"}

// attributions finds the bracketed attributions of tk, at least three fields
// separated by commas or semicolons of which the last is a country
// (isCountry, asked with the field's gazetteer key), and returns their
// fields by role. The first field is the maker unless it reads as a product
// (a trademark sign, a number, or a lower-case word: "Topógrafo corneal",
// "NOxPUMP plus"), then the second is; the fields between the maker and the
// country are its places.
func attributions(tk *Tokens, isCountry func(key string) bool) []attributionField {
	if !strings.ContainsAny(tk.Text, "([") {
		return nil
	}
	var out []attributionField
	n := len(tk.Tokens)
	for i := 0; i < n; i++ {
		closer := ""
		switch tk.Word(i) {
		case "(":
			closer = ")"
		case "[":
			closer = "]"
		default:
			continue
		}
		end := -1
		for j := i + 1; j < n && j <= i+attributionMaxTokens && tk.Tokens[j].Line == tk.Tokens[i].Line; j++ {
			w := tk.Word(j)
			if w == closer {
				end = j
				break
			}
			if w == "(" || w == "[" || w == ")" || w == "]" {
				break
			}
		}
		if end < 0 {
			continue
		}
		fields := attributionFields(tk, i+1, end)
		if len(fields) < 3 {
			continue
		}
		country := fields[len(fields)-1]
		if !isCountry(phraseKey(tk, country[0], country[1])) {
			continue
		}
		maker := 0
		if readsAsProduct(tk, i+1, end) {
			maker = 1
		}
		for k, f := range fields[maker : len(fields)-1] {
			role := rolePlace
			if k == 0 {
				role = roleMaker
			}
			if isCapitalized(tk.Word(f[0])) {
				out = append(out, attributionField{role, f[0], f[1]})
			}
		}
		out = append(out, attributionField{roleCountry, country[0], country[1]})
		i = end
	}
	return out
}

// attributionFields splits tokens [from, to) at commas and semicolons into
// fields, leaving out trademark signs at a field's end and fields that are
// only a corporate suffix.
func attributionFields(tk *Tokens, from, to int) [][2]int {
	var out [][2]int
	start := from
	for j := from; j <= to; j++ {
		if j < to && tk.Word(j) != "," && tk.Word(j) != ";" {
			continue
		}
		last := j
		for last > start && (tk.Word(last-1) == "®" || tk.Word(last-1) == "™") {
			last--
		}
		if last > start && !isCorporateSuffix(tk, start, last) {
			out = append(out, [2]int{start, last})
		}
		start = j + 1
	}
	return out
}

func isCorporateSuffix(tk *Tokens, first, last int) bool {
	key := strings.TrimSuffix(strings.ToLower(tk.Text[tk.Tokens[first].Start:tk.Tokens[last-1].End]), ".")
	return slices.Contains(corporateSuffixes, key)
}

// readsAsProduct tells whether the first field of tokens [from, to) names a
// product rather than its maker: it holds a trademark sign, a number or a
// word in lower case.
func readsAsProduct(tk *Tokens, from, to int) bool {
	for i := from; i < to; i++ {
		w := tk.Word(i)
		if w == "," || w == ";" {
			return false
		}
		if w == "®" || w == "™" || leadingDigit(w) || isWordy(w) && !isCapitalized(w) && !isDigits(w) {
			return true
		}
	}
	return false
}

func isDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// phraseKey is the gazetteer's key of tokens [first, last): their words in
// lower case, a space where the text has one.
func phraseKey(tk *Tokens, first, last int) string {
	var b strings.Builder
	for i := first; i < last; i++ {
		if i > first && tk.Tokens[i].Flags&SpaceBefore != 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.ToLower(tk.Word(i)))
	}
	return b.String()
}

// bindAttributions learns the attribution rule from the training gold: the
// country type is the gazetteer type most of the candidates' last fields
// have, and each role is bound to the type most of its training matches are
// gold spans of, if at least RuleMinPrecision of them are. The country role
// is bound only to the country type itself.
func bindAttributions(toks []*Tokens, gold []goldSpans, types []SpanType, gaz *phraseSet, cfg PostConfig) []RuleBinding {
	if gaz == nil {
		return nil
	}
	votes := map[string]int{}
	for _, tk := range toks {
		for _, f := range attributions(tk, func(key string) bool { return len(gaz.types[key]) > 0 }) {
			if f.role == roleCountry {
				for _, ty := range gaz.types[phraseKey(tk, f.first, f.last)] {
					votes[ty]++
				}
			}
		}
	}
	country := ""
	for ty, v := range votes {
		if country == "" || v > votes[country] || v == votes[country] && ty < country {
			country = ty
		}
	}
	if country == "" {
		return nil
	}
	isCountry := countryTest(gaz, country)
	counts := map[string][]int{}
	n := map[string]int{}
	for di, tk := range toks {
		for _, f := range attributions(tk, isCountry) {
			if counts[f.role] == nil {
				counts[f.role] = make([]int, len(types))
			}
			n[f.role]++
			if ty, ok := gold[di][[2]int{f.first, f.last}]; ok {
				counts[f.role][ty]++
			}
		}
	}
	var out []RuleBinding
	for _, role := range []string{roleMaker, rolePlace, roleCountry} {
		best := -1
		for ty, c := range counts[role] {
			if c > 0 && (best < 0 || c > counts[role][best]) {
				best = ty
			}
		}
		if best < 0 || float64(counts[role][best]) < cfg.RuleMinPrecision*float64(n[role]) {
			continue
		}
		if role == roleCountry && types[best].Type != country {
			return nil // the gazetteer and the gold disagree on what a country is
		}
		out = append(out, RuleBinding{Kind: role, Type: best, Precision: float64(counts[role][best]) / float64(n[role]), Matches: n[role]})
	}
	if len(out) == 0 || out[len(out)-1].Kind != roleCountry {
		return nil
	}
	return out
}

// applyAttributions marks the fields of the document's attributions with
// their roles' types; a role bound at RuleOverridePrecision or more replaces
// the spans it overlaps, as a rule does.
func (m *Model) applyAttributions(td *taggedDoc) {
	var bound []RuleBinding
	for _, b := range m.learnt.Rules {
		if b.Kind == roleMaker || b.Kind == rolePlace || b.Kind == roleCountry {
			bound = append(bound, b)
		}
	}
	if len(bound) == 0 || m.ext.gaz == nil {
		return
	}
	fields := attributions(td.tk, countryTest(m.ext.gaz, m.Types[bound[len(bound)-1].Type].Type))
	for _, f := range fields {
		for _, b := range bound {
			if b.Kind != f.role {
				continue
			}
			sp := tokSpan{f.first, f.last, b.Type}
			if b.Precision >= m.Config.Post.RuleOverridePrecision {
				td.pred = append(removeOverlapping(td.pred, sp), sp)
			} else if !overlapsAny(td.pred, sp) {
				td.pred = append(td.pred, sp)
			}
		}
	}
}

// countryTest tells whether a phrase is a country: the gazetteer holds it as
// the country type and as no other (a town some note annotated as a country
// once is not one).
func countryTest(gaz *phraseSet, country string) func(key string) bool {
	return func(key string) bool {
		ts := gaz.types[key]
		return len(ts) == 1 && ts[0] == country
	}
}
