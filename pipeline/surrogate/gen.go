package surrogate

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
)

// gen makes the surrogates of one scope: the corpus, or one patient.
type gen struct {
	e      *engine
	tab    *table     // this scope's mappings
	corpus *table     // the corpus table, read-only, for a patient's corpus-scope spans
	rng    *rand.Rand //
	excl   *valueSet  // a patient's replaced originals (nil for the corpus scope)
	// excls are, for a corpus-scope value, the sets of the patients in whose
	// records it occurs: its surrogate lands there.
	excls []*valueSet
	// exclWord reports whether one of the same patients' records holds a
	// folded word as a value or a name word (nil for a patient's scope).
	exclWord     func(folded string) bool
	patient      string
	shift        PatientShift
	dates        map[string]*date         // parsed DATE originals of the patient
	aliases      map[string]pipeline.Span // the patient's replaced values, for kept spans that repeat one
	aliasKeys    []string                 // aliases' keys, longest first
	misses       *misses                  // the patient's values looked for outside the spans (see propagate.go)
	inCityOf     bool                     // drawing a city for a postal code (see surrogateCityOf)
	inProvinceOf bool                     // drawing a city for a province (see provinceOfCity)
	cities       []pipeline.Span          // the aliases that are listed cities, once patientCities computes them
	citiesSet    bool                     // cities is computed
	// provinceCity is, by folded state or province, the place the patient's
	// records write it right after (see addressPairs).
	provinceCity map[string]pipeline.Span
	review       []ReviewItem
	doc          *pipeline.Document
	span         pipeline.Span

	streetOf            string // the address streetToks splits
	streetToks, toksBuf []streetToken
}

func (e *engine) newGen(tab *table, rng *rand.Rand, excl *valueSet, corpus *table) *gen {
	return &gen{e: e, tab: tab, rng: rng, excl: excl, corpus: corpus}
}

const tries = 60

// mentionTable is a table for one mention of a mention-scope value: it
// starts with the scope's letter map (initials stay coherent within a
// note's names) and none of its values, and it is thrown away after.
func (g *gen) mentionTable() *table {
	t := newTable(ScopeMention)
	for _, m := range g.tab.letterMap() {
		t.add(m)
	}
	return t
}

// lastCandidate is the review reason of a surrogate used unchecked: no
// candidate, drawn or from the wider space, met every constraint.
const lastCandidate = "no surrogate met every constraint; the last candidate was used"

// surrogate returns the replacement of one span. before is the text just
// before it, where an unannotated title ("Dr. ") tells a surname.
func (g *gen) surrogate(d *pipeline.Document, s pipeline.Span, rule Rule, before string) string {
	g.doc, g.span = d, s
	if rule.kept(s.Text) {
		return s.Text
	}
	tab := g.tab
	switch {
	case rule.Scope == ScopeCorpus && !patientOnly[rule.Strategy] && g.corpus != nil:
		tab = g.corpus
	case rule.Scope == ScopeMention && !patientOnly[rule.Strategy]:
		tab = g.mentionTable()
	}
	switch rule.Strategy {
	case Name:
		return g.name(tab, s, before)
	case Username:
		return g.username(tab, s)
	case DateShift, DateShuffle:
		return g.date(s, rule.Strategy)
	case Age:
		return g.age(s)
	case DepartmentS:
		gen := g.e.res.GenericDepartment(s.Text, g.e.lang)
		return withCaseOf(gen, s.Text)
	}
	if m, ok := tab.get(s.Type, s.Text); ok {
		return reuse(m.Surrogate, s.Text, rule.Strategy)
	}
	if wordsOnly(rule.Strategy, s.Text) {
		// Words under an identifier's or a contact's type ("Lactante", "raza
		// caucásica", a name under EMAIL): letters drawn at random would be
		// letter soup, and no list holds what such a value means. A value
		// another span of the patient replaces takes its surrogate; others
		// are kept, and a person decides.
		if a, ok := g.aliases[fold(s.Text)]; ok {
			return g.surrogate(d, a, g.e.r.Policy.Rule(a.Category, a.Type), "")
		}
		if !g.e.r.Policy.names(s.Category, s.Type) {
			// Under a label no rule of the policy names (a tag set of its
			// own, a misspelt type), words may well be a name: left in
			// place, not as a value kept on purpose but as one the check
			// finds, which keeps the corpus from being shared until the
			// policy names the label or a curator resolves it.
			g.flag(s.Text, "words under a label the policy has no rule for: left in place, a finding of the check; name the label in the policy (or map it to one)", false)
			return s.Text
		}
		g.flag(s.Text, "words, not a code, under a type whose strategy replaces codes: kept", true)
		return s.Text
	}
	if c, ok := g.provinceOfCity(s.Text, rule.Strategy); ok && fold(c) != fold(s.Text) && !g.leaks(c, rule.Strategy) {
		// Its city's province, which the city (or another province of the
		// patient's) may already hold as a surrogate: "Madrid, Madrid".
		tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: c, Strategy: rule.Strategy})
		return c
	}
	fits := func(c string) bool {
		return c != "" && fold(c) != fold(s.Text) && !tab.isTaken(s.Type, c) && !g.leaks(c, rule.Strategy)
	}
	var last string
	for i := 0; i < tries; i++ {
		c := g.make(rule.Strategy, s.Text, i)
		last = c
		if !fits(c) {
			continue
		}
		tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: c, Strategy: rule.Strategy})
		return c
	}
	if c, ok := g.wider(rule.Strategy, s.Text, fits); ok {
		tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: c, Strategy: rule.Strategy})
		return c
	}
	g.flag(last, lastCandidate, false)
	tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: last, Strategy: rule.Strategy})
	return last
}

