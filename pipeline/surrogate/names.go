package surrogate

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
)

// A name is split into words, initials and literals (spaces, punctuation,
// titles, suffixes, a possessive "'s"), and each word is replaced on its own
// through the scope's mappings, so that "Angie Ferrerro", "A. Ferrerro",
// "FERRERRO, ANGIE" and "Ferrerro's" become "Grace Dollard", "G. Dollard",
// "DOLLARD, GRACE" and "Dollard's" (Stubbs & Uzuner 5.2). As Stubbs & Uzuner
// do, letters are first mapped to letters in each scope and a word's surrogate
// starts with the letter its initial maps to, which keeps initials coherent.

type nameRole uint8

const (
	roleLiteral nameRole = iota
	roleFirst
	roleLast
	roleInitial
)

type nameWord struct {
	text   string
	role   nameRole
	abbrev string // the first name an abbreviation stands for ("María" for "M.a"), an initial's role
}

var (
	titles   = setOf("dr", "dra", "mr", "mrs", "ms", "miss", "mx", "prof", "sr", "sra", "srta", "don", "dona", "dña", "mme", "mlle", "herr", "frau", "sir", "dame", "nurse")
	suffixes = setOf("jr", "sr", "ii", "iii", "iv", "md", "phd", "rn", "np", "dds", "dmd", "do", "pa", "esq")
	// particles join the words of a name; they are no name themselves.
	particles = setOf("de", "del", "la", "las", "los", "y", "i", "da", "das", "do", "dos", "van", "von", "der", "den", "du")
	// Spanish titles that are English first names: "Don Rodriquez" is Mr.
	// Rodriquez in a Spanish note and Don Rodriquez in an English one.
	spanishTitles = setOf("don", "dona")
)

// IsTitle says whether word is a title or form of address in any language
// the packs know (Mr, Dra, Sra): a tagger that takes one for a name's value
// is told by it.
func IsTitle(word string) bool { return titles[fold(word)] }

func isTitle(folded, lang string) bool {
	return titles[folded] && (lang == "es" || !spanishTitles[folded])
}

func setOf(words ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}

// splitName parses a name into words with their roles (roles of words are
// settled by assignRoles); lang tells titles from names.
func splitName(s, lang string) []nameWord {
	var out []nameWord
	rs := s
	for i := 0; i < len(rs); {
		r, size := utf8.DecodeRuneInString(rs[i:])
		if !unicode.IsLetter(r) {
			j := i + size
			for j < len(rs) {
				r2, sz := utf8.DecodeRuneInString(rs[j:])
				if unicode.IsLetter(r2) {
					break
				}
				j += sz
			}
			out = append(out, nameWord{text: rs[i:j], role: roleLiteral})
			i = j
			continue
		}
		if n, full := abbrevAt(rs[i:]); n > 0 {
			out = append(out, nameWord{text: rs[i : i+n], role: roleInitial, abbrev: full})
			i += n
			continue
		}
		j := i
		for j < len(rs) {
			r2, sz := utf8.DecodeRuneInString(rs[j:])
			if unicode.IsLetter(r2) || unicode.IsMark(r2) {
				j += sz
				continue
			}
			// O'Brien: an apostrophe between letters, unless it starts a final "'s".
			if (r2 == '\'' || r2 == '’') && j+sz < len(rs) {
				r3, _ := utf8.DecodeRuneInString(rs[j+sz:])
				rest := rs[j+sz:]
				possessive := (rest == "s" || strings.HasPrefix(rest, "s ") || strings.HasPrefix(rest, "s,"))
				if unicode.IsLetter(r3) && !possessive {
					j += sz
					continue
				}
			}
			break
		}
		w := rs[i:j]
		role := roleFirst
		f := fold(w)
		switch {
		case utf8.RuneCountInString(w) == 1:
			role = roleInitial
		case isTitle(f, lang) && (len(out) == 0 || j < len(rs) && rs[j] == '.'):
			role = roleLiteral
		case suffixes[f] && len(out) > 0:
			role = roleLiteral
		case particles[f] && strings.ContainsAny(rs, " ") && (len(out) == 0 || strings.ToLower(w) == w || afterNameWord(out)) &&
			nameWordFollows(rs[j:]):
			// "De Miguel Rivera", "Ramón y Cajal", "van der Berg",
			// "Fernández De la Puebla": kept as written. Not at the end of
			// a name or before its comma: "Ellen Du", "Du, Ellen" (a
			// surname, which kept would leak).
			role = roleLiteral
		}
		// A possessive "s" after an apostrophe is not a word of the name.
		if len(out) > 0 && (w == "s") && strings.HasSuffix(out[len(out)-1].text, "'") || len(out) > 0 && w == "s" && strings.HasSuffix(out[len(out)-1].text, "’") {
			role = roleLiteral
		}
		out = append(out, nameWord{text: w, role: role})
		i = j
	}
	return out
}

