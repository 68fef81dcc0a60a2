package surrogate

import (
	"fmt"
	"strings"

	"deidcorpus/pipeline/resources"
)

// wider draws a surrogate from a larger space once every candidate shaped
// like the original failed: a code with more digits, every entry of a list
// from one drawn, words joined. The originals of a corpus can fill the space
// of a short code: a million synthetic notes hold 87,976 of the 90,000 pagers
// "d-dddd", so almost none of that shape is free to be a surrogate, and the
// last candidate, used unchecked, was often an original of the same records
// (a leak) or held a year their dates shift (a surrogate the patient's
// aliases rewrote, one per patient). The hospitals that start like a clinic
// "Saint Francis Medical Associates" all name a saint, and a value shared by
// thousands of patients meets every saint among their names. Lists run out
// alike: a patient's records may name half the states, a corpus every listed
// name and city, a site's own lists are short. Values that find a surrogate
// among the tries never come here: theirs do not change.
func (g *gen) wider(strategy, orig string, fits func(string) bool) (string, bool) {
	switch strategy {
	case Shape, Phone:
		return g.longer(strategy, orig, fits)
	case HospitalS:
		hs := g.e.res.Hospitals()
		for i := 0; i < tries; i++ {
			if c := withCaseOf(hs[g.rng.IntN(len(hs))].Name, orig); fits(c) {
				return c, true
			}
		}
		return g.firstFit(len(hs), func(i int) string { return withCaseOf(hs[i].Name, orig) }, fits)
	}
	// Codes and hospitals draw from the scope's generator, as they did when a
	// million notes first needed them; the other strategies from one of the
	// value's own, so that the values after it keep their surrogates.
	defer g.drawApart(strategy, orig)()
	switch strategy {
	case SSN:
		return g.longer(strategy, orig, fits)
	case ZIP:
		return g.widerZIP(orig, fits)
	case City:
		return g.widerPlace(orig, fits)
	case StateS:
		return g.everyState(orig, fits)
	case CountryS:
		return g.everyCountry(orig, fits)
	case Profession:
		ps := g.e.res.Professions(g.e.lang)
		return g.firstFit(len(ps), func(i int) string { return withCaseOf(ps[i], orig) }, fits)
	case Organization:
		return g.widerOrganization(orig, fits)
	case Street:
		return g.widerStreet(orig, fits)
	case Email:
		return g.wideDraws(func() string { return g.email(orig, true) }, fits)
	case URL:
		return g.wideDraws(func() string { return g.url(orig, true) }, fits)
	}
	return "", false
}

// drawApart makes g draw from a generator of its own for one value, derived
// from the seed, the scope and the value, until the function it returns
// restores the scope's.
func (g *gen) drawApart(strategy, orig string) (restore func()) {
	scope := g.rng
	g.rng = g.e.rngFor(g.tab.scope + "\x00" + strategy + "\x00" + orig)
	return func() { g.rng = scope }
}

// firstFit returns the first of n candidates that fits, from one drawn: if
// any fits, one is found.
func (g *gen) firstFit(n int, candidate func(i int) string, fits func(string) bool) (string, bool) {
	start := g.rng.IntN(n)
	for i := range n {
		if c := candidate((start + i) % n); fits(c) {
			return c, true
		}
	}
	return "", false
}

// wideDraws returns the first of tries draws that fits.
func (g *gen) wideDraws(draw func() string, fits func(string) bool) (string, bool) {
	for i := 0; i < tries; i++ {
		if c := draw(); fits(c) {
			return c, true
		}
	}
	return "", false
}

// longer draws codes of the original's format with more digits, one more at a
// time: each makes the space ten times as large.
func (g *gen) longer(strategy, orig string, fits func(string) bool) (string, bool) {
	if !strings.ContainsAny(orig, "0123456789") {
		return "", false
	}
	for more := 1; more <= 6; more++ {
		w := moreDigits(orig, more)
		for i := 0; i < tries; i++ {
			if c := g.make(strategy, w, i); fits(c) {
				return c, true
			}
		}
	}
	return "", false
}

// moreDigits writes n more digits at the start of a code's first run of
// digits ("4-8538" -> "14-8538"): the shape of a longer code of one format.
func moreDigits(s string, n int) string {
	i := strings.IndexAny(s, "0123456789")
	if i < 0 {
		return s
	}
	return s[:i] + strings.Repeat("1", n) + s[i:]
}

// widerZIP tries every postal code of the pack, from a place drawn, for a
// five-digit code or ZIP+4: the draws go by population, and a corpus that
// holds a big city's codes leaves free only the small towns' they miss. A
// code of another shape gets more digits.
func (g *gen) widerZIP(orig string, fits func(string) bool) (string, bool) {
	t := strings.TrimSpace(orig)
	if !isZIP(t) {
		return g.longer(ZIP, orig, fits)
	}
	places := g.e.res.Places()
	tried := map[string]bool{} // places share codes and prefixes
	start := g.rng.IntN(len(places))
	for i := range places {
		for _, z := range places[(start+i)%len(places)].ZIPs {
			if tried[z] {
				continue
			}
			tried[z] = true
			// A prefix stands for every code it starts ("28" for 28000-28999).
			width, n := max(5-len(z), 0), 1
			for range width {
				n *= 10
			}
			from := g.rng.IntN(n)
			for k := range n {
				code := z
				if width > 0 {
					code += fmt.Sprintf("%0*d", width, (from+k)%n)
				}
				if len(t) == 10 {
					code += "-" + g.shape(t[6:])
				}
				if c := strings.Replace(orig, t, code, 1); fits(c) {
					return c, true
				}
			}
		}
	}
	return "", false
}