// leaks reports whether a candidate contains an original value: any of the
// corpus's for values from open-ended lists, the patient's own for the closed
// lists (states, countries, professions, places) that a corpus may exhaust.
//
// The patient's set also holds every word of the patient's original names, so
// that no token of a surrogate is one of them. A corpus-scope value lands in
// the records of every patient it occurs in: it must contain none of theirs.
func (g *gen) leaks(c, strategy string) bool {
	switch strategy {
	case StateS, CountryS, Profession:
		return g.excluded(c)
	case City:
		// A closed list whose big cities every corpus names: a surrogate may
		// be a place of another patient's records ("Madrid" for one patient's
		// "Sevilla"), as a note names them, never one of its own patient's,
		// nor one of its patient's province or state (which the surrogate
		// of a province beside it could then not leave, see provinceOfCity).
		return g.excluded(c) || g.inPatientState(c)
	case HospitalS, Organization:
		// Lists of hospitals and institutions, corpus-wide: a surrogate may
		// name a place of another patient's records, never equal another
		// original, never hold its patients'.
		return g.excluded(c) || g.e.orig.has(c)
	case Street:
		return g.excluded(c) || g.e.orig.withinSkip(c, g.keptStreetWord)
	case Shape:
		if _, rest, ok := collegiatePrefix(c, g.e.lang); ok {
			// The province numbers are kept (a "28" of Madrid's is also
			// someone's age): the number after them must not be an original.
			return g.e.orig.within(rest) || g.excluded(c)
		}
	}
	return g.e.orig.within(c) || g.excluded(c)
}

// inPatientState reports whether a listed place lies in a state or province
// the patient's records name ("Benidorm" for a patient of "Elche, Alicante").
func (g *gen) inPatientState(c string) bool {
	p, ok := g.e.res.PlaceOfCity(c)
	if !ok {
		return false
	}
	st, ok := g.e.res.StateOf(p.State)
	if !ok {
		return false
	}
	if g.excluded(st.Name) || !isDigits(st.Abbr) && g.excluded(st.Abbr) {
		return true
	}
	// The province under another of its names ("Bizkaia" for Vizcaya).
	for _, k := range g.aliasKeys {
		if other, ok := g.e.res.StateOf(g.aliases[k].Text); ok && other == st {
			return true
		}
	}
	return false
}

// excludedWord is excluded for one folded word (a listed name), by lookups.
func (g *gen) excludedWord(f string) bool {
	return g.excl.hasToken(f) || g.exclWord != nil && g.exclWord(f)
}

