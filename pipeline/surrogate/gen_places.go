package surrogate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
)

// placeKind is the list a place of the TERRITORIO or CITY kind is replaced
// from: a postal code by a postal code ("E-41013" too), a province or state by
// another, a region by a region, a country by a country, anything else by a
// city of the pack.
type placeKind uint8

const (
	cityPlace placeKind = iota
	zipPlace
	prefixedZIPPlace // a postal code after its country's letter
	codePlace        // digits and signs: a code of the same shape
	statePlace
	regionPlace
	countryPlace
)

func (g *gen) placeKind(orig string) placeKind {
	res := g.e.res
	t := strings.TrimSpace(orig)
	switch _, prefixed := countryPrefixed(t); {
	case isDigits(t) && len(t) == 5:
		return zipPlace
	case prefixed:
		return prefixedZIPPlace
	case hasCode(t) && !strings.ContainsFunc(t, unicode.IsLetter):
		return codePlace
	}
	if _, ok := res.StateOf(t); ok && g.e.lang == "es" && !res.IsCity(t) { // "Madrid" is the city, as a note means it
		return statePlace
	}
	if res.IsRegion(t) {
		return regionPlace
	}
	if _, ok := res.CountryOf(t); ok && !res.IsCity(t) {
		return countryPlace
	}
	return cityPlace
}

// place replaces a place in its own kind (see placeKind).
func (g *gen) place(orig string) string {
	switch g.placeKind(orig) {
	case zipPlace:
		return g.zip(orig)
	case prefixedZIPPlace:
		code, _ := countryPrefixed(strings.TrimSpace(orig))
		return strings.Replace(orig, code, g.zip(code), 1)
	case codePlace:
		return g.shape(orig)
	case statePlace:
		return g.state(orig)
	case regionPlace:
		r := g.e.res.Regions()
		return withCaseOf(r[g.rng.IntN(len(r))], orig)
	case countryPlace:
		return g.country(orig)
	}
	return withCaseOf(g.city(orig).City, orig)
}

// bigCity is the population, in thousands, from which a city's name says
// little of who lives there: the cities a surrogate may be drawn from by
// the corpus's own counts (cityPool).
const bigCity = 100

// city draws a place by population among those whose name has as many
// words as orig's, else among all: notes name a few big cities often.
// Three draws in four are first made among the big cities the corpus
// names, by how many of its patients' records name each (MEDDOCAN's
// notes name Madrid three times as often as its population would say).
func (g *gen) city(orig string) resources.Place {
	st, ok := g.codeState(orig)
	if !ok {
		st, ok = g.siblingState(orig)
	}
	if ok {
		if p, ok := g.cityIn(st, orig); ok {
			return p
		}
	}
	if len(g.e.cityPool.values) > 0 && g.rng.IntN(4) > 0 {
		for range 4 {
			if p, ok := g.e.cityPool.draw(g.rng); ok && wordCount(p.City) == wordCount(orig) {
				return p
			}
		}
	}
	w := g.e.pools.places[wordCount(orig)]
	if w == nil || len(w.idx) < minShapePool {
		w = g.e.pools.places[0]
	}
	return g.e.res.Places()[w.draw(g.rng)]
}

// siblingState returns the state (province) of the surrogate of another
// town of the patient's records in orig's own province, where one is
// drawn: towns of one province stay of one province ("28822 Coslada.
// Madrid" beside the patient's "Madrid" became "11972 Zaragoza. Cádiz",
// Madrid's code following Madrid's surrogate, Cádiz, and Coslada drawn
// apart). The first town of a province drawn decides; a town the lists do
// not know is of the province written right after it.
func (g *gen) siblingState(orig string) (string, bool) {
	res := g.e.res
	own, ok := g.origState(orig)
	if !ok {
		return "", false
	}
	for _, a := range g.patientCities() {
		if fold(a.Text) == fold(orig) {
			continue
		}
		if p, ok := res.PlaceOfCity(a.Text); !ok || !res.CityIsIn(p.City, own.Name) {
			continue
		}
		m, ok := g.tab.get(a.Type, a.Text)
		if !ok && g.corpus != nil {
			m, ok = g.corpus.get(a.Type, a.Text)
		}
		if !ok {
			continue
		}
		if p, ok := res.PlaceOfCity(m.Surrogate); ok {
			return p.State, true
		}
		if st, ok := res.StateOf(m.Surrogate); ok { // a province written as a town ("Coslada. Madrid")
			return st.Name, true
		}
	}
	return "", false
}

