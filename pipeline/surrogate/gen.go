package surrogate

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"

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

	// planSaid is the sex the titles before a corpus-scope name's
	// occurrences say, for the plan, which draws it without its text.
	planSaid resources.Sex
	// planOwner is, for an address the plan draws, the name written before
	// it in its note (see ownerBefore).
	planOwner *pipeline.Span
	// noteSex is the patient's sex the words of note noteSexOf say (see contextSex).
	noteSexOf string
	noteSex   resources.Sex

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
	case Redact, Placeholder, Hash:
		return g.mask(tab, d, s, rule)
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
		if cat, typ, ok := tab.nameOf(s.Text, g.e.lang); ok {
			// The corpus plan meets a doctor's name under CORREO_ELECTRONICO
			// after the name's own span: its surrogate, not a value kept
			// that the patient's rewrite then replaces all the same (the
			// report said "kept" of "Carmen Blanco-Rivera", replaced).
			ns := s
			ns.Category, ns.Type = cat, typ
			return g.name(tab, ns, "")
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
	if c, ok := g.countryOfCity(s.Text, rule.Strategy); ok && fold(c) != fold(s.Text) && rule.kept(c) {
		// The home country, which the policy keeps wherever it is written
		// (so it is no patient's replaced original).
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

// nameOf returns the category and type of a name whose every word (two or
// more) the table maps as a name word of that type, the first in order.
func (t *table) nameOf(text, lang string) (category, typ string, ok bool) {
	words := nameWords(text, lang)
	if len(words) < 2 {
		return "", "", false
	}
	t.mu.Lock()
	kinds := slices.Clone(t.kinds)
	t.mu.Unlock()
	slices.SortFunc(kinds, func(a, b [3]string) int { return strings.Compare(a[1], b[1]) })
	for _, k := range kinds {
		if !strings.HasPrefix(k[2], "name-") {
			continue
		}
		all := true
		for _, w := range words {
			if _, found := t.rowOf(k[1], w); !found {
				all = false
				break
			}
		}
		if all {
			return k[0], k[1], true
		}
	}
	return "", "", false
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
		return g.provincePrefix(pre) + g.shape(rest)
	}
	if pre, rest, ok := insurancePrefix(orig, g.e.lang); ok {
		return g.provincePrefix(pre) + g.shape(rest)
	}
	return g.shape(orig)
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
