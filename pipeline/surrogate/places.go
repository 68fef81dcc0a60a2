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
	"calle", "c", "avda", "avenida", "paseo", "plaza", "pza", "travesia", "carretera", "ctra", "camino", "ronda", "glorieta",
	"urbanizacion", "urb", "callejon", "via", "rambla", "barrio", "bloque", "piso", "puerta", "portal", "esc", "escalera",
	"planta", "km", "no", "num", "numero", "sn", "dcha", "izda", "izq", "bis", "de", "del", "la", "las", "los", "el", "y",
	"pasaje", "poligono", "edificio", "bajo", "letra", "o", "a", "º", "ª")

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
		case unicode.IsLetter(r):
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsMark(rs[j])) {
				j++
			}
			f := resources.Fold(string(rs[i:j]))
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
		out = append(out, streetToken{string(rs[i:j]), kind})
		i = j
	}
	return out
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
		out = append(out, resources.Fold(strings.Join(name, " "))+"\x00"+resources.Fold(suffix))
		i = j
	}
	return out
}

// street keeps an address's pattern: numbers become random numbers of the
// same length, street types and unit words stay, and each run of name words
// becomes a listed street name of as many words where one exists.
func (g *gen) street(orig string, try int) string {
	res := g.e.res
	toks := splitStreet(res, orig)
	var b strings.Builder
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case 'd', 'l':
			b.WriteString(g.shape(t.text))
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
					suffix = resources.Fold(toks[k].text)
					break
				}
				if toks[k].kind != 'p' {
					break
				}
			}
			streets := res.Streets()
			var name string
			for k := 0; k < tries; k++ {
				name = streets[g.rng.IntN(len(streets))].Name
				if (k > tries/2 || strings.Count(name, " ")+1 == words) && !g.e.streets[resources.Fold(name)+"\x00"+suffix] &&
					!g.e.orig.within(name) && !g.excl.within(name) {
					break
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