// codeState returns the province of the surrogate of a Spanish postal code
// beside the town being drawn, where one is drawn: a town follows its code
// as the code follows its town ("Colonia Narvarte ... 03020. México, D.F.":
// the code drawn first for the first town, the others drawn after it).
func (g *gen) codeState(orig string) (string, bool) {
	if g.e.lang != "es" || g.span.Text != orig {
		return "", false
	}
	z, ok := g.nearPostalCode()
	if !ok {
		return "", false
	}
	m, ok := g.tab.get(z.Type, z.Text)
	if !ok || len(m.Surrogate) < 2 {
		return "", false
	}
	st, ok := g.e.res.StateOf(m.Surrogate[:2])
	return st.Name, ok
}

// nearPostalCode returns the five-digit code nearest the current span
// within addressReach.
func (g *gen) nearPostalCode() (pipeline.Span, bool) {
	return g.nearest(func(a pipeline.Span) bool { t := strings.TrimSpace(a.Text); return len(t) == 5 && isDigits(t) })
}

// origState is the province of an original town: its listed place's, the
// province the patient's records write right after it, or the province
// whose number starts the postal code beside it ("33423 Soto de Llanera").
func (g *gen) origState(orig string) (resources.State, bool) {
	res := g.e.res
	if p, ok := res.PlaceOfCity(orig); ok {
		return res.StateOf(p.State)
	}
	for _, prov := range slices.Sorted(maps.Keys(g.provinceCity)) {
		if fold(g.provinceCity[prov].Text) == fold(orig) {
			return res.StateOf(prov)
		}
	}
	if g.e.lang != "es" || g.span.Text != orig {
		return resources.State{}, false
	}
	if z, ok := g.nearPostalCode(); ok {
		return res.StateOf(strings.TrimSpace(z.Text)[:2])
	}
	return resources.State{}, false
}

// cityIn draws a place of a state by population among those no other town
// of the scope has become and that may replace orig, of as many words as
// orig in four tries where one is drawn.
func (g *gen) cityIn(state, orig string) (resources.Place, bool) {
	places := g.e.res.Places()
	var w weighted
	for _, i := range g.e.res.PlacesIn(state) {
		if c := places[i].City; fold(c) != fold(orig) && !g.tab.isTaken(g.span.Type, c) && !g.leaks(c, City) {
			w.add(i, max(places[i].Population, 1))
		}
	}
	if len(w.idx) == 0 {
		return resources.Place{}, false
	}
	p := places[w.draw(g.rng)]
	for range 3 {
		if wordCount(p.City) == wordCount(orig) {
			break
		}
		p = places[w.draw(g.rng)]
	}
	return p, true
}

// countryPrefixed returns the postal code of one written after its
// country's letter ("E-41013", "E 41013"), which stays.
func countryPrefixed(t string) (code string, ok bool) {
	i := len(t) - 5
	if i < 1 || i > 2 || !isDigits(t[i:]) || t[0] < 'A' || t[0] > 'Z' || i == 2 && t[1] != '-' && t[1] != ' ' {
		return "", false
	}
	return t[i:], true
}

// state draws a state (a province in Spanish), written as the original: an
// abbreviation for a short upper-case one where the pack has abbreviations.
func (g *gen) state(orig string) string {
	states := g.e.res.States()
	return g.stateAs(states[g.rng.IntN(len(states))], orig)
}

func (g *gen) stateAs(st resources.State, orig string) string {
	if g.e.lang != "es" && len(strings.TrimSpace(orig)) <= 3 && strings.ToUpper(orig) == orig {
		return st.Abbr
	}
	return withCaseOf(st.Name, orig)
}

// hospital draws a listed hospital shaped like the original: starting as
// it does ("Centro de Salud ..." for a health centre, "Hospital ..." for a
// hospital) with as many words where the list has enough such.
func (g *gen) hospital(orig string) string {
	hs := g.e.res.Hospitals()
	return hs[drawLike(g.rng, g.e.pools.hospitals, len(hs), orig)].Name
}