// excluded reports whether a candidate contains a value or name word of the
// patients whose records it goes to.
func (g *gen) excluded(c string) bool {
	if g.excl.within(c) {
		return true
	}
	for _, v := range g.excls {
		if v.within(c) {
			return true
		}
	}
	return false
}

func (g *gen) flag(sur, reason string, kept bool) {
	g.review = append(g.review, ReviewItem{Doc: g.doc.ID, Start: g.span.Start, End: g.span.End, Type: g.span.Type,
		Original: g.span.Text, Surrogate: sur, Reason: reason, Kept: kept})
}

// reuse writes a stored surrogate in the letter case of this mention.
func reuse(sur, orig, strategy string) string {
	switch strategy {
	case Shape, Phone, Email, URL, IP, SSN, SSNMask:
		return transferCase(orig, sur)
	}
	return withCaseOf(sur, orig)
}

// withCaseOf writes a listed value in the case of the original: upper or lower
// case when the original is, the list's own spelling otherwise.
func withCaseOf(s, orig string) string {
	switch caseOf(orig) {
	case caseUpper:
		return strings.ToUpper(s)
	case caseLower:
		return strings.ToLower(s)
	}
	return s
}

// transferCase gives each letter of sur the case of the letter at the same
// place in orig (shapes keep their length).
func transferCase(orig, sur string) string {
	o, s := []rune(orig), []rune(sur)
	if len(o) != len(s) {
		return sur
	}
	for i := range s {
		if unicode.IsUpper(o[i]) {
			s[i] = unicode.ToUpper(s[i])
		} else if unicode.IsLower(o[i]) {
			s[i] = unicode.ToLower(s[i])
		}
	}
	return string(s)
}

// make draws one candidate for a whole-value strategy.
func (g *gen) make(strategy, orig string, try int) string {
	res := g.e.res
	switch strategy {
	case City:
		return g.place(orig)
	case StateS:
		return g.state(orig)
	case ZIP:
		return g.zip(orig)
	case CountryS:
		return g.country(orig)
	case HospitalS:
		return withCaseOf(g.hospital(orig), orig)
	case Organization:
		return withCaseOf(g.organization(orig, try), orig)
	case Profession:
		p := res.Professions(g.e.lang)
		return withCaseOf(p[g.rng.IntN(len(p))], orig)
	case Street:
		return g.street(orig, try)
	case Phone:
		return g.phone(orig)
	case Email:
		if try == 0 {
			if c, ok := g.followName(orig); ok {
				return c
			}
		}
		return g.email(orig, false)
	case URL:
		return g.url(orig, false)
	case IP:
		return g.ip(orig)
	case SSN:
		return g.ssn(orig)
	case SSNMask:
		return strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return 'x'
			}
			return r
		}, orig)
	}
	if pre, rest, ok := collegiatePrefix(orig, g.e.lang); ok {
		return pre + g.shape(rest)
	}
	return g.shape(orig)
}

// collegiatePrefix splits a Spanish collegiate number ("28 28 17103",
// "08-08-25574") into its two leading province numbers (01-52: the college's
// province, then the province of the first registration), which say where,
// not who, and are kept, and its number, which shape redraws. A number drawn
// whole would give its kind away: "16 59 44561" names no province.
func collegiatePrefix(s, lang string) (prefix, rest string, ok bool) {
	if lang != "es" || len(s) < 9 {
		return "", "", false
	}
	province := func(d string) bool { n, err := strconv.Atoi(d); return err == nil && isDigits(d) && n >= 1 && n <= 52 }
	sep := s[2]
	if (sep != ' ' && sep != '-') || s[5] != sep || !province(s[:2]) || !province(s[3:5]) || !isDigits(s[6:]) || len(s)-6 < 3 {
		return "", "", false
	}
	return s[:6], s[6:], true
}

// codeStrategy are the strategies that rewrite a value's codes (digits and
// short letter codes) and keep its words.
var codeStrategy = map[string]bool{Shape: true, Phone: true, SSN: true}

