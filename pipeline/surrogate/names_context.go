package surrogate

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
)

// A surrogate name agrees with what surrounds it (issue 62): a woman's
// title keeps a woman's first name ("Dra. M.a José Tapia" became "Dra. S.j
// Enrique Dueñas"), and an abbreviated first name ("M.a", "Mª", "Fco.")
// is read as one, never as two letters.

// nameAbbrevs are the abbreviations of first names that notes write, by
// their letters folded without dots ("M.a", "M.ª", "Mª" are "ma").
var nameAbbrevs = map[string]string{"ma": "María", "fco": "Francisco"}

// abbrevAt returns the length in bytes of a first name's abbreviation at the
// start of s and the name it stands for: "M.a", "M.ª", "Mª" (María) and
// "Fco" before its dot. The abbreviation is followed by no letter.
func abbrevAt(s string) (n int, full string) {
	var letters strings.Builder
	dots := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		switch {
		case r == '.' && dots == 0 && letters.Len() == 1:
			dots++
		case unicode.IsLetter(r) || unicode.IsMark(r):
			letters.WriteRune(r)
		default:
			return abbrevEnd(letters.String(), n, dots)
		}
		n += size
	}
	return abbrevEnd(letters.String(), n, dots)
}

func abbrevEnd(letters string, n, dots int) (int, string) {
	f := strings.ReplaceAll(fold(letters), "ª", "a")
	switch {
	case f == "ma" && (dots == 1 || strings.HasSuffix(letters, "ª")):
		return n, nameAbbrevs[f]
	case f == "fco" && dots == 0:
		return n, nameAbbrevs[f]
	}
	return 0, ""
}

// titleSex are the titles that say a sex ("Dr." a man's, "Dra." a woman's).
var titleSex = map[string]resources.Sex{
	"dra": resources.Female, "sra": resources.Female, "srta": resources.Female, "dña": resources.Female, "dna": resources.Female,
	"dona": resources.Female, "mrs": resources.Female, "ms": resources.Female, "miss": resources.Female, "mme": resources.Female,
	"mlle": resources.Female, "frau": resources.Female, "dame": resources.Female,
	"dr": resources.Male, "sr": resources.Male, "don": resources.Male, "mr": resources.Male, "herr": resources.Male, "sir": resources.Male,
}

// sexCues are the words of a Spanish note that say its patient's sex: the
// agreement around "paciente", a participle, the words of a sex.
var sexCues = map[string]resources.Sex{
	"la paciente": resources.Female, "una paciente": resources.Female, "nacida": resources.Female, "mujer": resources.Female,
	"femenino": resources.Female, "sexo: m": resources.Female, "sexo: mujer": resources.Female,
	"el paciente": resources.Male, "un paciente": resources.Male, "nacido": resources.Male, "varón": resources.Male,
	"varon": resources.Male, "masculino": resources.Male, "sexo: h": resources.Male, "sexo: v": resources.Male, "hombre": resources.Male,
}

// titleBefore is the sex a title just before a name says ("Dra. " before
// "M.a José"), or in the name itself.
func titleBefore(ws []nameWord, before, lang string) (resources.Sex, bool) {
	b := strings.TrimRight(before, " ")
	b = strings.TrimSuffix(b, ".")
	k := strings.LastIndexAny(b, " \n\t(:")
	if t := fold(b[k+1:]); isTitle(t, lang) && titleSex[t] != resources.Either {
		return titleSex[t], true
	}
	for _, w := range ws {
		if w.role != roleLiteral {
			break
		}
		if t := fold(strings.Trim(w.text, ". ")); isTitle(t, lang) && titleSex[t] != resources.Either {
			return titleSex[t], true
		}
	}
	return resources.Either, false
}

