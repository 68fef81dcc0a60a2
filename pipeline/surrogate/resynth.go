// Package surrogate replaces the PHI of a corpus with realistic surrogates
// (resynthesis) and checks the result. A Policy (policy.json by default, from
// Stubbs & Uzuner 2015 section 5.2, Deleger et al. 2014 section 2.2 and
// Yeniterzi et al. 2010) chooses a strategy per PHI type; a Resynthesizer
// applies it to documents grouped by patient, keeping every patient's names,
// date shift and ages consistent across their records, reusing the mappings
// of earlier runs, and re-aligning spans to the new text; Check verifies the
// output (alignment, leaks, consistency, date intervals, name patterns).
//
// The package is pure: it works on pipeline.Documents and plain values, and a
// seed makes a run byte-for-byte reproducible.
package surrogate

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"iter"
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

// Resynthesizer replaces the PHI of documents. Its fields are read-only
// during Run.
type Resynthesizer struct {
	Policy *Policy
	// Resources are the lists surrogates are drawn from; nil chooses the
	// embedded pack of the corpus's language (the policy's, or detected).
	Resources *resources.Set
	Seed      uint64
	// Context holds original documents of the corpus that this run does not
	// rewrite (earlier notes, when resynthesizing new notes of known
	// patients): their PHI still constrains the surrogates, which must differ
	// from every original value in the corpus.
	Context []pipeline.Document
}

// New returns a Resynthesizer with the default policy when nil; nil
// resources choose the pack of the corpus's language.
func New(policy *Policy, res *resources.Set, seed uint64) *Resynthesizer {
	if policy == nil {
		policy = DefaultPolicy()
	}
	return &Resynthesizer{Policy: policy, Resources: res, Seed: seed}
}

// ReviewItem is a replacement a person should look at: an ambiguous date read
// one way, a value no strategy could parse, a constraint that could not be met.
type ReviewItem struct {
	Doc       string `json:"doc"`
	Start     int    `json:"start"` // code points in the original document
	End       int    `json:"end"`
	Type      string `json:"type"`
	Original  string `json:"original"`
	Surrogate string `json:"surrogate"`
	Reason    string `json:"reason"`
	Kept      bool   `json:"kept"` // the original was left in place (it is listed by Check, not counted as a leak)
}

// Result is what a run returns: the new documents (in input order, spans in
// their input order, re-aligned), every mapping it used (New marks those the
// job must store), the patients' shifts and the items for review.
type Result struct {
	Docs     []pipeline.Document
	Mappings []Mapping
	Shifts   []PatientShift
	Review   []ReviewItem
	// Propagated are the unannotated occurrences of annotated values that
	// the run replaced (see propagate.go), by document in Docs's order.
	Propagated []Propagation
	Language   string // the language the surrogates were written for
	// Redone are the patients whose earlier notes (from the Resynthesizer's
	// Context) this run rewrote, after their new notes collided with a stored
	// surrogate or date shift; their documents are in Docs, and their
	// mappings and shift, all new, replace the stored ones.
	Redone []string
	// Dropped are stored corpus-scope mappings this run replaced by new ones.
	Dropped []Mapping
	// Labels tells, for each label of the documents, the rule that replaced
	// it and the tag-set mapping that led there.
	Labels []LabelRule
}

// Run resynthesizes docs, all in memory: a Stream over one batch.
// Documents are grouped by their Patient field; store holds the mappings and
// shifts of earlier runs, which are reused.
func (r *Resynthesizer) Run(docs []pipeline.Document, store Store) (*Result, error) {
	s, err := r.Stream(store)
	if err != nil {
		return nil, err
	}
	if err := s.Observe(docs, r.Context); err != nil {
		return nil, err
	}
	res, err := s.Plan(nil)
	if err != nil {
		return nil, err
	}
	batch, err := s.Rewrite(docs, r.Context)
	if err != nil {
		return nil, err
	}
	res.Docs, res.Shifts, res.Labels, res.Propagated = batch.Docs, batch.Shifts, s.Finish().Labels, batch.Propagated
	res.Review = append(res.Review, batch.Review...)
	res.Mappings = slices.AppendSeq(batch.Mappings, s.CorpusMappings())
	sortMappings(res.Mappings)
	return res, nil
}