// wordsOnly reports whether a strategy that rewrites codes, addresses or
// links meets a value without any: words it would have to make letter soup of.
func wordsOnly(strategy, v string) bool {
	switch {
	case codeStrategy[strategy]:
		return !hasCode(v)
	case strategy == Email:
		return !strings.Contains(v, "@") && !hasCode(v)
	case strategy == URL:
		return !strings.Contains(v, ".") && !strings.Contains(v, "/") && !hasCode(v)
	}
	return false
}

// hasCode reports whether a value holds something shape replaces: a digit,
// or a letter code.
func hasCode(s string) bool {
	for _, t := range codeTokens(s) {
		if t.code {
			return true
		}
	}
	return false
}

// codeToken is a run of letters or digits, or of anything else.
type codeToken struct {
	text string
	code bool // digits, or letters that are a code: replaced
	word bool // a run of letters
}

// codeTokens splits a value into runs and tells codes from words: a run of
// letters is a code when it is mixed with digits ("5B", "AB1234"), or is an
// upper-case run of at most three letters ("MRN", "A"); "y" is a word.
func codeTokens(s string) []codeToken {
	var out []codeToken
	rs := []rune(s)
	for i := 0; i < len(rs); {
		j := i + 1
		alnum := unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])
		for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || unicode.IsMark(rs[j])) == alnum {
			j++
		}
		tok := string(rs[i:j])
		t := codeToken{text: tok}
		if alnum {
			digits := strings.ContainsFunc(tok, unicode.IsDigit)
			letters := strings.ContainsFunc(tok, unicode.IsLetter)
			n := j - i
			t.word = letters && !digits
			t.code = digits || n <= 3 && strings.ToUpper(tok) == tok
		}
		out = append(out, t)
		i = j
	}
	return out
}

// shape replaces the codes of a value: digits by random digits, the first
// digit of each run not zero (Deleger et al.), code letters by random
// letters of the same case; words and punctuation stay. A Spanish DNI or NIE
// ("12345678Z", "X1234567L") gets the check letter of its new number.
func (g *gen) shape(s string) string { return g.shapeLeading(s, false) }

// houseNumber is shape for the numbers of an address (house, floor, door,
// kilometre), whose first digits run as Benford's law says, 1 six times as
// often as 9, and did so in MEDDOCAN's streets: drawn evenly, an 8 or a 9
// gave a surrogate address away.
func (g *gen) houseNumber(s string) string { return g.shapeLeading(s, true) }

// leadDigit draws the first digit of a run: 1-9 evenly, or by Benford's law.
func (g *gen) leadDigit(benford bool) byte {
	if !benford {
		return byte('1' + g.rng.IntN(9))
	}
	u := g.rng.Float64()
	for d := 1; d < 9; d++ {
		if u < math.Log10(float64(d)+1) { // P(first digit <= d)
			return byte('0' + d)
		}
	}
	return '9'
}

// shapeLeading is shape with the first digit of each run drawn by leadDigit.
func (g *gen) shapeLeading(s string, benford bool) string {
	var b strings.Builder
	for _, t := range codeTokens(s) {
		if !t.code {
			b.WriteString(t.text)
			continue
		}
		prevDigit := false
		for _, r := range t.text {
			switch {
			case r >= '0' && r <= '9':
				if prevDigit {
					b.WriteByte(byte('0' + g.rng.IntN(10)))
				} else {
					b.WriteByte(g.leadDigit(benford))
				}
				prevDigit = true
				continue
			case unicode.IsUpper(r):
				b.WriteByte(byte('A' + g.rng.IntN(26)))
			case unicode.IsLower(r):
				b.WriteByte(byte('a' + g.rng.IntN(26)))
			default:
				b.WriteRune(r)
			}
			prevDigit = false
		}
	}
	return fixDNI(s, b.String())
}

// dniLetters are the check letters of a DNI number modulo 23.
const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