// afterNameWord reports whether the words so far end with a word of the name
// (not a title, punctuation or initial), only spaces after it.
func afterNameWord(out []nameWord) bool {
	for i := len(out) - 1; i >= 0; i-- {
		if strings.TrimSpace(out[i].text) != "" {
			return out[i].role == roleFirst
		}
	}
	return false
}

// nameWordFollows reports whether rest, the text after a word, holds a word
// of the name before any comma: a word of two letters or more that is no
// particle or suffix.
func nameWordFollows(rest string) bool {
	if i := strings.IndexByte(rest, ','); i >= 0 {
		rest = rest[:i]
	}
	for _, w := range strings.FieldsFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsMark(r) && r != '\'' && r != '’' }) {
		if f := fold(w); utf8.RuneCountInString(w) > 1 && !particles[f] && !suffixes[f] {
			return true
		}
	}
	return false
}

// assignRoles decides which words are first and which last names: every
// word after a label that says so ("Apellidos: Higueras Patiño"); before a
// comma, last names ("Smith, Brian K."); otherwise the final word, and any
// word the lists know only as a surname ("Francisco Javier Torres Gómez"),
// or, in Spanish, that follows the first and is not surely a first name:
// Spanish names end with two surnames ("Jorge Subirá Ríos", "Estefanía
// Romero Selas"; not "Juan Ramón Torrecilla García"). A
// word alone is a first name when the lists know it as one and it follows no
// title ("Dr. Thomas").
func assignRoles(ws []nameWord, res nameLists, titled, surnames bool, lang string) {
	var idx []int
	comma := -1
	for i, w := range ws {
		switch w.role {
		case roleFirst:
			idx = append(idx, i)
		case roleLiteral:
			if strings.Contains(w.text, ",") && comma < 0 && len(idx) > 0 {
				comma = len(idx)
			}
		}
	}
	for k, i := range idx {
		w := ws[i].text
		switch {
		case surnames:
			ws[i].role = roleLast
		case comma >= 0:
			if k < comma {
				ws[i].role = roleLast
			}
		case len(idx) == 1:
			if titled || !res.isFirstName(w) {
				ws[i].role = roleLast
			}
		case k == len(idx)-1:
			ws[i].role = roleLast
		case res.isSurname(w) && !res.isFirstName(w): // "Rivera Bueno": two surnames
			ws[i].role = roleLast
		case lang == "es" && k > 0 && !res.surelyFirstName(w):
			ws[i].role = roleLast
		}
	}
}

// surnameLabels are the words of a label after which a name is surnames only.
var surnameLabels = setOf("apellidos", "apellido", "surname", "surnames", "last name", "family name")

// labelsSurnames reports whether the text before a name ends with a label
// of surnames ("Apellidos: ", "Last name: ").
func labelsSurnames(before string) bool {
	b := strings.TrimRight(before, " \t:")
	for label := range surnameLabels {
		if len(b) >= len(label) && fold(b[len(b)-len(label):]) == label &&
			(len(b) == len(label) || !unicode.IsLetter(rune(b[len(b)-len(label)-1]))) {
			return true
		}
	}
	return false
}