// checkSpans rejects spans a rewrite cannot place: outside the text or
// overlapping another (a nested span would be replaced twice).
func checkSpans(d *pipeline.Document) error {
	if err := d.Validate(false); err != nil {
		return fmt.Errorf("%w (resolve overlapping or invalid spans before resynthesis)", err)
	}
	return nil
}

type patientGroup struct {
	id   string
	docs []int // indices into docs, in record order
}

func groupByPatient(docs []pipeline.Document) []patientGroup {
	by := map[string][]int{}
	for i, d := range docs {
		by[patientOf(d)] = append(by[patientOf(d)], i)
	}
	out := make([]patientGroup, 0, len(by))
	for id, idx := range by {
		sort.Slice(idx, func(a, b int) bool {
			da, db := docs[idx[a]], docs[idx[b]]
			if da.RecordOrder != db.RecordOrder {
				return da.RecordOrder < db.RecordOrder
			}
			return da.ID < db.ID
		})
		out = append(out, patientGroup{id, idx})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// patientOf is a document's patient; a document without one is its own patient.
func patientOf(d pipeline.Document) string {
	if d.Patient != "" {
		return d.Patient
	}
	return d.ID
}

// engine holds what a run knows about the whole corpus.
type engine struct {
	r       *Resynthesizer
	res     *resources.Set // the pack surrogates are drawn from
	en      *resources.Set // the English lists, which also know many names of other languages
	lang    string
	reading dateReading // how the corpus's dates are read
	pools   *pools
	enPools *pools
	orig    *valueSet            // every replaced original value of the corpus
	wide    *corpusWide          // the values propagated across the corpus (see parts.go)
	perPat  map[string]*valueSet // ... of each patient
	names   map[string]bool      // folded original name words of the corpus
	streets map[string]bool      // folded "name\x00suffix" pairs of original streets
	// countries counts the patients whose records name each listed country
	// (by its English name); countryPool draws by those counts.
	countries   map[string]int
	countryPool corpusPool[resources.Country]
	// providers counts, alike, the public e-mail providers (folded
	// domains) of the patients' addresses; providerPool draws by them.
	providers    map[string]int
	providerPool corpusPool[string]
	// cities counts, alike, the listed cities of bigCity thousand people
	// or more; cityPool draws by them.
	cities   map[string]int
	cityPool corpusPool[resources.Place]
	dates    map[string][]dateRef // date-shuffle pools by pattern
	corpus   *table
	dropped  []Mapping         // stored corpus-scope mappings this run replaced
	err      error             // a site's lists that do not load
	stored   map[string]*table // patient scope -> stored mappings
	shifts   map[string]PatientShift
	review   []ReviewItem
	// noteTypes counts, for each folded note type, the patients whose
	// records use it (see metadata.go).
	noteTypes map[string]int
}

type dateRef struct{ doc, text string }

// patientPrep is what prepare reads from one patient's records.
type patientPrep struct {
	values  *valueSet // replaced originals, and name words as words
	names   []string  // folded name words
	streets []string  // street name and suffix pairs
	// countries are the English names of the listed countries of the
	// patient's values (see countryPool).
	countries []string
	// providers are the public e-mail providers of the patient's
	// addresses (folded domains).
	providers []string
	// cities are the listed big cities of the patient's values (see
	// cityPool).
	cities []string
	dates  []struct {
		pattern string
		ref     dateRef
	}
}

func (e *engine) preparePatient(all []pipeline.Document, idx []int) patientPrep {
	pp := patientPrep{values: newValueSet()}
	pol := e.r.Policy
	for _, i := range idx {
		d := &all[i]
		for _, s := range d.Spans {
			rule := pol.Rule(s.Category, s.Type)
			if rule.kept(s.Text) {
				// The names inside a kept value are replaced as names: their
				// words are the patient's too.
				for _, r := range e.namesIn(s.Text) {
					for _, w := range nameWords(s.Text[r[0]:r[1]], e.lang) {
						pp.names = append(pp.names, w)
						pp.values.addWord(w)
					}
				}
				continue
			}
			// Ages of 90 or less are not identifiers (HIPAA): they constrain nothing.
			if n, _, _, ok := ageYears(s.Text); rule.Strategy == Age && (!ok || n <= 90) {
				continue
			}
			if pp.values.raw[s.Text] && rule.Strategy != DateShuffle {
				continue // seen: its words and pairs are in too
			}
			pp.values.add(s.Text)
			switch rule.Strategy {
			case Name:
				// Each word of a name is a value of the patient's too: no
				// surrogate token may equal one (Deleger et al.).
				for _, w := range nameWords(s.Text, e.lang) {
					pp.names = append(pp.names, w)
					pp.values.addWord(w)
				}
			case Street:
				pp.streets = append(pp.streets, streetPairs(e.res, s.Text)...)
			case CountryS:
				if c, ok := e.res.CountryOf(s.Text); ok {
					pp.countries = append(pp.countries, c.EN)
				}
			case City:
				if p, ok := e.res.PlaceOfCity(s.Text); ok && p.Population >= bigCity {
					pp.cities = append(pp.cities, p.City)
				}
			case Email:
				if at := strings.LastIndexByte(s.Text, '@'); at >= 0 && e.res.IsFreeMailDomain(s.Text[at+1:]) {
					pp.providers = append(pp.providers, resources.Fold(s.Text[at+1:]))
				}
			case DateShuffle:
				if dt, ok := parseDate(s.Text, e.reading); ok {
					pp.dates = append(pp.dates, struct {
						pattern string
						ref     dateRef
					}{dt.pattern(), dateRef{d.ID, s.Text}})
				}
			}
		}
	}
	return pp
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// rngFor derives an independent generator from the seed and a name, so that
// each patient's surrogates depend on the seed and that patient only.
func (e *engine) rngFor(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(e.r.Seed, h.Sum64()))
}

type spanRef struct {
	doc  *pipeline.Document
	span pipeline.Span
	rule Rule
}

// nameWords are the folded words of a name that surrogates replace one by
// one (not its titles, punctuation or initials).
func nameWords(name, lang string) []string {
	var out []string
	for _, w := range splitName(name, lang) {
		if w.role != roleLiteral && w.role != roleInitial {
			out = append(out, fold(w.text))
		}
	}
	return out
}

// patientOnly strategies depend on a patient's shift and ignore a corpus scope.
var patientOnly = map[string]bool{DateShift: true, DateShuffle: true, Age: true}

type patientResult struct {
	idx      []int
	docs     []pipeline.Document
	mappings []Mapping
	shift    PatientShift
	review   []ReviewItem
	// propagated are the unannotated occurrences of the patient's values
	// replaced, by document as docs.
	propagated [][]Propagation
}

func (e *engine) runPatient(docs []pipeline.Document, p patientGroup) patientResult {
	scope := PatientScope(p.id)
	tab := newTable(scope)
	if st := e.stored[scope]; st != nil {
		for m := range st.all() {
			tab.put(m)
		}
	}
	g := e.newGen(tab, e.rngFor(scope), e.perPat[p.id], e.corpus)
	g.patient = p.id
	g.chooseShifts(docs, p)
	g.aliases = g.replacedValues(docs, p)
	g.provinceCity = g.addressPairs(docs, p)
	g.aliasKeys = slices.SortedFunc(mapsKeys(g.aliases), func(a, b string) int { // longest first
		return cmp.Or(cmp.Compare(len(b), len(a)), cmp.Compare(a, b))
	})
	g.misses = g.missValues(docs, p)
	// Every span of the patient's records is replaced before an unannotated
	// occurrence of its value: that value's surrogate is then drawn as the
	// span's context has it (a title, a surname label), and the spans get
	// the surrogates they would without propagation.
	plans := make([]spanPlan, len(p.docs))
	for k, i := range p.docs {
		plans[k] = g.spanSurrogates(&docs[i])
	}
	out := patientResult{idx: p.docs}
	for k, i := range p.docs {
		d, props := g.assemble(&docs[i], plans[k], g.propagate(&docs[i]))
		g.metadata(&d)
		out.docs = append(out.docs, d)
		out.propagated = append(out.propagated, props)
	}
	out.mappings = slices.Collect(tab.used())
	out.shift = g.shift
	out.review = g.review
	return out
}

// replacedValues indexes by folded text the values of a patient's records
// that a span replaces, for the kept spans that repeat one. Values of one
// letter (a sex marker "H", an initial) are left out: they identify no one.
func (g *gen) replacedValues(docs []pipeline.Document, p patientGroup) map[string]pipeline.Span {
	out := map[string]pipeline.Span{}
	pol := g.e.r.Policy
	for _, i := range p.docs {
		for _, s := range docs[i].Spans {
			rule := pol.Rule(s.Category, s.Type)
			st := rule.Strategy
			if rule.kept(s.Text) || st == Age || st == DepartmentS || wordsOnly(st, s.Text) || utf8.RuneCountInString(strings.TrimSpace(s.Text)) < 2 {
				continue
			}
			if _, dup := out[fold(s.Text)]; !dup {
				out[fold(s.Text)] = s
			}
		}
	}
	return out
}

// addressPairs returns, for each folded state or province that the
// patient's records write right after a place ("Elche, Alicante", "Los
// Llanos de Aridane (Tenerife)"), that place's span: the city whose
// surrogate's province replaces it (see provinceOfCity).
func (g *gen) addressPairs(docs []pipeline.Document, p patientGroup) map[string]pipeline.Span {
	var out map[string]pipeline.Span
	pol, res := g.e.r.Policy, g.e.res
	var places []pipeline.Span
	for _, i := range p.docs {
		d := &docs[i]
		places = places[:0]
		for _, s := range d.Spans {
			if st := pol.Rule(s.Category, s.Type).Strategy; st == City || st == StateS {
				places = append(places, s)
			}
		}
		slices.SortFunc(places, func(a, b pipeline.Span) int { return cmp.Compare(a.Start, b.Start) })
		for k := 1; k < len(places); k++ {
			a, b := places[k-1], places[k]
			if b.Start < a.End || b.Start-a.End > maxAddressGap || pol.Rule(a.Category, a.Type).Strategy != City {
				continue
			}
			if _, seen := out[fold(b.Text)]; seen {
				continue
			}
			if _, ok := res.StateOf(b.Text); !ok || !addressGap(codePoints(d.Text, a.End, b.Start)) {
				continue
			}
			if out == nil {
				out = map[string]pipeline.Span{}
			}
			out[fold(b.Text)] = a
		}
	}
	return out
}

// maxAddressGap is the most code points between a city and its province.
const maxAddressGap = 4

// addressGap reports whether the text between two spans is what separates
// a city from its province: spaces, a comma, a full stop ("Barañain.
// Navarra"), a bracket, a slash or a dash.
func addressGap(between string) bool {
	return strings.Trim(between, " ,.(/-\t") == ""
}

// codePoints returns text's code points [start, end).
func codePoints(text string, start, end int) string {
	bs, cp := -1, 0
	for i := range text {
		if cp == start {
			bs = i
		}
		if cp == end {
			return text[bs:i]
		}
		cp++
	}
	if bs < 0 {
		bs = len(text)
	}
	return text[bs:]
}

// keptValue writes a value its policy keeps (OTHER: "hermana María José
// Miguel Reiz", a sex marker) with every value that another span of the
// patient's records replaces, found in it as whole words, replaced the same
// way: kept, it would leak them.
func (g *gen) keptValue(d *pipeline.Document, s pipeline.Span, before string) string {
	if a, ok := g.aliases[fold(s.Text)]; ok {
		as := s
		as.Category, as.Type = a.Category, a.Type
		return g.surrogate(d, as, g.e.r.Policy.Rule(a.Category, a.Type), before)
	}
	if _, country := g.e.res.CountryOf(s.Text); country {
		// A country kept whole (a policy keeping the home country) is no
		// name, though "España" is a surname too.
		return s.Text
	}
	return g.withAliases(d, g.namesReplaced(d, s, before))
}

// namesReplaced replaces the names inside a kept value (engine.namesIn) word
// by word as names of the value's type, consistently across the patient's
// records. A name holding a value another span replaces is left to
// withAliases, which gives it that value's surrogate.
func (g *gen) namesReplaced(d *pipeline.Document, s pipeline.Span, before string) string {
	runs := g.e.namesIn(s.Text)
	if len(runs) == 0 {
		return s.Text
	}
	var b strings.Builder
	prev := 0
	for _, r := range runs {
		ns := s
		ns.Text = s.Text[r[0]:r[1]]
		if g.holdsAlias(ns.Text) {
			continue
		}
		ns.Start += utf8.RuneCountInString(s.Text[:r[0]])
		ns.End = ns.Start + utf8.RuneCountInString(ns.Text)
		g.doc, g.span = d, ns
		b.WriteString(s.Text[prev:r[0]])
		b.WriteString(g.name(g.tab, ns, before+s.Text[:r[0]]))
		prev = r[1]
	}
	b.WriteString(s.Text[prev:])
	return b.String()
}

// holdsAlias reports whether text holds, as whole words, a value that
// another span of the patient's records replaces.
func (g *gen) holdsAlias(text string) bool {
	lower := strings.ToLower(text)
	for _, k := range g.aliasKeys {
		if wordIndex(lower, strings.ToLower(g.aliases[k].Text)) >= 0 {
			return true
		}
	}
	return false
}

// withAliases replaces in text each value that a span of the patient's
// records replaces, found as whole words, by its surrogate: for values kept
// whole, and for the words a code keeps ("Garfunkel 123" under an ID type).
func (g *gen) withAliases(d *pipeline.Document, text string) string {
	if len(g.aliases) == 0 || !g.e.orig.within(text) {
		return text
	}
	out := text
	lower := strings.ToLower(out)
	for _, k := range g.aliasKeys {
		a := g.aliases[k]
		la := strings.ToLower(a.Text)
		i := wordIndex(lower, la)
		if i < 0 || len(lower) != len(out) {
			continue
		}
		as := a
		as.Text = out[i : i+len(la)]
		sur := g.surrogate(d, as, g.e.r.Policy.Rule(a.Category, a.Type), "")
		out = out[:i] + sur + out[i+len(la):]
		lower = strings.ToLower(out)
	}
	return out
}

// wordIndex finds sub in s where it starts and ends at word boundaries.
func wordIndex(s, sub string) int {
	for from := 0; from <= len(s)-len(sub); {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			return -1
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(sub):])
		if (i == 0 || !unicode.IsLetter(before) && !unicode.IsDigit(before)) &&
			(i+len(sub) == len(s) || !unicode.IsLetter(after) && !unicode.IsDigit(after)) {
			return i
		}
		from = i + 1
	}
	return -1
}