// fixDNI gives a shaped Spanish DNI or NIE the check letter of its number
// when the original was one (8 digits, or X/Y/Z and 7 digits, then a letter,
// a hyphen or space allowed before it).
func fixDNI(orig, sur string) string {
	o, ok := dniParts(orig, true)
	if !ok {
		return sur
	}
	if o.prefix != 0 { // a NIE's X, Y or Z stays: it tells when it was issued, not whose it is
		sur = string(orig[0]) + sur[1:]
	}
	p, ok := dniParts(sur, false) // its letter is the one to compute
	if !ok || len(p.digits) != len(o.digits) {
		return sur
	}
	num := p.digits
	if p.prefix != 0 {
		num = string(rune('0'+strings.IndexByte("XYZ", p.prefix))) + num
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return sur
	}
	letter := dniLetters[n%23]
	if unicode.IsLower(rune(orig[len(orig)-1])) {
		letter += 'a' - 'A'
	}
	return sur[:len(sur)-1] + string(letter)
}

type dni struct {
	prefix byte // X, Y or Z for a NIE
	digits string
}

// dniParts reads a DNI or NIE; checked requires its letter to be a check letter.
func dniParts(s string, checked bool) (dni, bool) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if t != s && strings.ToLower(strings.TrimSpace(s)) != s || len(t) < 9 {
		return dni{}, false
	}
	last := t[len(t)-1]
	if last < 'A' || last > 'Z' || checked && !strings.ContainsRune(dniLetters, rune(last)) {
		return dni{}, false
	}
	body := strings.TrimRight(t[:len(t)-1], " -")
	var d dni
	if body != "" && strings.IndexByte("XYZ", body[0]) >= 0 {
		d.prefix, body = body[0], body[1:]
	}
	if !isDigits(body) || d.prefix == 0 && len(body) != 8 || d.prefix != 0 && len(body) != 7 {
		return dni{}, false
	}
	d.digits = body
	return d, true
}

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

// phone keeps the number's format; a ten-digit (or 1 + ten-digit) number gets
// a real US area code and an exchange not starting with 0 or 1 (Deleger et
// al.); a Spanish number (nine digits, after +34 or 0034) keeps its first
// digit, which tells a landline (9), a mobile (6, 7) or a service (8).
// Words ("ext") stay.
func (g *gen) phone(s string) string {
	var digits []int // byte positions of digits
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			digits = append(digits, i)
		}
	}
	out := []byte(s)
	for k, i := range digits {
		if k == 0 || s[i-1] < '0' || s[i-1] > '9' {
			out[i] = byte('1' + g.rng.IntN(9))
		} else {
			out[i] = byte('0' + g.rng.IntN(10))
		}
	}
	n := len(digits)
	if g.e.lang == "es" {
		start := 0
		switch {
		case n >= 11 && strings.HasPrefix(digitsOf(s), "34"):
			start = 2
		case n >= 13 && strings.HasPrefix(digitsOf(s), "0034"):
			start = 4
		}
		for k := 0; k < start; k++ {
			out[digits[k]] = s[digits[k]]
		}
		if start < n && strings.IndexByte("6789", s[digits[start]]) >= 0 {
			out[digits[start]] = s[digits[start]]
		}
		return string(out)
	}
	start := -1
	if n == 10 {
		start = 0
	} else if n == 11 && s[digits[0]] == '1' {
		out[digits[0]] = '1'
		start = 1
	}
	if start >= 0 {
		codes := g.e.res.AreaCodes()
		ac := codes[g.rng.IntN(len(codes))]
		for k := 0; k < 3; k++ {
			out[digits[start+k]] = ac[k]
		}
		out[digits[start+3]] = byte('2' + g.rng.IntN(8))
	}
	return string(out)
}

func digitsOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// email builds an address of real words: the local part from a listed first
// name and surname joined as the original's words were ("jgarcia" ->
// "ana.acosta", digits kept in number and redrawn), the domain a public
// provider for a public provider ("gmail.com"), else place words of the pack
// in as many labels with the original's last labels kept ("odon.edu.uy" ->
// "lugo.edu.uy"). A wide address joins its words, which a corpus may hold
// each as a value of its own: the first name's initial and the surname
// ("aacosta"), two place words in a label ("lugozamora.edu.uy").
func (g *gen) email(s string, wide bool) string {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return g.shape(s)
	}
	return g.localPart(s[:at], wide) + "@" + g.domain(s[at+1:], wide)
}