// noteSex is the patient's sex the words of a Spanish note say, when they
// say only one.
func noteSex(text string) (resources.Sex, bool) {
	low := strings.ToLower(text)
	var seen [3]bool
	for cue, sex := range sexCues {
		for i := strings.Index(low, cue); i >= 0; {
			end := i + len(cue)
			if (i == 0 || !isWordByte(low[i-1])) && (end == len(low) || !isWordByte(low[end])) {
				seen[sex] = true
				break
			}
			j := strings.Index(low[i+1:], cue)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	switch {
	case seen[resources.Female] && !seen[resources.Male]:
		return resources.Female, true
	case seen[resources.Male] && !seen[resources.Female]:
		return resources.Male, true
	}
	return resources.Either, false
}

// isWordByte reports whether a byte of lower-cased text is part of a word:
// a letter, or a byte of a multi-byte letter ("ó").
func isWordByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 0x80 }

// sexContext is what a name's context says of its sex. said (its title,
// else, for a patient's name in a Spanish note, the note's words) decides
// the sex of a first name the lists do not know as one sex's, and only
// those: a title varies from note to note ("Dr." before a woman's name is
// common), and a name's surrogate must not. name (the sex of the first of
// its first names) decides the others even against their own: "María José"
// is a woman's, "José María" a man's, wherever they are written.
type sexContext struct{ said, name resources.Sex }

// contextSex returns the sex context of a name span.
func (g *gen) contextSex(ws []nameWord, s pipeline.Span, before string) sexContext {
	var ctx sexContext
	if sex, ok := titleBefore(ws, before, g.e.lang); ok {
		ctx.said = sex
	} else if sex, ok := g.titleElsewhere(ws, s); ok {
		ctx.said = sex
	} else if g.planSaid != resources.Either {
		ctx.said = g.planSaid
	} else if g.e.lang == "es" && g.e.r.Policy.Rule(s.Category, s.Type).Scope == ScopePatient {
		if g.noteSexOf != g.doc.ID {
			g.noteSexOf = g.doc.ID
			g.noteSex, _ = noteSex(g.doc.Text)
		}
		ctx.said = g.noteSex
	}
	for _, w := range ws {
		first := w.abbrev
		if first == "" && w.role == roleFirst {
			first = w.text
		}
		if first == "" {
			continue
		}
		if sex, known := g.e.sexOf(first); known {
			ctx.name = sex
		}
		break
	}
	return ctx
}

// titleBits returns a bit for the sex a title before a name span says
// (1<<Female or 1<<Male), or 0: the titles of a corpus-scope name's
// occurrences, gathered before the plan draws it (saidSex).
func titleBits(rs []rune, sp pipeline.Span, lang string) uint8 {
	if sp.Start > len(rs) {
		return 0
	}
	if sex, ok := titleBefore(splitName(sp.Text, lang), string(rs[max(0, sp.Start-16):sp.Start]), lang); ok {
		return 1 << sex
	}
	return 0
}

// saidSex is the sex titleBits gathered say, where they say only one.
func saidSex(bits uint8) resources.Sex {
	switch bits {
	case 1 << resources.Female:
		return resources.Female
	case 1 << resources.Male:
		return resources.Male
	}
	return resources.Either
}

// titleElsewhere is the sex a title says before a mention of the same name
// in the note ("Dra. Itziar Palacios" in the signature, "Itziar Palacios"
// in the address): the name's mentions draw one sex. The corpus plan draws
// a name without the text before it: its note's title decides there too.
func (g *gen) titleElsewhere(ws []nameWord, s pipeline.Span) (resources.Sex, bool) {
	for _, o := range g.doc.Spans {
		if o.Type != s.Type || fold(o.Text) != fold(s.Text) {
			continue
		}
		rs := []rune(g.doc.Text)
		if o.Start > len(rs) {
			continue
		}
		if sex, ok := titleBefore(ws, string(rs[max(0, o.Start-16):o.Start]), g.e.lang); ok {
			return sex, true
		}
	}
	return resources.Either, false
}

// sexFor returns the sex a first name's surrogate is drawn for and the key
// of its mapping: its own, else its context's (see sexContext); a name drawn
// for the sex its own name contradicts is keyed apart (sexedKey).
func (ctx sexContext) sexFor(w string, own resources.Sex, known bool) (resources.Sex, string) {
	switch {
	case known && own != resources.Either:
		if ctx.name != resources.Either && ctx.name != own {
			return ctx.name, sexedKey(w, ctx.name)
		}
	case ctx.said != resources.Either:
		return ctx.said, w
	case ctx.name != resources.Either:
		return ctx.name, w
	}
	return own, w
}

// sexedKey is the key of a first name's mapping drawn for a sex its context
// says against its own ("José" of "María José"): the word keeps its own
// surrogate where it stands for its own sex.
func sexedKey(w string, sex resources.Sex) string {
	if sex == resources.Female {
		return w + " (f)"
	}
	return w + " (m)"
}
