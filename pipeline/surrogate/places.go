package surrogate

import (
	"strings"
	"unicode"

	"deidcorpus/pipeline/resources"
)

// streetWords are the words of an address that are kept: street types in
// English and Spanish, unit words and function words. Every other run of
// letters is the street's name, replaced as a whole.
var streetWords = setOf(
	"st", "ave", "av", "rd", "dr", "blvd", "ln", "ct", "pl", "hwy", "pkwy", "apt", "suite", "ste", "unit", "floor", "fl", "po", "box",
	"n", "s", "e", "w", "ne", "nw", "se", "sw", "north", "south", "east", "west", "of", "the", "and",
	"calle", "c", "avda", "avenida", "paseo", "plaza", "pza", "pz", "travesia", "carretera", "ctra", "camino", "ronda", "glorieta",
	"urbanizacion", "urb", "callejon", "via", "rambla", "barrio", "bloque", "piso", "puerta", "portal", "esc", "escalera",
	"planta", "km", "no", "num", "numero", "sn", "dcha", "izda", "izq", "bis", "de", "del", "la", "las", "los", "el", "y",
	"pasaje", "poligono", "edificio", "ed", "edif", "bajo", "letra", "pta", "izqda", "izdo", "izd", "iz", "dch", "dcho", "drcha", "der", "atico",
	"entlo", "o", "a", "º", "ª",
	// Spanish, Catalan and Galician street types MEDDOCAN writes that the
	// lists lacked: without them "Rúa Salvador Dalí, 2" lost its "Rúa".
	"rua", "carrer", "placa", "passeig", "pso", "avinguda", "avd", "crta", "carrera", "colonia", "paraje",
	"apartado", "apdo", "correos",
	// Unit words and their abbreviations (issue 62: "Apto. 116" became
	// "Parra. 938", a unit word replaced as a name).
	"apto", "apartamento", "dpto", "depto", "departamento", "izquierda", "derecha", "izqdo", "izqd", "drcho",
	"bloq", "blq", "bl", "pral", "principal", "entresuelo", "ent", "interior", "int", "exterior", "local", "escal", "pt", "ptal")

// streetToken is one piece of an address.
type streetToken struct {
	text string
	kind byte // 'n' name word, 'k' kept word, 'l' single letter, 'd' digits, 'p' punctuation or space
}

func splitStreet(res *resources.Set, s string) []streetToken {
	var out []streetToken
	rs := []rune(s)
	for i := 0; i < len(rs); {
		j := i + 1
		kind := byte('p')
		switch r := rs[i]; {
		case isOrdinal(r): // "2ºA", "Nº 10": a letter to Unicode, a sign here
			kind = 'k'
		case unicode.IsLetter(r):
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsMark(rs[j])) && !isOrdinal(rs[j]) {
				j++
			}
			if j-i == 2 && i > 0 && rs[i-1] >= '0' && rs[i-1] <= '9' && (r == 'o' || r == 'a') {
				j-- // "1oE", "3aB": a floor's ordinal sign, then its door's letter
			}
			f := fold(string(rs[i:j]))
			kind = 'n'
			switch {
			case streetWords[f] || res.IsStreetSuffix(f):
				kind = 'k'
			case j-i == 1: // a door or block letter: drawn at random
				kind = 'l'
			}
		case r >= '0' && r <= '9':
			for j < len(rs) && rs[j] >= '0' && rs[j] <= '9' {
				j++
			}
			kind = 'd'
		}
		if j-i == 1 && unicode.IsLetter(rs[i]) && !isOrdinal(rs[i]) && isFloor(out) {
			kind = 'l' // a door's letter after the floor ("2ºA"), even a kept word's
		}
		out = append(out, streetToken{string(rs[i:j]), kind})
		i = j
	}
	// A suffix word followed by a street type names the street ("Union St.",
	// "Park Avenue", "Lake Shore Drive"): only the last of a run is its type.
	next := -1 // index of the next letter token, or -1
	for i := len(out) - 1; i >= 0; i-- {
		t := &out[i]
		if t.kind == 'p' {
			if strings.TrimSpace(t.text) != "" && t.text != "." {
				next = -1
			}
			continue
		}
		if t.kind == 'k' && next >= 0 {
			f := fold(t.text)
			if nf := fold(out[next].text); !streetWords[f] && res.IsStreetSuffix(f) &&
				(out[next].kind == 'n' || out[next].kind == 'k' && isStreetType(res, nf)) {
				t.kind = 'n'
			}
		}
		next = i
		if t.kind == 'd' {
			next = -1
		}
	}
	return out
}