// name replaces a name span word by word; its first names take the sex
// its context says (contextSex).
func (g *gen) name(tab *table, s pipeline.Span, before string) string {
	ws := splitName(s.Text, g.e.lang)
	b := strings.TrimRight(before, " ")
	titled := false
	if k := strings.LastIndexAny(b, " \n\t("); true {
		titled = isTitle(fold(strings.TrimSuffix(b[k+1:], ".")), g.e.lang)
	}
	for _, w := range ws {
		if w.role == roleLiteral && isTitle(fold(w.text), g.e.lang) {
			titled = true
		}
	}
	assignRoles(ws, g.e, titled, labelsSurnames(before), g.e.lang)
	ctx := g.contextSex(ws, s, before)
	var out strings.Builder
	for _, w := range ws {
		switch {
		case w.role == roleLiteral:
			out.WriteString(w.text)
		case w.abbrev != "":
			// The abbreviation of a name a woman in fourteen bears (María)
			// or a man in thirty (Francisco) stays as written: the name's
			// pattern ("A.A AAA AAA AAA") is kept, its words are drawn.
			out.WriteString(w.text)
		case w.role == roleInitial:
			out.WriteString(withCase(g.letter(tab, s, w.text), caseOf(w.text)))
		default:
			out.WriteString(withCase(g.nameWord(tab, s, w, ctx), caseOf(w.text)))
		}
	}
	return out.String()
}

// letter maps a letter through the scope's letter map, drawing a new letter
// (different from it and, while any is left, from the letters already used)
// as often as the pack's names start with it: a uniform draw sent the
// corpus's G names (García, González) to Y and made them Yebenes and Yáñez.
func (g *gen) letter(tab *table, s pipeline.Span, l string) string {
	up := strings.ToUpper(fold(l))
	if m, ok := tab.get("INITIAL", up); ok {
		return m.Surrogate
	}
	var c string
	for i := 0; i < tries; i++ {
		c = string(rune('A' + g.e.pools.initials.draw(g.rng)))
		if c != up && (i > tries/2 || !tab.isTaken("INITIAL", c)) {
			break
		}
	}
	tab.add(Mapping{Category: "NAME", Type: "INITIAL", Original: up, Surrogate: c, Strategy: "letter-map"})
	return c
}

// nameLists tells first names and surnames apart.
type nameLists interface {
	isFirstName(w string) bool
	isSurname(w string) bool
	surelyFirstName(w string) bool
}

// The pack of the corpus's language knows its names; the English lists
// (Census and SSA) know many more, of every origin, and settle the roles and
// sexes of words the pack does not list. A word no list knows is not known,
// but its ending may still tell its sex (see guessSex).
func (e *engine) isFirstName(w string) bool { return e.res.IsFirstName(w) || e.en.IsFirstName(w) }
func (e *engine) isSurname(w string) bool   { return e.res.IsSurname(w) || e.en.IsSurname(w) }

// surelyFirstName: a first name of the pack, or one the English lists know
// as a first name and not as a surname (SSA's long tail names babies
// "Romero" and "Martinez").
func (e *engine) surelyFirstName(w string) bool {
	return e.res.IsFirstName(w) || e.en.IsFirstName(w) && !e.isSurname(w)
}
func (e *engine) sexOf(w string) (resources.Sex, bool) { return sexOfName(e.res, e.en, w, e.lang) }

// sexOfName is the sex of a given name by the pack's lists, else the
// English lists, else its ending (guessSex, not known).
func sexOfName(res, en *resources.Set, w, lang string) (resources.Sex, bool) {
	if sex, ok := res.SexOf(w); ok {
		return sex, true
	}
	if sex, ok := en.SexOf(w); ok {
		return sex, true
	}
	return guessSex(w, lang), false
}

// foreignSurname reports whether a surname of INE's list is written as
// names of other languages are and Spanish ones are not: Romanian endings
// ("Popescu", "Lungu", "Munteanu", "Craciun", "Gheorghe"), a consonant
// before a final u other than the Basque "-zu" and the Catalan "-rdu"
// ("Azpiazu", "Verdu"), a final "ng" or "k", a "w", an initial "zh" or
// "x" ("Wang", "Zhang", "Xu", "Malik", "Jallow").
func foreignSurname(w string) bool {
	f := fold(w)
	n := len(f)
	if n < 2 {
		return false
	}
	switch {
	case romanianSurnames[f], strings.HasSuffix(f, "ghe"), strings.HasSuffix(f, "ciun"),
		strings.HasSuffix(f, "ng"), strings.HasSuffix(f, "k"), strings.ContainsRune(f, 'w'),
		strings.HasPrefix(f, "zh"), strings.HasPrefix(f, "x"):
		return true
	case f[n-1] == 'u':
		c := f[n-2]
		return strings.IndexByte("bcdfgklmnpstv", c) >= 0 && !strings.HasSuffix(f, "rdu")
	}
	return false
}