// zip draws a real postal code of the pack for a five-digit one (a US ZIP
// code, or a Spanish province's number and three digits), plus random +4
// digits. A code of a city the patient's records name is one of that
// city's surrogate ("28035" beside "Madrid" becomes "080.." beside
// "Barcelona"), whichever of the two comes first; a Spanish code of
// another town of that city's province, one of another town of the
// surrogate's province ("28319" beside "Madrid" becomes "081..").
func (g *gen) zip(s string) string {
	t := strings.TrimSpace(s)
	if isZIP(t) {
		p, own, ok := g.surrogateCityOf(t[:5])
		if !ok {
			p = g.e.res.Places()[g.e.pools.places[0].draw(g.rng)]
		}
		z := p.ZIPs[g.rng.IntN(len(p.ZIPs))]
		if ok && !own { // the province's number, a town's third digit
			z = z[:2] + string(rune('1'+g.rng.IntN(9)))
		}
		z = g.postalDigits(z)
		if len(t) == 10 {
			z += "-" + g.shape(t[6:])
		}
		return strings.Replace(s, t, z, 1)
	}
	return g.shape(s)
}

// postalDigits completes a Spanish postal code's first three digits as
// Correos numbers codes: a province's capital (third digit 0) by its
// districts, 01 to 40 ("28029"), a town by its own, mostly ending in 0
// ("28420"). A US ZIP code is listed whole. Drawn evenly, "28087" (Madrid
// has no district 87) gave surrogates away.
func (g *gen) postalDigits(z string) string {
	switch {
	case len(z) != 3:
		for len(z) < 5 {
			z += string(rune('0' + g.rng.IntN(10)))
		}
		return z
	case z[2] == '0':
		return fmt.Sprintf("%s%02d", z, 1+g.rng.IntN(40))
	case g.rng.IntN(4) > 0:
		return z + string(rune('0'+g.rng.IntN(10))) + "0"
	}
	return z + string(rune('0'+g.rng.IntN(10))) + string(rune('1'+g.rng.IntN(9)))
}

// surrogateCityOf returns the place of the surrogate of a city of the
// patient's records that a postal code belongs to (own), or, for a Spanish
// code, whose province it belongs to, drawing that surrogate if no span has
// yet.
func (g *gen) surrogateCityOf(zip string) (place resources.Place, own, ok bool) {
	if g.inCityOf {
		return resources.Place{}, false, false
	}
	res := g.e.res
	if a, near := g.nearCity(); near {
		// The town written beside it first: its own code, a code of its
		// province, or any code beside a town the lists do not know
		// ("Montevideo 11600"), becomes its surrogate's. One address, one
		// place.
		switch listed := res.IsCity(a.Text); {
		case !listed || res.CityHasZIP(a.Text, zip):
			if place, ok = g.surrogatePlace(a); ok && len(place.ZIPs) > 0 {
				return place, true, true
			}
		case res.CityProvinceHasZIP(a.Text, zip):
			if place, ok = g.surrogatePlace(a); ok && len(place.ZIPs) > 0 && len(place.ZIPs[0]) == 3 {
				return place, false, true
			}
		}
	}
	if a, ok := g.nearProvinceOf(zip); ok {
		// "Las Palmas. CP: 35002": the province's number, its surrogate's.
		if place, ok = g.surrogatePlace(a); ok && len(place.ZIPs) > 0 && len(place.ZIPs[0]) == 3 {
			return place, false, true
		}
	}
	// A town whose surrogate is a province ("Madrid" of "Coslada. Madrid")
	// has no place to take a code from: the next town is asked.
	cities := g.patientCities()
	for _, a := range cities {
		if res.CityHasZIP(a.Text, zip) {
			if place, ok = g.surrogatePlace(a); ok {
				return place, true, true
			}
		}
	}
	for _, a := range cities {
		if res.CityProvinceHasZIP(a.Text, zip) {
			if place, ok = g.surrogatePlace(a); ok && len(place.ZIPs) > 0 && len(place.ZIPs[0]) == 3 {
				return place, false, true
			}
		}
	}
	return resources.Place{}, false, false
}

// nearProvinceOf returns the Spanish province written near the current
// span whose number a postal code starts with.
func (g *gen) nearProvinceOf(zip string) (pipeline.Span, bool) {
	res := g.e.res
	return g.nearest(func(a pipeline.Span) bool {
		st, ok := res.StateOf(a.Text)
		return ok && g.placeKind(a.Text) == statePlace && isDigits(st.Abbr) && strings.HasPrefix(zip, st.Abbr)
	})
}

