package surrogate

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
)

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
		return g.ownerAddress(orig)
	}
	slices.SortFunc(hits, func(a, b found) int { return a.start - b.start })
	var b strings.Builder
	// lead: s comes right before the first name word ("mj" of "mjtapia"),
	// where two letters are initials.
	rest := func(s string, tab *table, lead bool) {
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
			case n == 1 || n == 2 && lead && n == len(s): // initials
				for _, l := range run {
					b.WriteString(withCase(strings.ToLower(g.letter(tab, g.span, string(l))), caseOf(run)))
				}
			case n >= 3 && prefixOf(run, words) != "": // the start of a name word ("gue" of Guerrero's "tapiague")
				w := asciiWord(prefixOf(run, words))
				b.WriteString(withCase(w[:min(n, len(w))], caseOf(run)))
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
		rest(local[prev:h.start], tab, prev == 0)
		b.WriteString(withCase(asciiWord(h.m.Surrogate), caseOf(local[h.start:h.end])))
		prev = h.end
	}
	rest(local[prev:], g.tab, false)
	return b.String() + "@" + g.domain(orig[at+1:], false), true
}

// ownerReach is how far before an address, in code points, the name of
// the person it belongs to is looked for ("Dr. Juan Pascual Crestanello
// Nese. C/ Alfredo Navarro 3102, Apto. 116 Montevideo 11600, Uruguay.
// jpcresta@adinet.com.uy").
const ownerReach = 160

// ownerBefore returns the corpus-scope name span (a doctor's) nearest
// before span s of d within ownerReach, or nil: the person an address
// written there most likely belongs to, whose name the plan draws before
// the address.
func ownerBefore(d *pipeline.Document, s pipeline.Span, pol *Policy) *pipeline.Span {
	var best *pipeline.Span
	for i, a := range d.Spans {
		if r := pol.Rule(a.Category, a.Type); a.End <= s.Start && s.Start-a.End <= ownerReach && (best == nil || a.End > best.End) &&
			r.Strategy == Name && r.Scope == ScopeCorpus {
			best = &d.Spans[i]
		}
	}
	if best == nil {
		return nil
	}
	return &pipeline.Span{Text: best.Text, Category: best.Category, Type: best.Type}
}

// ownerAddress writes an address whose local part holds no name word
// ("jpcresta" of Juan Pascual Crestanello Nese's) after the new name of the
// person written before it (planOwner): initials of the given names and the
// first surname, or given name and surname joined by the original's
// separator, its digits redrawn; false without such a person or where the
// local part has no run of four letters.
func (g *gen) ownerAddress(orig string) (string, bool) {
	at := strings.LastIndexByte(orig, '@')
	local := orig[:at]
	if g.planOwner == nil || !hasLetterRun(local, 4) {
		return "", false
	}
	sur := strings.Fields(g.name(g.tab, *g.planOwner, ""))
	var words []string
	for _, w := range sur {
		if a := asciiWord(w); len(a) > 1 {
			words = append(words, a)
		}
	}
	if len(words) < 2 {
		return "", false
	}
	surnames := 1
	if len(words) >= 3 {
		surnames = 2
	}
	given, last := words[:len(words)-surnames], words[len(words)-surnames]
	var b strings.Builder
	if sep := strings.IndexAny(local, "._-"); sep > 0 {
		b.WriteString(given[0] + local[sep:sep+1] + last)
	} else {
		for _, w := range given {
			b.WriteByte(w[0])
		}
		b.WriteString(last)
	}
	if d := digitsOf(local); d != "" {
		b.WriteString(g.shape(d))
	}
	return withCase(b.String(), caseOf(local)) + "@" + g.domain(orig[at+1:], false), true
}

// hasLetterRun reports whether s holds n ASCII letters in a row.
func hasLetterRun(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			run++
			if run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// prefixOf returns the surrogate of the name word of words that run starts
// ("gue" for Guerrero), "" if none does.
func prefixOf(run string, words []Mapping) string {
	run = strings.ToLower(run)
	for _, m := range words {
		if w := asciiWord(m.Original); len(w) > len(run) && strings.HasPrefix(w, run) {
			return m.Surrogate
		}
	}
	return ""
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
	labels := homeDomain(strings.Split(orig, "."), g.e.lang)
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

// homeTLD is the country-code domain of each language pack's country.
var homeTLD = map[string]string{"es": "es"}

// homeDomain gives a domain under another country's code ("adinet.com.uy")
// the code of the pack's country, whose places the surrogates name: a
// Montevideo address becomes a Spanish town's, and its ".com.uy" must
// follow ("adinet.es").
func homeDomain(labels []string, lang string) []string {
	home, ok := homeTLD[lang]
	n := len(labels)
	if !ok || n < 2 {
		return labels
	}
	last := strings.ToLower(labels[n-1])
	if len(last) != 2 || last == home || institutionTLD[last] || genericLabels[last] {
		return labels
	}
	k := n - 1
	for k > 1 && genericLabels[strings.ToLower(labels[k-1])] {
		k--
	}
	return append(labels[:k:k], home)
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