// spanPlan is a document's spans, in text order, with their bytes in the
// source and their surrogates.
type spanPlan struct {
	order  []int // indices into the spans
	bs, be []int // by index: the span's bytes
	sur    []string
}

// spanSurrogates draws the surrogate of every span of d, in text order.
// Spans do not overlap, so one pass over the text converts code points to
// bytes.
func (g *gen) spanSurrogates(d *pipeline.Document) spanPlan {
	n := len(d.Spans)
	p := spanPlan{order: make([]int, n), bs: make([]int, n), be: make([]int, n), sur: make([]string, n)}
	for i := range p.order {
		p.order[i] = i
	}
	sort.SliceStable(p.order, func(a, b int) bool { return d.Spans[p.order[a]].Start < d.Spans[p.order[b]].Start })
	cp, at := 0, 0 // the original's cursor: code point cp is at byte at
	byteOf := func(c int) int {
		for ; cp < c && at < len(d.Text); cp++ {
			if d.Text[at] < utf8.RuneSelf {
				at++
			} else {
				_, size := utf8.DecodeRuneInString(d.Text[at:])
				at += size
			}
		}
		return at
	}
	for _, i := range p.order {
		s := d.Spans[i]
		bs := byteOf(s.Start)
		be := byteOf(s.End)
		p.bs[i], p.be[i] = bs, be
		s.Text = d.Text[bs:be]
		before := d.Text[max(0, bs-16):bs]
		if rule := g.e.r.Policy.Rule(s.Category, s.Type); rule.kept(s.Text) {
			p.sur[i] = g.keptValue(d, s, before)
		} else {
			p.sur[i] = g.surrogate(d, s, rule, before)
			if codeStrategy[rule.Strategy] {
				p.sur[i] = g.withAliases(d, p.sur[i])
			}
		}
	}
	return p
}