// romanianSurnames are Romanian surnames of INE's list that no ending tells.
var romanianSurnames = setOf("mihai", "mihaila", "iordache", "enache", "costache", "mihalache", "dumitrache", "dumitrescu", "stoica")

// guessSex tells the sex of a given name no list knows by its ending, in a
// language whose names mark it: Spanish names in -a and -ión are women's
// ("Begoña", "Inmaculada", "Ascensión"), those in -o men's ("Saturnino").
// Other names, and names in other languages, are Either.
func guessSex(w, lang string) resources.Sex {
	if lang != "es" {
		return resources.Either
	}
	f := fold(w)
	switch {
	case strings.HasSuffix(f, "a"), strings.HasSuffix(f, "ion"):
		return resources.Female
	case strings.HasSuffix(f, "o"):
		return resources.Male
	}
	return resources.Either
}

// nameWord replaces one word of a name by a listed name of the pack of the
// same role, sex and mapped initial, different from every original name
// word of the corpus. A word no list knows gets a listed name too: a made-up
// word would be a surrogate no reader takes for a name (and no tagger either).
//
// A first name takes the sex its context says where its own does not
// settle it (sexContext.sexFor).
func (g *gen) nameWord(tab *table, s pipeline.Span, w nameWord, ctx sexContext) string {
	sex, known := g.e.sexOf(w.text)
	key := w.text
	if w.role == roleFirst {
		sex, key = ctx.sexFor(w.text, sex, known)
	}
	if m, ok := tab.get(s.Type, key); ok {
		return m.Surrogate
	}
	first := firstLetter(w.text)
	target := first
	if first != 0 {
		target = g.letter(tab, s, string(first))[0]
	}
	pool, strategy := g.e.pools.first[sex], "name-first"
	if w.role == roleLast {
		pool, strategy = g.e.pools.last, "name-last"
		known = g.e.isSurname(w.text) || known
	}
	if !known {
		strategy = "name-unlisted"
	}
	// Constraints are loosened in steps when the pack runs short (a small
	// pack meets a corpus whose own names it lists, or a corpus-scope type
	// with more distinct names than the pack has). In English the pack is
	// the Census lists, and the last step lets a surrogate serve two
	// originals of its scope. In another language the pack's names come
	// first however loose the constraints: a name of the pack that is an
	// original name of the corpus found in none of the records it goes to
	// ("Laura" for one patient's "Pilar" where another patient is a Laura),
	// then one that serves two originals of its scope, as two doctors are
	// both Luis; the English lists come only when the pack has no name left
	// that the records it goes to do not hold.
	orig := fold(w.text)
	// A Spanish surname is replaced by a Spanish one: INE's list holds the
	// surnames of Spain's residents ("Mihai", "Lungu", "Wang"), which stood
	// out beside a Spanish first name (issue 62).
	nativeSurname := w.role == roleLast && g.e.lang == "es" && g.e.res.IsSurname(w.text) && !foreignSurname(w.text)
	fits := func(c string, st nameStep) bool {
		f := fold(c)
		// No surrogate surname is any original surname of the corpus, and no
		// surrogate word a name word of the records it goes to (Deleger et al.).
		// No first name a surname ("Nombre: Delafuente").
		return f != orig && (st.corpusNames || !(w.role == roleLast && g.e.names[f] || g.e.orig.hasToken(f))) &&
			!g.excludedWord(f) && (st.shared || !tab.isTaken(s.Type, c)) && (w.role == roleLast || g.e.surelyFirstName(c)) &&
			!(nativeSurname && foreignSurname(c))
	}
	own, english := pool, g.e.enPools.first[sex]
	if w.role == roleLast {
		english = g.e.enPools.last
	}
	// Surnames by frequency: an original name of the corpus outside these
	// records may serve from the first step.
	freq := g.e.r.Policy.Surnames != SurnamesApart
	steps := []nameStep{{pool: own, letter: true, corpusNames: freq}, {pool: english}, {pool: english, shared: true}}
	if g.e.res != g.e.en {
		steps = []nameStep{{pool: own, letter: true, corpusNames: freq}, {pool: own, corpusNames: true},
			{pool: own, corpusNames: true, shared: true}, {pool: english}, {pool: english, corpusNames: true, shared: true}}
	}
	// A listed original is replaced near its frequency first (drawNear).
	origFreq, near := pool.freq[orig]
	var c string
	for _, st := range steps {
		n := tries
		if st.letter {
			n = 2 * tries
		}
		for i := 0; i < n; i++ {
			letter := target
			if !st.letter || i >= tries { // the letter's names are exhausted: any letter
				letter = 0
			}
			if near && st.pool == pool && i < tries {
				if c, ok := st.pool.drawNear(g.rng, letter, origFreq); ok && fits(c, st) {
					tab.add(Mapping{Category: s.Category, Type: s.Type, Original: key, Surrogate: c, Strategy: strategy})
					return c
				}
			}
			if c = st.pool.draw(g.rng, letter); fits(c, st) {
				tab.add(Mapping{Category: s.Category, Type: s.Type, Original: key, Surrogate: c, Strategy: strategy})
				return c
			}
		}
	}
	// The draws go by frequency, and a large corpus may hold every frequent
	// name of a pool (the 378 English names given to both sexes, say): every
	// name of a pool, from one drawn, as the loosest steps allow.
	if n, ok := g.everyName(steps, strategy, w.text, fits); ok {
		c = n
	} else {
		g.flag(c, lastCandidate, false)
	}
	tab.add(Mapping{Category: s.Category, Type: s.Type, Original: key, Surrogate: c, Strategy: strategy})
	return c
}