// provinceOfCity returns, for a state or province, the state of the
// surrogate of the city it belongs with, written as the original, drawing
// that surrogate if no span has yet, so that an address stays one place:
// "Elche, Alicante" becomes "Getafe, Madrid", "Boston, MA" "Springfield,
// IL". That city is the place the patient's records write the original
// right after ("Los Llanos de Aridane, Tenerife"), unless that place is a
// listed city of another province; else, for a name that is no city
// ("Tenerife", not "Alicante"), the first listed city of the patient's
// records in that province.
func (g *gen) provinceOfCity(orig, strategy string) (string, bool) {
	res := g.e.res
	asCity := false
	switch {
	case g.inProvinceOf:
		return "", false
	case strategy == City:
		switch g.placeKind(orig) {
		case cityPlace:
			asCity = true
		case statePlace:
		default:
			return "", false
		}
	case strategy != StateS:
		return "", false
	}
	if _, ok := res.StateOf(orig); !ok {
		return "", false
	}
	of := func(a pipeline.Span) (string, bool) {
		g.inProvinceOf = true
		p, ok := g.surrogatePlace(a)
		g.inProvinceOf = false
		if ok {
			if st, ok := res.StateOf(p.State); ok {
				return g.stateAs(st, orig), true
			}
		}
		return "", false
	}
	if a, ok := g.provinceCity[fold(orig)]; ok && fold(a.Text) != fold(orig) &&
		g.e.r.Policy.Rule(a.Category, a.Type).Strategy == City && g.placeKind(a.Text) == cityPlace &&
		(!res.IsCity(a.Text) || res.CityIsIn(a.Text, orig)) {
		return of(a)
	}
	if asCity {
		return "", false
	}
	for _, a := range g.patientCities() {
		if fold(a.Text) != fold(orig) && res.CityIsIn(a.Text, orig) {
			return of(a)
		}
	}
	return "", false
}

// patientCities are the patient's replaced values that are listed cities,
// in a fixed order.
func (g *gen) patientCities() []pipeline.Span {
	if !g.citiesSet {
		g.citiesSet = true
		res, pol := g.e.res, g.e.r.Policy
		for _, k := range g.aliasKeys {
			a := g.aliases[k]
			if pol.Rule(a.Category, a.Type).Strategy == City && g.placeKind(a.Text) == cityPlace && res.IsCity(a.Text) {
				g.cities = append(g.cities, a)
			}
		}
	}
	return g.cities
}

// surrogatePlace returns the listed place of a city span's surrogate,
// drawing the surrogate if no span has yet; a postal code it draws beside
// is none of its own (inCityOf).
//
// A surrogate that is a Spanish province ("Madrid" of "Coslada. Madrid"
// became "Castellón") is the province's place: its number, no town of the
// same name elsewhere (a Castellón of Málaga).
func (g *gen) surrogatePlace(a pipeline.Span) (resources.Place, bool) {
	res := g.e.res
	sur := g.placeSurrogate(a)
	p, ok := res.PlaceOfCity(sur)
	if st, isState := res.StateOf(sur); isState && isDigits(st.Abbr) && (!ok || !res.CityIsIn(sur, st.Name)) {
		return resources.Place{State: st.Name, ZIPs: []string{st.Abbr + "0"}}, true
	}
	return p, ok
}

// placeSurrogate returns the surrogate of a place span, drawing it if no
// span has yet; a postal code it draws beside is none of its own
// (inCityOf).
func (g *gen) placeSurrogate(a pipeline.Span) string {
	doc, span := g.doc, g.span
	g.inCityOf = true
	sur := g.surrogate(doc, a, g.e.r.Policy.Rule(a.Category, a.Type), "")
	g.doc, g.span, g.inCityOf = doc, span, false
	return sur
}

// addressReach is how far from a town, in code points, a postal code or a
// country of its note is read as part of its address ("Montevideo 11600,
// Uruguay"; "Localidad: Montevideo.\nCP: 11000.").
const addressReach = 100

// nearCity returns the town of the current note nearest the current span,
// within addressReach: the one its postal code and country go with.
func (g *gen) nearCity() (pipeline.Span, bool) {
	return g.nearest(func(a pipeline.Span) bool { return g.placeKind(a.Text) == cityPlace })
}