// surrogateSpanID is the id of a surrogate note's span, by its rank in text
// order: "T1", "T2", ... A source's span ids are free text (a JSONL "id", an
// i2b2 tag's id="...") that may name the patient ("Harlan Valdez MRN
// 4471123"): they are never copied, as the note's text is not.
func surrogateSpanID(rank int) string { return "T" + strconv.Itoa(rank+1) }

// isSurrogateSpanID reports whether id is one surrogateSpanID gives.
func isSurrogateSpanID(id string) bool {
	n, ok := strings.CutPrefix(id, "T")
	return ok && n != "" && n[0] != '0' && isDigits(n)
}

// assemble writes a copy of d with its spans' surrogates and the
// propagated occurrences' (which overlap no span) in place, the spans
// re-aligned to the new text, and returns it with the occurrences' places.
func (g *gen) assemble(d *pipeline.Document, p spanPlan, occs []occurrence) (pipeline.Document, []Propagation) {
	var b strings.Builder
	b.Grow(len(d.Text) + len(d.Text)/8)
	nd := *d
	nd.Spans = make([]pipeline.Span, len(d.Spans))
	var props []Propagation
	prev, ncp := 0, 0 // bytes of the original written; code points written
	put := func(bs, be int, sur string) (start int) {
		between := d.Text[prev:bs]
		if g.e.lang == "en" {
			between = withArticle(between, prev == 0, d.Text[bs:be], sur)
		}
		b.WriteString(between)
		ncp += utf8.RuneCountInString(between)
		b.WriteString(sur)
		start = ncp
		ncp += utf8.RuneCountInString(sur)
		prev = be
		return start
	}
	putOcc := func(o occurrence) {
		start := put(o.bs, o.be, o.sur)
		props = append(props, Propagation{Doc: d.ID, Type: o.of.Type, Start: start, End: ncp, SourceStart: o.cs, SourceEnd: o.ce})
	}
	k := 0 // the next occurrence
	for rank, i := range p.order {
		for ; k < len(occs) && occs[k].bs < p.bs[i]; k++ {
			putOcc(occs[k])
		}
		s := d.Spans[i]
		s.Start = put(p.bs[i], p.be[i], p.sur[i])
		s.End, s.Text = ncp, p.sur[i]
		s.ID = surrogateSpanID(rank)
		nd.Spans[i] = s
	}
	for _, o := range occs[k:] {
		putOcc(o)
	}
	b.WriteString(d.Text[prev:])
	nd.Text = b.String()
	return nd, props
}