// nameStep is one step of nameWord's search: the pool it draws from, whether
// it draws by the mapped initial first, and the constraints it lifts.
type nameStep struct {
	pool        *namePool
	letter      bool // draw by the mapped initial before any letter
	corpusNames bool // an original name of the corpus outside these records may serve
	shared      bool // a surrogate may serve two originals of its scope
}

// everyName returns the first name of a step's pool that fits, trying every
// name of each step that may share a surrogate, from one drawn.
func (g *gen) everyName(steps []nameStep, strategy, orig string, fits func(string, nameStep) bool) (string, bool) {
	defer g.drawApart(strategy, orig)()
	for _, st := range steps {
		if !st.shared {
			continue
		}
		name := func(i int) string { return st.pool.all[i].Text }
		if c, ok := g.firstFit(len(st.pool.all), name, func(c string) bool { return fits(c, st) }); ok {
			return c, true
		}
	}
	return "", false
}

// username keeps a username's shape in real words: letters that are
// initials (three at most, "jsm3") go through the scope's letter map, keeping
// initials consistent (Stubbs & Uzuner); a longer run of letters ("jsmith")
// becomes a surname of the pack, its first letter still mapped ("gdollard"
// is "g" and "dollard"); digits are drawn.
func (g *gen) username(tab *table, s pipeline.Span) string {
	if m, ok := tab.get(s.Type, s.Text); ok {
		return transferCase(s.Text, m.Surrogate)
	}
	fits := func(c string) bool {
		return fold(c) != fold(s.Text) && !tab.isTaken(s.Type, c) && !g.e.orig.within(c) && !g.excluded(c)
	}
	var c string
	for i := 0; i < tries; i++ {
		if c = g.usernameLike(tab, s, s.Text); fits(c) {
			tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: c, Strategy: Username})
			return c
		}
	}
	if w, ok := g.widerUsername(tab, s, fits); ok {
		c = w
	} else {
		g.flag(c, lastCandidate, false)
	}
	tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: c, Strategy: Username})
	return c
}

// widerUsername draws usernames with a digit more at a time ("jsmith" ->
// "gdollard7", "ab3" -> "gk73"): the letters go through the scope's letter
// map, and a corpus that holds every short username leaves none of a shape
// free.
func (g *gen) widerUsername(tab *table, s pipeline.Span, fits func(string) bool) (string, bool) {
	defer g.drawApart(Username, s.Text)()
	for more := 1; more <= 6; more++ {
		w := moreDigits(s.Text, more)
		if w == s.Text {
			w += strings.Repeat("1", more)
		}
		for i := 0; i < tries; i++ {
			if c := g.usernameLike(tab, s, w); fits(c) {
				return c, true
			}
		}
	}
	return "", false
}