// followName writes an address after the new names of the people whose
// names it holds: each name word of the corpus table (four letters or more)
// found in its local part becomes that word's surrogate, the longest first
// ("calleja.alicia", Alicia Calleja's, becomes "kone.eloisa" when Calleja
// became Kone and Alicia Eloisa); what is left keeps its separators, an
// initial goes through the letter map ("tpastor", Teresa Pastor's, becomes
// "gfrias" when Pastor became Frías and T G), two or three letters become
// the start of a drawn surname (the "car" of "jortegacar") and a longer run
// a drawn surname, never letter soup; digits are redrawn and the domain
// drawn as email draws it. ok is false when the local part holds no
// replaced name word. Corpus scope values are drawn with addresses last, so
// the names come first.
func (g *gen) followName(orig string) (string, bool) {
	at := strings.LastIndexByte(orig, '@')
	if at < 0 {
		return "", false
	}
	local := orig[:at]
	lower := strings.ToLower(local)
	if len(lower) != len(local) {
		return "", false
	}
	type found struct {
		start, end int
		m          Mapping
	}
	var words []Mapping
	for _, t := range []*table{g.tab, g.corpus} {
		if t != nil {
			words = append(words, t.nameWords()...)
		}
	}
	slices.SortStableFunc(words, func(a, b Mapping) int { return len(asciiWord(b.Original)) - len(asciiWord(a.Original)) })
	var hits []found
	taken := make([]bool, len(lower))
	for _, m := range words {
		w := asciiWord(m.Original)
		if len(w) < 4 {
			continue
		}
		for from := 0; from < len(lower); {
			i := strings.Index(lower[from:], w)
			if i < 0 {
				break
			}
			i += from
			if !slices.Contains(taken[i:i+len(w)], true) {
				hits = append(hits, found{i, i + len(w), m})
				for k := i; k < i+len(w); k++ {
					taken[k] = true
				}
			}
			from = i + len(w)
		}
	}
	if len(hits) == 0 {
		return "", false
	}
	slices.SortFunc(hits, func(a, b found) int { return a.start - b.start })
	var b strings.Builder
	rest := func(s string, tab *table) {
		for len(s) > 0 {
			r, size := utf8.DecodeRuneInString(s)
			if !(r < utf8.RuneSelf && unicode.IsLetter(r)) {
				if r >= '0' && r <= '9' {
					b.WriteByte(byte('0' + g.rng.IntN(10)))
				} else {
					b.WriteString(s[:size])
				}
				s = s[size:]
				continue
			}
			n := strings.IndexFunc(s, func(r rune) bool { return !(r < utf8.RuneSelf && unicode.IsLetter(r)) })
			if n < 0 {
				n = len(s)
			}
			run := s[:n]
			switch {
			case n == 1: // an initial
				b.WriteString(withCase(strings.ToLower(g.letter(tab, g.span, run)), caseOf(run)))
			case n <= 3: // the start of a second surname ("jortegacar")
				w := asciiWord(g.e.pools.last.draw(g.rng, 0))
				b.WriteString(withCase(w[:min(n, len(w))], caseOf(run)))
			default: // a word no table maps, drawn
				b.WriteString(withCase(asciiWord(g.e.pools.last.draw(g.rng, 0)), caseOf(run)))
			}
			s = s[n:]
		}
	}
	prev := 0
	for _, h := range hits {
		tab := g.tab
		if g.corpus != nil && h.m.Scope == ScopeCorpus {
			tab = g.corpus
		}
		rest(local[prev:h.start], tab)
		b.WriteString(withCase(asciiWord(h.m.Surrogate), caseOf(local[h.start:h.end])))
		prev = h.end
	}
	rest(local[prev:], g.tab)
	return b.String() + "@" + g.domain(orig[at+1:], false), true
}

func (g *gen) localPart(orig string, wide bool) string {
	sep := "."
	for _, c := range []string{".", "_", "-"} {
		if strings.Contains(orig, c) {
			sep = c
			break
		}
	}
	first := asciiWord(g.e.pools.first[resources.Either].draw(g.rng, 0))
	last := asciiWord(g.e.pools.last.draw(g.rng, 0))
	out := first + sep + last
	if wide {
		out = first[:min(1, len(first))] + last
	}
	if d := digitsOf(orig); d != "" {
		out += g.shape(d)
	}
	return out
}