// table is the mappings of one scope. The corpus's holds one for each
// corpus-scope value from the plan to the end of a run, so its rows are
// compact: the strings every row of a kind shares are kept once.
type table struct {
	scope  string
	rows   []tableRow                // in insertion order
	kinds  [][3]string               // category, type and strategy of rows, by index
	kindAt map[[3]string]uint32      // index of each in kinds
	index  map[string]map[string]int // type -> folded original -> index in rows
	// taken are the hashes (keyHash) of type + "\x00" + folded surrogate: they
	// keep the mapping one-to-one, and two with one hash can only make a
	// candidate surrogate look taken.
	taken map[uint64]bool
	mu    sync.Mutex // the corpus table is read by all patients at once
}

type tableRow struct {
	original, surrogate string
	kind                uint32
	new, hit            bool // hit: used by this run
}

func newTable(scope string) *table {
	return &table{scope: scope, kindAt: map[[3]string]uint32{}, index: map[string]map[string]int{}, taken: map[uint64]bool{}}
}

// mapping returns row i as a Mapping.
func (t *table) mapping(i int) Mapping {
	r, k := &t.rows[i], t.kinds[t.rows[i].kind]
	return Mapping{Scope: t.scope, Category: k[0], Type: k[1], Original: r.original, Surrogate: r.surrogate, Strategy: k[2], New: r.new}
}