// isFloor reports whether the tokens so far end with a floor: a number and
// its ordinal sign ("2º", "1o").
func isFloor(toks []streetToken) bool {
	n := len(toks)
	if n < 2 || toks[n-2].kind != 'd' {
		return false
	}
	last := toks[n-1].text
	return last == "º" || last == "ª" || last == "o" || last == "a"
}

// isOrdinal reports whether r is the ordinal sign of a floor or a number
// ("2º", "1ª", "Nº").
func isOrdinal(r rune) bool { return r == 'º' || r == 'ª' }

// streetTypes are the usual street types, in groups of one form: a kept type
// that must be replaced is replaced by another of its group.
var streetTypes = [][]string{
	{"St", "Ave", "Rd", "Dr", "Ln", "Ct", "Pl", "Blvd", "Way"},
	{"Street", "Avenue", "Road", "Drive", "Lane", "Court", "Place", "Boulevard", "Terrace", "Way", "Circle"},
	{"Calle", "Avenida", "Paseo", "Plaza", "Camino", "Ronda", "Travesía", "Carretera"},
}

// streetTypeGroup is the group of each type, and of the abbreviations of
// streetWords that the groups do not list.
var streetTypeGroup = func() map[string]int {
	m := map[string]int{"hwy": 0, "pkwy": 0, "av": 2, "avda": 2, "pza": 2, "pz": 2, "ctra": 2}
	for i, g := range streetTypes {
		for _, t := range g {
			if _, dup := m[fold(t)]; !dup {
				m[fold(t)] = i
			}
		}
	}
	return m
}()

func isStreetType(res *resources.Set, folded string) bool {
	_, ok := streetTypeGroup[folded]
	return ok || res.IsStreetSuffix(folded)
}

// otherStreetType draws a street type of the same form as t ("Lane" ->
// "Court", "St" -> "Rd") that is none of the patient's original values; ""
// if there is none.
func (g *gen) otherStreetType(t string) string {
	group := streetTypes[1]
	if k, ok := streetTypeGroup[fold(t)]; ok {
		group = streetTypes[k]
	}
	return g.otherOf(group, t)
}

// streetDirections are the directions an address keeps, in groups of one form.
var streetDirections = [][]string{{"North", "South", "East", "West"}, {"N", "S", "E", "W"}, {"NE", "NW", "SE", "SW"}}

// otherDirection draws a direction of the same form as t ("South" ->
// "North") that is none of the patient's original values; "" if t is no
// direction or there is none.
func (g *gen) otherDirection(t string) string {
	f := fold(t)
	for _, group := range streetDirections {
		for _, d := range group {
			if fold(d) == f {
				return g.otherOf(group, t)
			}
		}
	}
	return ""
}

// otherOf draws a word of group other than t, from one drawn, that is none
// of the patient's original values, in t's case; "" if there is none.
func (g *gen) otherOf(group []string, t string) string {
	f := fold(t)
	start := g.rng.IntN(len(group))
	for k := range group {
		c := group[(start+k)%len(group)]
		if fc := fold(c); fc != f && !g.excl.hasToken(fc) {
			return withCaseOf(c, t)
		}
	}
	return ""
}

// keptStreetWord reports whether a folded token is one an address keeps
// from its original (a type, a unit or function word).
func (g *gen) keptStreetWord(folded string) bool {
	return streetWords[folded] || g.e.res.IsStreetSuffix(folded)
}