// usernameLike draws a username shaped like text for the span s.
func (g *gen) usernameLike(tab *table, s pipeline.Span, text string) string {
	var b strings.Builder
	for _, t := range codeTokens(text) {
		switch {
		case t.word && utf8.RuneCountInString(t.text) > 3:
			ini := g.letter(tab, s, t.text[:1])
			w := asciiWord(g.e.pools.last.draw(g.rng, firstLetter(ini)))
			b.WriteString(withCase(w, caseOf(t.text)))
		case t.word || t.code:
			for _, r := range t.text {
				switch {
				case r < utf8.RuneSelf && unicode.IsLetter(r):
					b.WriteString(withCase(g.letter(tab, s, string(r)), caseOf(string(r))))
				case r >= '0' && r <= '9':
					b.WriteByte(byte('0' + g.rng.IntN(10)))
				default:
					b.WriteRune(r)
				}
			}
		default:
			b.WriteString(t.text)
		}
	}
	return b.String()
}

// namePool draws names by frequency, optionally only those starting with a
// letter, or near a frequency.
type namePool struct {
	all      []resources.Name
	w        weighted
	byLetter [26]weighted
	// byFreq orders all by ascending frequency; freq finds a listed name's
	// (folded).
	byFreq []int
	freq   map[string]float64
}

func newNamePool(names []resources.Name) *namePool {
	p := &namePool{freq: map[string]float64{}}
	for _, n := range names {
		if !isLetters(n.Text) || len(n.Text) < 2 {
			continue
		}
		p.all = append(p.all, n)
	}
	for i, n := range p.all {
		p.w.add(i, n.Freq+1e-4)
		if l := firstLetter(n.Text); l != 0 {
			p.byLetter[l-'A'].add(i, n.Freq+1e-4)
		}
		p.byFreq = append(p.byFreq, i)
		if f := fold(n.Text); n.Freq > p.freq[f] {
			p.freq[f] = n.Freq
		}
	}
	slices.SortStableFunc(p.byFreq, func(a, b int) int { return cmp.Compare(p.all[a].Freq, p.all[b].Freq) })
	return p
}

// nearBand is how far, as a factor either way, a name drawn near an
// original's frequency may be from it.
const nearBand = 3

// drawNear draws a name of about frequency f (within nearBand either way),
// with the given initial when one is asked for, so that a corpus's common
// names become common names and its rare ones rare ones: drawn by
// frequency alone, the one surrogate of a corpus's commonest first name
// ("José", 72 doctors of MEDDOCAN) could be any name, and then appeared 72
// times. ok is false when the band holds no such name (a few draws tell).
func (p *namePool) drawNear(rng *rand.Rand, letter byte, f float64) (string, bool) {
	lo := sort.Search(len(p.byFreq), func(i int) bool { return p.all[p.byFreq[i]].Freq >= f/nearBand })
	hi := sort.Search(len(p.byFreq), func(i int) bool { return p.all[p.byFreq[i]].Freq > f*nearBand })
	if lo >= hi {
		return "", false
	}
	for range 8 {
		n := p.all[p.byFreq[lo+rng.IntN(hi-lo)]].Text
		if letter < 'A' || letter > 'Z' || firstLetter(n) == letter {
			return n, true
		}
	}
	return "", false
}

type randSource interface{ Float64() float64 }

func (p *namePool) draw(rng randSource, letter byte) string {
	if letter >= 'A' && letter <= 'Z' {
		if w := &p.byLetter[letter-'A']; len(w.idx) > 0 {
			return p.all[w.draw(rng)].Text
		}
	}
	return p.all[p.w.draw(rng)].Text
}

type pools struct {
	first [3]*namePool
	last  *namePool
	// initials weighs each letter A-Z by the frequency of the pack's names
	// it starts (the letter map draws by it).
	initials weighted
	// places draws the pack's places by population, all of them (key 0) or
	// those whose name has as many words (see wordCount).
	places map[int]*weighted
	// hospitals and organizations index the lists by the shape of a name
	// (see shapeKeys).
	hospitals, organizations map[string][]int
	// words are single-word place and surname forms for e-mail addresses
	// and URLs: lower case, letters a-z only.
	domainWords []string
}