// institutionTLD are the top-level domains of a pack's institutions: a
// domain under another country's (".uy") keeps it and gets place words.
var institutionTLD = setOf("es", "cat", "eus", "gal", "org", "net", "com", "edu")

// genericLabels are domain labels that name a kind of organization, not one.
var genericLabels = setOf("com", "org", "net", "edu", "gov", "gob", "ac", "co", "es", "nhs", "mil", "int", "info")

func (g *gen) domain(orig string, wide bool) string {
	res := g.e.res
	if res.IsFreeMailDomain(orig) {
		// A public provider for a public provider, mostly one the corpus's
		// addresses use, as often as they use it ("yahoo.es" in Spain).
		if d, ok := g.e.providerPool.draw(g.rng); ok && g.rng.IntN(4) > 0 {
			return d
		}
		fm := res.FreeMailDomains()
		return fm[g.rng.IntN(len(fm))]
	}
	labels := strings.Split(orig, ".")
	if inst := res.InstitutionDomains(); len(inst) > 0 && !wide && len(labels) > 1 && institutionTLD[strings.ToLower(labels[len(labels)-1])] {
		// An institution's domain for an institution's of the pack's
		// country ("sergas.es" for "sescam.jccm.es"), never its own.
		for range tries {
			if d := inst[g.rng.IntN(len(inst))]; !strings.EqualFold(d, orig) {
				return d
			}
		}
	}
	words := g.e.pools.domainWords
	for i := range labels {
		if i == len(labels)-1 && len(labels) > 1 || genericLabels[strings.ToLower(labels[i])] {
			continue
		}
		labels[i] = words[g.rng.IntN(len(words))]
		if wide {
			labels[i] += words[g.rng.IntN(len(words))]
		}
	}
	return strings.Join(labels, ".")
}

// asciiWord writes a name as an address writes it: folded, letters only.
func asciiWord(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r
		}
		return -1
	}, fold(name))
}

// url keeps the scheme, a leading "www.", generic labels and the top-level
// domain; other host labels become place words, and the words of the path
// surnames of the pack, its digits redrawn. A wide one joins two words in
// each label and each word of the path (see email).
func (g *gen) url(s string, wide bool) string {
	prefix := ""
	rest := s
	if i := strings.Index(rest, "://"); i >= 0 {
		prefix, rest = rest[:i+3], rest[i+3:]
	}
	if strings.HasPrefix(strings.ToLower(rest), "www.") {
		prefix, rest = prefix+rest[:4], rest[4:]
	}
	host, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		host, path = rest[:i], rest[i:]
	}
	var b strings.Builder
	for _, t := range codeTokens(path) {
		switch {
		case t.word && !t.code:
			w := asciiWord(g.e.pools.last.draw(g.rng, 0))
			if wide {
				w += asciiWord(g.e.pools.last.draw(g.rng, 0))
			}
			b.WriteString(withCase(w, caseOf(t.text)))
		case t.code:
			b.WriteString(g.shape(t.text))
		default:
			b.WriteString(t.text)
		}
	}
	return prefix + g.domain(host, wide) + b.String()
}

// ip draws an address of the same family: four octets 1-254, or the shape of
// an IPv6 address with hexadecimal letters.
func (g *gen) ip(s string) string {
	if parts := strings.Split(s, "."); len(parts) == 4 {
		for i := range parts {
			parts[i] = strconv.Itoa(1 + g.rng.IntN(254))
		}
		return strings.Join(parts, ".")
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9':
			return rune('0' + g.rng.IntN(10))
		case r >= 'a' && r <= 'f':
			return rune('a' + g.rng.IntN(6))
		case r >= 'A' && r <= 'F':
			return rune('A' + g.rng.IntN(6))
		}
		return r
	}, s)
}