// all yields every mapping of the table, in insertion order.
func (t *table) all() iter.Seq[Mapping] {
	return func(yield func(Mapping) bool) {
		for i := range t.rows {
			if !yield(t.mapping(i)) {
				return
			}
		}
	}
}

// letterMap is the table's letter map (see letter).
func (t *table) letterMap() []Mapping {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Mapping
	for i := range t.rows {
		if t.kinds[t.rows[i].kind][1] == "INITIAL" {
			out = append(out, t.mapping(i))
		}
	}
	return out
}

// nameWords are the table's replaced name words (see nameWord).
func (t *table) nameWords() []Mapping {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Mapping
	for i := range t.rows {
		if strings.HasPrefix(t.kinds[t.rows[i].kind][2], "name-") {
			out = append(out, t.mapping(i))
		}
	}
	return out
}

func (t *table) put(m Mapping) int {
	byType := t.index[m.Type]
	if byType == nil {
		byType = map[string]int{}
		t.index[m.Type] = byType
	}
	kind := [3]string{m.Category, m.Type, m.Strategy}
	ki, ok := t.kindAt[kind]
	if !ok {
		ki = uint32(len(t.kinds))
		t.kindAt[kind] = ki
		t.kinds = append(t.kinds, kind)
	}
	row := tableRow{original: m.Original, surrogate: m.Surrogate, kind: ki, new: m.New}
	k := fold(m.Original)
	i, dup := byType[k]
	if dup {
		row.hit = t.rows[i].hit
		t.rows[i] = row
	} else {
		i = len(t.rows)
		t.rows = append(t.rows, row)
		byType[k] = i
	}
	t.taken[takenKey(m.Type, m.Surrogate)] = true
	return i
}