// weighted draws indices in proportion to their weights.
type weighted struct {
	idx []int
	cum []float64
}

func (w *weighted) add(i int, weight float64) {
	total := weight
	if len(w.cum) > 0 {
		total += w.cum[len(w.cum)-1]
	}
	w.idx, w.cum = append(w.idx, i), append(w.cum, total)
}

// total is the sum of the weights.
func (w *weighted) total() float64 {
	if len(w.cum) == 0 {
		return 0
	}
	return w.cum[len(w.cum)-1]
}

func (w *weighted) draw(rng randSource) int {
	i := sort.SearchFloat64s(w.cum, rng.Float64()*w.cum[len(w.cum)-1])
	return w.idx[min(i, len(w.idx)-1)]
}

// wordCount is the number of words of a name, 6 for six or more.
func wordCount(s string) int { return min(len(strings.Fields(s)), 6) }

// shapeKeys are the keys a name is indexed under and looked up by, most
// alike first: its first two words (folded) and its number of words
// ("hospital universitario\x004"), its first word and number of words, its
// first word, its number of words. A surrogate drawn by the first key that
// holds enough names keeps what a tagger learns from the original's shape:
// how it starts and how long it is.
func shapeKeys(name string) [4]string {
	w := strings.Fields(fold(name))
	first, two := "", ""
	if len(w) > 0 {
		first, two = w[0], w[0] // a name of one word has its first key twice
	}
	if len(w) > 1 {
		two = w[0] + " " + w[1]
	}
	n := strconv.Itoa(wordCount(name))
	return [4]string{two + "\x00" + n, first + "\x00" + n, first + "\x00", "\x00" + n}
}

func indexShapes(names []string) map[string][]int {
	m := map[string][]int{}
	for i, n := range names {
		keys := shapeKeys(n)
		for j, k := range keys {
			if j == 0 || k != keys[j-1] {
				m[k] = append(m[k], i)
			}
		}
	}
	return m
}

// minShapePool is how many names a shape needs to be drawn from: fewer
// would make one surrogate stand for many originals.
const minShapePool = 20

// drawLike draws the index of a name shaped like orig from an index of
// indexShapes of a list of n names, else any of them. The original's first
// words are kept only when they name a kind: a word that starts at least
// 1% of the list ("Hospital", "Universidad", "St"), not a name ("West
// Hospital" must not become "West Valley Medical Center").
func drawLike(rng *rand.Rand, index map[string][]int, n int, orig string) int {
	keys := shapeKeys(orig)
	kind := 100*len(index[keys[2]]) >= n
	for i, k := range keys {
		if idx := index[k]; len(idx) >= minShapePool && (kind || i == len(keys)-1) {
			return idx[rng.IntN(len(idx))]
		}
	}
	return rng.IntN(n)
}

var poolCache sync.Map // *resources.Set -> *pools

func poolsFor(res *resources.Set) *pools {
	if p, ok := poolCache.Load(res); ok {
		return p.(*pools)
	}
	p := &pools{last: newNamePool(res.SurrogateSurnames()), places: map[int]*weighted{}}
	hospitals := make([]string, len(res.Hospitals()))
	for i, h := range res.Hospitals() {
		hospitals[i] = h.Name
	}
	p.hospitals, p.organizations = indexShapes(hospitals), indexShapes(res.Organizations())
	for i, pl := range res.Places() {
		if f := fold(pl.City); isASCIILetters(f) {
			p.domainWords = append(p.domainWords, f)
		}
		w := pl.Population
		if w <= 0 { // a list without populations: every place alike
			w = 1
		}
		for _, k := range []int{0, wordCount(pl.City)} {
			if p.places[k] == nil {
				p.places[k] = &weighted{}
			}
			p.places[k].add(i, w)
		}
	}
	for sex := resources.Either; sex <= resources.Male; sex++ {
		p.first[sex] = newNamePool(res.FirstNames(sex))
	}
	for l := range 26 {
		p.initials.add(l, p.first[resources.Either].byLetter[l].total()+p.last.byLetter[l].total()+1e-3)
	}
	poolCache.Store(res, p)
	return p
}

func firstLetter(w string) byte {
	f := strings.ToUpper(fold(w))
	if f != "" && f[0] >= 'A' && f[0] <= 'Z' {
		return f[0]
	}
	return 0
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return s != ""
}