// nearest returns the span of the current note under the City strategy
// nearest the current span, within addressReach, that ok accepts.
func (g *gen) nearest(ok func(pipeline.Span) bool) (pipeline.Span, bool) {
	var best pipeline.Span
	bestD := addressReach + 1
	pol := g.e.r.Policy
	for _, a := range g.doc.Spans {
		if a.Start == g.span.Start || pol.Rule(a.Category, a.Type).Strategy != City || !ok(a) {
			continue
		}
		d := g.span.Start - a.End
		if a.Start > g.span.Start {
			d = a.Start - g.span.End
		}
		if d >= 0 && d < bestD {
			best, bestD = a, d
		}
	}
	return best, bestD <= addressReach
}

// countryOfCity returns, for a country written near a town of its note,
// the country of the town's surrogate, written as the original: "Montevideo
// ..., Uruguay" became "Gerona ..., Egipto"; the pack's towns are its own
// country's.
func (g *gen) countryOfCity(orig, strategy string) (string, bool) {
	if strategy != CountryS || g.inCityOf {
		return "", false
	}
	a, ok := g.nearCity()
	if !ok {
		return "", false
	}
	if _, ok := g.surrogatePlace(a); !ok {
		return "", false
	}
	home, ok := g.e.res.CountryOf(homeCountries[g.e.lang])
	if !ok {
		return "", false
	}
	return countryAs(home, g.countryForm(orig), orig), true
}

// isZIP reports whether t is a five-digit postal code, or a ZIP+4 code.
func isZIP(t string) bool {
	return len(t) >= 5 && isDigits(t[:5]) && (len(t) == 5 || len(t) == 10 && t[5] == '-' && isDigits(t[6:]))
}

// country draws another country written in the same form as the original:
// English or Spanish name, or nationality adjective (Stubbs & Uzuner: a
// surrogate for "Cambodian" must be an adjective too).
func (g *gen) country(orig string) string {
	form := g.countryForm(orig)
	if c, ok := g.e.countryPool.draw(g.rng); ok && g.rng.IntN(4) > 0 {
		return countryAs(c, form, orig)
	}
	cs := g.e.res.Countries()
	return countryAs(cs[g.rng.IntN(len(cs))], form, orig)
}

// corpusPool draws values of a public list (countries, e-mail providers)
// by how many of a corpus's patients' records name each: a surrogate follows
// the corpus's own distribution, not the whole list's (in MEDDOCAN, España,
// 86% of the countries, stood for Pakistán or El Salvador; now a surrogate
// of España is mostly another country the corpus names, and those become
// España). Callers draw one time in four from the whole list, so that a
// corpus naming few values still has surrogates for them.
type corpusPool[T any] struct {
	values []T
	w      weighted
}

// newCorpusPool keeps the counted keys that list finds, in key order.
func newCorpusPool[T any](counts map[string]int, list func(string) (T, bool)) corpusPool[T] {
	var p corpusPool[T]
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if v, ok := list(k); ok {
			p.w.add(len(p.values), float64(counts[k]))
			p.values = append(p.values, v)
		}
	}
	return p
}

func (p corpusPool[T]) draw(rng randSource) (T, bool) {
	if len(p.values) == 0 {
		var zero T
		return zero, false
	}
	return p.values[p.w.draw(rng)], true
}

// countryForm is the form a country is written in: 0 to 4 for the English
// name, the Spanish name and the English, Spanish masculine and feminine
// nationalities.
func (g *gen) countryForm(orig string) int {
	form := 0
	if g.e.lang == "es" {
		form = 1
	}
	if c, ok := g.e.res.CountryOf(orig); ok {
		f := fold(orig)
		forms := countryForms(c)
		if fold(forms[form]) == f {
			// A name both languages write alike ("Cuba", "Perú" and "Peru")
			// is read in the corpus's language: not "Greece" in Spanish text.
			return form
		}
		for i, v := range forms {
			if fold(v) == f {
				return i
			}
		}
	}
	return form
}

func countryForms(c resources.Country) [5]string {
	return [5]string{c.EN, c.ES, c.NationalityEN, c.NationalityES, c.FemES}
}

func countryAs(c resources.Country, form int, orig string) string {
	return withCaseOf(countryForms(c)[form], orig)
}