// ssn keeps the format with an area number SSA could issue (001-899, not 666).
func (g *gen) ssn(s string) string {
	out := g.shape(s)
	var pos []int
	for i := 0; i < len(out) && len(pos) < 3; i++ {
		if out[i] >= '0' && out[i] <= '9' {
			pos = append(pos, i)
		}
	}
	if len(pos) == 3 {
		b := []byte(out)
		b[pos[0]] = byte('1' + g.rng.IntN(8))
		if b[pos[0]] == '6' && b[pos[1]] == '6' && b[pos[2]] == '6' {
			b[pos[2]] = '5'
		}
		out = string(b)
	}
	return out
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
	cities := g.patientCities()
	for _, a := range cities {
		if res.CityHasZIP(a.Text, zip) {
			place, ok = g.surrogatePlace(a)
			return place, true, ok
		}
	}
	for _, a := range cities {
		if res.CityProvinceHasZIP(a.Text, zip) {
			place, ok = g.surrogatePlace(a)
			return place, false, ok && len(place.ZIPs) > 0 && len(place.ZIPs[0]) == 3
		}
	}
	return resources.Place{}, false, false
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
func (g *gen) surrogatePlace(a pipeline.Span) (resources.Place, bool) {
	doc, span := g.doc, g.span
	g.inCityOf = true
	sur := g.surrogate(doc, a, g.e.r.Policy.Rule(a.Category, a.Type), "")
	g.doc, g.span, g.inCityOf = doc, span, false
	return g.e.res.PlaceOfCity(sur)
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

// age keeps ages below 90; 90 and over become 90, and every age of a patient
// who reached 90 moves down by the same years (Stubbs & Uzuner 5.2). Ages in
// months, weeks or days are an infant's and stay.
func (g *gen) age(s pipeline.Span) string {
	n, at, width, ok := ageYears(s.Text)
	if !ok {
		if strings.Contains(fold(s.Text), "novent") || strings.Contains(fold(s.Text), "ninet") {
			g.flag(s.Text, "an age in words of 90 or more: replace it by hand", true)
		}
		return s.Text
	}
	v := n - g.shift.AgeShift
	if v > 90 {
		g.flag("90", "an age above 90 after the patient's stored age shift: capped at 90", false)
		v = 90
	}
	if v == n {
		return s.Text
	}
	if v < 0 {
		v = 0
	}
	sur := s.Text[:at] + strconv.Itoa(v) + s.Text[at+width:]
	if m, ok := g.tab.get(s.Type, s.Text); ok {
		return m.Surrogate
	}
	g.tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: sur, Strategy: Age})
	return sur
}

// ageYears finds the number of years in an age phrase ("70 años", "92-year-old").
func ageYears(s string) (n, at, width int, ok bool) {
	f := fold(s)
	for _, unit := range []string{"mes", "month", "seman", "week", "dia", "day", "hora", "hour", "mo", "wk"} {
		if strings.Contains(f, unit) {
			return 0, 0, 0, false
		}
	}
	at = strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' })
	if at < 0 {
		return 0, 0, 0, false
	}
	width = 0
	for at+width < len(s) && s[at+width] >= '0' && s[at+width] <= '9' {
		width++
	}
	n, err := strconv.Atoi(s[at : at+width])
	return n, at, width, err == nil && width <= 3
}

// organization draws a listed organization shaped like the original (see
// hospital), then, once the list is used up, one of faker's company
// patterns over the pack's surnames.
func (g *gen) organization(orig string, try int) string {
	o := g.e.res.Organizations()
	if try < tries/4 {
		return o[drawLike(g.rng, g.e.pools.organizations, len(o), orig)]
	}
	last := func() string { return g.e.pools.last.draw(g.rng, 0) }
	and, kinds := g.companyWords()
	switch g.rng.IntN(3) {
	case 0:
		return last() + " " + kinds[g.rng.IntN(len(kinds))]
	case 1:
		return last() + "-" + last()
	}
	return last() + ", " + last() + and + last()
}

// companyWords are the word that joins the surnames of a company and the
// words that end its name, in the corpus's language.
func (g *gen) companyWords() (and string, kinds []string) {
	if g.e.lang == "es" {
		return " y ", []string{"S.A.", "S.L.", "Hermanos", "e Hijos"}
	}
	return " and ", []string{"Group", "Inc", "LLC", "and Sons"}
}