// widerPlace searches a place's whole kind (see placeKind): every city of the
// pack, then of the English lists, whose 30,000 cities hold many that a
// language's or a site's short list lacks.
func (g *gen) widerPlace(orig string, fits func(string) bool) (string, bool) {
	switch g.placeKind(orig) {
	case zipPlace:
		return g.widerZIP(orig, fits)
	case prefixedZIPPlace:
		code, _ := countryPrefixed(strings.TrimSpace(orig))
		with := func(z string) string { return strings.Replace(orig, code, z, 1) }
		z, ok := g.widerZIP(code, func(z string) bool { return fits(with(z)) })
		return with(z), ok
	case codePlace:
		return g.longer(Shape, orig, fits)
	case statePlace:
		return g.everyState(orig, fits)
	case regionPlace:
		r := g.e.res.Regions()
		return g.firstFit(len(r), func(i int) string { return withCaseOf(r[i], orig) }, fits)
	case countryPlace:
		return g.everyCountry(orig, fits)
	}
	sets := []*resources.Set{g.e.res}
	if g.e.res != g.e.en {
		sets = append(sets, g.e.en)
	}
	for _, set := range sets {
		ps := set.Places()
		if c, ok := g.firstFit(len(ps), func(i int) string { return withCaseOf(ps[i].City, orig) }, fits); ok {
			return c, true
		}
	}
	return "", false
}

func (g *gen) everyState(orig string, fits func(string) bool) (string, bool) {
	states := g.e.res.States()
	return g.firstFit(len(states), func(i int) string { return g.stateAs(states[i], orig) }, fits)
}

func (g *gen) everyCountry(orig string, fits func(string) bool) (string, bool) {
	cs, form := g.e.res.Countries(), g.countryForm(orig)
	return g.firstFit(len(cs), func(i int) string { return countryAs(cs[i], form, orig) }, fits)
}

// widerOrganization tries every listed organization, then every place of the
// pack with each ending of a company ("Lugo S.L."): the draws are shaped like
// the original or made of surnames, and an organization shared by many
// patients meets every surname among their names.
func (g *gen) widerOrganization(orig string, fits func(string) bool) (string, bool) {
	o := g.e.res.Organizations()
	if c, ok := g.firstFit(len(o), func(i int) string { return withCaseOf(o[i], orig) }, fits); ok {
		return c, true
	}
	ps := g.e.res.Places()
	_, kinds := g.companyWords()
	return g.firstFit(len(ps)*len(kinds), func(i int) string {
		return withCaseOf(ps[i/len(kinds)].City+" "+kinds[i%len(kinds)], orig)
	}, fits)
}

// widerStreet draws addresses whose kept words are none of the patients'
// (see keptWordsAway), each street name the first free of the list, and whose
// numbers get a digit more at a time where every short number is an original
// of the corpus.
func (g *gen) widerStreet(orig string, fits func(string) bool) (string, bool) {
	w := g.keptWordsAway(orig)
	for more := 0; more <= 3; more++ {
		for i := tries; i < 2*tries; i++ {
			if c := g.street(w, i); fits(c) {
				return c, true
			}
		}
		if !strings.ContainsAny(w, "0123456789") {
			break
		}
		w = longerNumbers(w)
	}
	return "", false
}

// keptWordsAway rewrites the words an address keeps that are words of the
// patients it goes to (Mr. South of South Ponderosa Drive, a De la Puebla on
// Camino de Heros): a direction becomes another of its form, a function word
// goes with the function words after it and their spaces ("Avenida de los
// periodistas" -> "Avenida periodistas"). Street types street swaps itself.
func (g *gen) keptWordsAway(orig string) string {
	res := g.e.res
	toks := splitStreet(res, orig)
	keptNotType := func(t streetToken) bool { return t.kind == 'k' && !isStreetType(res, fold(t.text)) }
	var b strings.Builder
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !keptNotType(t) || !g.excludedWord(fold(t.text)) {
			b.WriteString(t.text)
			continue
		}
		if d := g.otherDirection(t.text); d != "" {
			b.WriteString(d)
			continue
		}
		for i+2 < len(toks) && toks[i+1].text == " " && keptNotType(toks[i+2]) {
			i += 2
		}
		if i+1 < len(toks) && toks[i+1].text == " " {
			i++
		}
	}
	return b.String()
}

// longerNumbers writes a digit more at the start of every number of an
// address ("Calle Mayor, 3, 2B" -> "Calle Mayor, 13, 12B").
func longerNumbers(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) && (i == 0 || !isDigit(s[i-1])) {
			b.WriteByte('1')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