// namesIn finds the names inside a value the policy keeps (OTHER: "madre
// Teresa Rodríguez", "su esposo, Diego Maldonado", "padres Ana y Juan"):
// runs of capitalized words, as byte ranges of text, of which at least one
// is a first name or surname the lists know. A run's leading words that only
// start a sentence there ("Hijo de ...") or name a relation or a person
// ("Madre Teresa", "Niña") are left out, as are acronyms and eponyms
// ("síndrome de Down"). Kept as written, such names would reach the output:
// relatives are identifiers too (HIPAA).
func (e *engine) namesIn(text string) [][2]int {
	type word struct {
		s, e      int
		sentStart bool
	}
	var (
		out  [][2]int
		run  []word
		prev []string // the two words before the current one, lower-cased
	)
	known := func(w string) bool { return e.isFirstName(w) || e.isSurname(w) }
	flush := func() {
		for len(run) > 0 {
			w := text[run[0].s:run[0].e]
			if !notNames[strings.ToLower(w)] && (!run[0].sentStart || known(w)) {
				break
			}
			run = run[1:]
		}
		for _, w := range run {
			if known(text[w.s:w.e]) {
				out = append(out, [2]int{run[0].s, run[len(run)-1].e})
				break
			}
		}
		run = run[:0]
	}
	sentStart := true
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsLetter(r) {
			switch {
			case r == '.' || r == ':' || r == ';' || r == '\n' || r == '(' || r == '"':
				flush()
				sentStart = true
			case r == ' ' || r == '-' || r == '\'' || r == '’':
			default: // a comma, a digit: the end of a run
				flush()
			}
			i += size
			continue
		}
		j := i + size
		for j < len(text) {
			r2, sz := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsLetter(r2) && !unicode.IsMark(r2) {
				break
			}
			j += sz
		}
		w := text[i:j]
		lw := strings.ToLower(w)
		n := utf8.RuneCountInString(w)
		eponym := len(run) == 0 && len(prev) == 2 && prev[1] == "de" && eponymHeads[prev[0]]
		switch {
		case unicode.IsUpper(r) && n > 1 && !(n <= 4 && w == strings.ToUpper(w)) && !isTitle(fold(w), e.lang) && !eponym:
			run = append(run, word{i, j, sentStart})
		case particles[lw] && !conjunctions[lw] && len(run) > 0 && j < len(text):
			// "de la Fuente": a particle inside a name joins it when a
			// capitalized word follows it; "y" joins two people.
		default:
			flush()
		}
		if !particles[lw] || len(run) == 0 {
			sentStart = false
		}
		prev = append(prev, lw)
		if len(prev) > 2 {
			prev = prev[1:]
		}
		i = j
	}
	flush()
	return out
}

// notNames are the words that name a relative, a person or their sex rather
// than the person: capitalized at a sentence's start or as a title ("Madre
// Teresa", "Niña"), they are no name. Lower-cased, accents kept: "Nina" is
// a name, "Niña" is not.
var notNames = setOf(strings.Fields(`madre padre hermano hermana hermanos hermanas hijo hija hijos hijas
	abuelo abuela abuelos abuelas tío tía tíos tías tio tia primo prima primos primas sobrino sobrina nieto nieta
	esposo esposa marido mujer pareja novio novia cuñado cuñada suegro suegra yerno nuera padres
	progenitores familiares familia gemelo gemela amigo amiga vecino vecina niño niña niños niñas varón varon
	hombre paciente bebé bebe lactante chico chica señor señora
	mother father brother sister son daughter wife husband partner uncle aunt cousin grandmother
	grandfather niece nephew grandson granddaughter mom dad parents family friend neighbor patient
	boy girl baby man woman male female`)...)

// conjunctions join two people, not the words of one name.
var conjunctions = setOf("y", "e", "i", "and")

// eponymHeads are the words before "de" that make the capitalized word after
// it an eponym ("síndrome de Down"), not a person of the record.
var eponymHeads = setOf("síndrome", "sindrome", "enfermedad", "signo", "test", "escala", "maniobra", "método",
	"metodo", "ley", "criterios", "clasificación", "clasificacion", "índice", "indice", "tríada", "triada")