// streetPairs returns an original address's (street name, following suffix)
// pairs, which surrogates must never recreate (Deleger et al.).
func streetPairs(res *resources.Set, s string) []string {
	toks := splitStreet(res, s)
	var out []string
	for i := 0; i < len(toks); i++ {
		if toks[i].kind != 'n' {
			continue
		}
		j := i
		var name []string
		for ; j < len(toks) && (toks[j].kind == 'n' || toks[j].kind == 'p' && toks[j].text == " " && j+1 < len(toks) && toks[j+1].kind == 'n'); j++ {
			if toks[j].kind == 'n' {
				name = append(name, toks[j].text)
			}
		}
		suffix := ""
		for k := j; k < len(toks); k++ {
			if toks[k].kind == 'k' {
				suffix = toks[k].text
				break
			}
			if toks[k].kind != 'p' {
				break
			}
		}
		out = append(out, fold(strings.Join(name, " "))+"\x00"+fold(suffix))
		i = j
	}
	return out
}

// freeStreetName reports whether a listed street name may replace one
// followed by suffix: it recreates no original street and holds no original
// value (Deleger et al.).
func (g *gen) freeStreetName(c, suffix string) bool {
	return !g.e.streets[fold(c)+"\x00"+suffix] && !g.e.orig.within(c) && !g.excl.within(c)
}

// street keeps an address's pattern: numbers become random numbers of the
// same length, street types and unit words stay, and each run of name words
// becomes a listed street name of as many words where one exists. A kept
// word that is one of the patient's original values or name words (a "Lane"
// beside a Dr. Lane) is swapped for another street type of its form. Tries
// from tries on are wider's: where every name drawn is excluded, they take
// the first free one of the whole list.
func (g *gen) street(orig string, try int) string {
	res := g.e.res
	if g.streetOf != orig { // the tries of one address split it once
		g.streetOf, g.streetToks = orig, splitStreet(res, orig)
	}
	toks := append(g.toksBuf[:0], g.streetToks...)
	g.toksBuf = toks
	for i, t := range toks {
		if t.kind == 'k' && g.excl.hasToken(fold(t.text)) && isStreetType(res, fold(t.text)) {
			if alt := g.otherStreetType(t.text); alt != "" {
				toks[i].text = alt
			}
		}
	}
	var b strings.Builder
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case 'd', 'l':
			b.WriteString(g.houseNumber(t.text))
		case 'n':
			j, words := i, 0
			for ; j < len(toks) && (toks[j].kind == 'n' || toks[j].kind == 'p' && toks[j].text == " " && j+1 < len(toks) && toks[j+1].kind == 'n'); j++ {
				if toks[j].kind == 'n' {
					words++
				}
			}
			suffix := ""
			for k := j; k < len(toks); k++ {
				if toks[k].kind == 'k' {
					suffix = fold(toks[k].text)
					break
				}
				if toks[k].kind != 'p' {
					break
				}
			}
			streets := res.Streets()
			// A name of as many words, else any name that passes.
			name, fallback := "", ""
			for k := 0; k < tries && name == ""; k++ {
				c := streets[g.rng.IntN(len(streets))].Name
				if !g.freeStreetName(c, suffix) {
					continue
				}
				if strings.Count(c, " ")+1 == words {
					name = c
				} else if fallback == "" {
					fallback = c
				}
			}
			if name == "" {
				name = fallback
			}
			if name == "" { // every draw was excluded: the candidate's own check rejects this one
				start := g.rng.IntN(len(streets))
				name = streets[start].Name
				if try >= tries { // a wider search: every name, from the one drawn
					for k := range streets {
						if c := streets[(start+k)%len(streets)].Name; g.freeStreetName(c, suffix) {
							name = c
							break
						}
					}
				}
			}
			b.WriteString(withCaseOf(name, toks[i].text))
			i = j - 1
		default:
			b.WriteString(t.text)
		}
	}
	return b.String()
}