// takenKey is the hash of a type and a folded surrogate in table.taken.
func takenKey(typ, sur string) uint64 {
	var arr [96]byte
	b := append(append(arr[:0], typ...), 0)
	return keyHash(appendFold(b, sur))
}

// without returns a copy of the table without the mappings of some
// type + "\x00" + folded original keys.
func (t *table) without(keys []string) *table {
	drop := map[string]bool{}
	for _, k := range keys {
		drop[k] = true
	}
	out := newTable(t.scope)
	for m := range t.all() {
		if !drop[m.Type+"\x00"+fold(m.Original)] {
			out.put(m)
		}
	}
	return out
}

func (t *table) get(typ, orig string) (Mapping, bool) {
	var arr [64]byte
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.index[typ][string(appendFold(arr[:0], orig))]
	if !ok {
		return Mapping{}, false
	}
	t.rows[i].hit = true
	return t.mapping(i), true
}

// rowOf returns the index of the row of a type's folded original, without
// counting it as used.
func (t *table) rowOf(typ, folded string) (int32, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.index[typ][folded]
	return int32(i), ok
}

func (t *table) add(m Mapping) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m.New = true
	t.rows[t.put(m)].hit = true
}

func (t *table) isTaken(typ, sur string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.taken[takenKey(typ, sur)]
}

// used yields the mappings this run looked up or made, in sortMappings's
// order (one scope: by type, original and surrogate). Only the rows' indexes
// are sorted; each Mapping is made as it is yielded.
func (t *table) used() iter.Seq[Mapping] {
	var hits []int32
	for i := range t.rows {
		if t.rows[i].hit {
			hits = append(hits, int32(i))
		}
	}
	slices.SortFunc(hits, func(a, b int32) int {
		ra, rb := &t.rows[a], &t.rows[b]
		return cmp.Or(cmp.Compare(t.kinds[ra.kind][1], t.kinds[rb.kind][1]),
			cmp.Compare(ra.original, rb.original), cmp.Compare(ra.surrogate, rb.surrogate))
	})
	return func(yield func(Mapping) bool) {
		for _, i := range hits {
			if !yield(t.mapping(int(i))) {
				return
			}
		}
	}
}
