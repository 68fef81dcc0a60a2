package surrogate

import (
	"strings"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
)

// A surrogate that disagrees with its own note needs no classifier to be
// found (issue 62): a Spanish town beside a foreign country, a postal code
// of another province, a woman's title before a man's name. The check lists
// such notes for review where the original's parts agreed.

// Incoherence is a note whose surrogate parts disagree where the original's
// agreed: Kind "postal code" (a code of another province than its town's),
// "province digits" (a collegiate number of another province than its
// town's),
// "province" (a town outside the province written beside it), "country" (a
// town of the pack's country beside another) or "title" (a title and a
// first name of the other sex). Parts are the surrogate texts that disagree.
type Incoherence struct {
	Doc   string   `json:"doc"`
	Kind  string   `json:"kind"`
	Start int      `json:"start"` // the second part's code points in the output
	End   int      `json:"end"`
	Parts []string `json:"parts"`
}

// coherence checks the parts of one note's surrogate (out) against each
// other, where the same parts of its original (orig) agreed.
type coherence struct {
	pol     *Policy
	res, en *resources.Set
	lang    string
}

func newCoherence(pol *Policy, lang string) coherence {
	return coherence{pol: pol, res: resources.ForLanguage(lang), en: resources.ForLanguage("en"), lang: lang}
}

// incoherences returns the disagreements of one note's surrogate; out's
// spans are orig's, one for one.
func (c coherence) incoherences(orig, out pipeline.Document) []Incoherence {
	if len(orig.Spans) != len(out.Spans) {
		return nil
	}
	var found []Incoherence
	for i, s := range out.Spans {
		town := c.nearTown(out, i)
		if town >= 0 {
			if kind, ok := c.disagree(out, town, i); ok {
				if _, was := c.disagree(orig, town, i); !was {
					found = append(found, Incoherence{Doc: out.ID, Kind: kind, Start: s.Start, End: s.End,
						Parts: []string{out.Spans[town].Text, s.Text}})
				}
			}
		}
		if c.pol.Rule(s.Category, s.Type).Strategy == Name && c.titleDisagrees(out, i, false) && !c.titleDisagrees(orig, i, true) {
			found = append(found, Incoherence{Doc: out.ID, Kind: "title", Start: s.Start, End: s.End, Parts: []string{s.Text}})
		}
	}
	return found
}

// nearTown returns the index of the listed town nearest span i within
// addressReach, or -1.
func (c coherence) nearTown(d pipeline.Document, i int) int {
	best, bestD := -1, addressReach+1
	s := d.Spans[i]
	for j, a := range d.Spans {
		if j == i || c.pol.Rule(a.Category, a.Type).Strategy != City {
			continue
		}
		if _, ok := c.res.PlaceOfCity(a.Text); !ok {
			continue
		}
		dist := s.Start - a.End
		if a.Start > s.Start {
			dist = a.Start - s.End
		}
		if dist >= 0 && dist < bestD {
			best, bestD = j, dist
		}
	}
	return best
}

// disagree reports whether span i of d disagrees with the town of span
// town, and how.
func (c coherence) disagree(d pipeline.Document, town, i int) (string, bool) {
	t, s := d.Spans[town].Text, d.Spans[i]
	if _, ok := c.res.PlaceOfCity(t); !ok {
		return "", false // a town the lists do not know: nothing to agree with
	}
	strategy := c.pol.Rule(s.Category, s.Type).Strategy
	v := strings.TrimSpace(s.Text)
	switch {
	case (strategy == ZIP || strategy == City) && isZIP(v) && len(v) == 5 && c.lang == "es":
		return "postal code", !c.res.CityProvinceHasZIP(t, v)
	case strategy == Shape && c.lang == "es":
		if _, _, ok := collegiatePrefix(v, c.lang); ok {
			return "province digits", !c.res.CityProvinceHasZIP(t, v[:2])
		}
	case strategy == CountryS && !birthCountry(d.Text, s):
		home, ok := c.res.CountryOf(homeCountries[c.lang])
		country, known := c.res.CountryOf(v)
		return "country", ok && known && country != home
	case (strategy == StateS || strategy == City) && !c.res.IsCity(v):
		if _, ok := c.res.StateOf(v); ok {
			return "province", !c.res.CityIsIn(t, v)
		}
	}
	return "", false
}

// titleDisagrees reports whether name span i of d follows (or holds) a title
// of one sex and its first name word is a name only of the other. An
// original's name is read as the generator reads it (guessed: by the
// pack's lists, the English lists, its ending): "Dr. Nora" is a woman
// under a man's title, whose surrogate may keep her sex.
func (c coherence) titleDisagrees(d pipeline.Document, i int, guessed bool) bool {
	s := d.Spans[i]
	rs := []rune(d.Text)
	before := string(rs[max(0, s.Start-12):s.Start])
	ws := splitName(s.Text, c.lang)
	sex, ok := titleBefore(ws, before, c.lang)
	if !ok {
		return false
	}
	var words []string
	for _, w := range ws {
		if w.role != roleLiteral && w.role != roleInitial {
			words = append(words, w.text)
		}
	}
	if len(words) < 2 { // "Dra. Martín": a surname alone
		return false
	}
	own, known := c.res.SexOf(words[0])
	if guessed {
		own, _ = sexOfName(c.res, c.en, words[0], c.lang)
		known = true
	}
	return known && own != resources.Either && own != sex
}

// birthCountry reports whether a country span follows the label of a
// birth country or a nationality ("País de nacimiento: Bolivia"), which is
// not its note's address's, whatever town is written beside it.
func birthCountry(text string, s pipeline.Span) bool {
	rs := []rune(text)
	if s.Start > len(rs) {
		return false
	}
	before := strings.ToLower(string(rs[max(0, s.Start-24):s.Start]))
	for _, w := range []string{"nacimiento", "nacionalidad", "natural de", "birth", "nationality", "born in"} {
		if strings.Contains(before, w) {
			return true
		}
	}
	return false
}
