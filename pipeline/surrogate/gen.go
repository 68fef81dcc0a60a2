package surrogate

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"

	"deidcorpus/pipeline"
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
	excls   []*valueSet
	patient string
	shift   PatientShift
	dates   map[string]*date // parsed DATE originals of the patient
	review  []ReviewItem
	doc     *pipeline.Document
	span    pipeline.Span

	streetOf            string // the address streetToks splits
	streetToks, toksBuf []streetToken
}

func (e *engine) newGen(tab *table, rng *rand.Rand, excl *valueSet, corpus *table) *gen {
	return &gen{e: e, tab: tab, rng: rng, excl: excl, corpus: corpus}
}

const tries = 60

// surrogate returns the replacement of one span. before is the text just
// before it, where an unannotated title ("Dr. ") tells a surname.
func (g *gen) surrogate(d *pipeline.Document, s pipeline.Span, rule Rule, before string) string {
	g.doc, g.span = d, s
	if rule.Strategy == Keep {
		return s.Text
	}
	tab := g.tab
	if rule.Scope == ScopeCorpus && !patientOnly[rule.Strategy] && g.corpus != nil {
		tab = g.corpus
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
	var last string
	for i := 0; i < tries; i++ {
		c := g.make(rule.Strategy, s.Text, i)
		last = c
		if c == "" || fold(c) == fold(s.Text) || tab.isTaken(s.Type, c) || g.leaks(c, rule.Strategy) {
			continue
		}
		tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: c, Strategy: rule.Strategy})
		return c
	}
	g.flag(last, "no surrogate met every constraint; the last candidate was used", false)
	tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: last, Strategy: rule.Strategy})
	return last
}

// leaks reports whether a candidate contains an original value: any of the
// corpus's for values from open-ended lists, the patient's own for the closed
// lists (states, countries, professions) that a corpus may exhaust.
//
// The patient's set also holds every word of the patient's original names, so
// that no token of a surrogate is one of them. A corpus-scope value lands in
// the records of every patient it occurs in: it must contain none of theirs.
func (g *gen) leaks(c, strategy string) bool {
	switch strategy {
	case StateS, CountryS, Profession:
		return g.excluded(c)
	case Street:
		return g.excluded(c) || g.e.orig.withinSkip(c, g.keptStreetWord)
	}
	return g.e.orig.within(c) || g.excluded(c)
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
		if isDigits(strings.TrimSpace(orig)) {
			return g.shape(orig)
		}
		p := res.Places()[g.rng.IntN(len(res.Places()))]
		return withCaseOf(p.City, orig)
	case StateS:
		states := res.States()
		st := states[g.rng.IntN(len(states))]
		if len(strings.TrimSpace(orig)) <= 3 && strings.ToUpper(orig) == orig {
			return st.Abbr
		}
		return withCaseOf(st.Name, orig)
	case ZIP:
		return g.zip(orig)
	case CountryS:
		return g.country(orig)
	case HospitalS:
		h := res.Hospitals()[g.rng.IntN(len(res.Hospitals()))]
		return withCaseOf(h.Name, orig)
	case Organization:
		return withCaseOf(g.organization(try), orig)
	case Profession:
		p := res.Professions(g.e.lang)
		return withCaseOf(p[g.rng.IntN(len(p))], orig)
	case Street:
		return g.street(orig, try)
	case Phone:
		return g.phone(orig)
	case Email:
		return g.email(orig)
	case URL:
		return g.url(orig)
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
	return g.shape(orig)
}

// shape replaces letters by random letters of the same case and digits by
// random digits, the first digit of each run not zero (Deleger et al.), and
// keeps everything else.
func (g *gen) shape(s string) string {
	var b strings.Builder
	prevDigit := false
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			if prevDigit {
				b.WriteByte(byte('0' + g.rng.IntN(10)))
			} else {
				b.WriteByte(byte('1' + g.rng.IntN(9)))
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
	return b.String()
}

// phone keeps the number's format; a ten-digit (or 1 + ten-digit) number gets
// a real US area code and an exchange not starting with 0 or 1 (Deleger et
// al.). Words ("ext") stay.
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

// email replaces the letters and digits of the local part and of every domain
// label but the top-level one (Deleger et al.: random letters of the same
// lengths, never a real address by design).
func (g *gen) email(s string) string {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return g.shape(s)
	}
	dom := s[at+1:]
	dot := strings.LastIndexByte(dom, '.')
	if dot < 0 {
		return g.shape(s[:at]) + "@" + g.shape(dom)
	}
	return g.shape(s[:at]) + "@" + g.shape(dom[:dot]) + dom[dot:]
}

// url keeps the scheme, a leading "www." and the top-level domain.
func (g *gen) url(s string) string {
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
	tld := ""
	if i := strings.LastIndexByte(host, '.'); i >= 0 {
		host, tld = host[:i], host[i:]
	}
	return prefix + g.shape(host) + tld + g.shape(path)
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

// zip draws a real ZIP code for a five-digit one, plus random +4 digits.
func (g *gen) zip(s string) string {
	t := strings.TrimSpace(s)
	if len(t) >= 5 && isDigits(t[:5]) && (len(t) == 5 || len(t) == 10 && t[5] == '-' && isDigits(t[6:])) {
		places := g.e.res.Places()
		p := places[g.rng.IntN(len(places))]
		z := p.ZIPs[g.rng.IntN(len(p.ZIPs))]
		if len(t) == 10 {
			z += "-" + g.shape(t[6:])
		}
		return strings.Replace(s, t, z, 1)
	}
	return g.shape(s)
}

// country draws another country written in the same form as the original:
// English or Spanish name, or nationality adjective (Stubbs & Uzuner: a
// surrogate for "Cambodian" must be an adjective too).
func (g *gen) country(orig string) string {
	res := g.e.res
	form := 0
	if g.e.lang == "es" {
		form = 1
	}
	if c, ok := res.CountryOf(orig); ok {
		f := fold(orig)
		for i, v := range []string{c.EN, c.ES, c.NationalityEN, c.NationalityES, c.FemES} {
			if fold(v) == f {
				form = i
				break
			}
		}
	}
	cs := res.Countries()
	c := cs[g.rng.IntN(len(cs))]
	v := []string{c.EN, c.ES, c.NationalityEN, c.NationalityES, c.FemES}[form]
	return withCaseOf(v, orig)
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

// organization draws a listed organization, then, once the short list is used
// up, one of faker's company patterns over Census surnames.
func (g *gen) organization(try int) string {
	o := g.e.res.Organizations()
	if try < tries/4 {
		return o[g.rng.IntN(len(o))]
	}
	last := func() string { return g.e.pools.last.draw(g.rng, 0) }
	switch g.rng.IntN(3) {
	case 0:
		return last() + " " + []string{"Group", "Inc", "LLC", "and Sons"}[g.rng.IntN(4)]
	case 1:
		return last() + "-" + last()
	}
	return last() + ", " + last() + " and " + last()
}
