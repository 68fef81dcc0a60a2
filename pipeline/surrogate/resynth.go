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
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
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
	Doc       string
	Start     int // code points in the original document
	End       int
	Type      string
	Original  string
	Surrogate string
	Reason    string
	Kept      bool // the original was left in place (it is listed by Check, not counted as a leak)
}

// Result is what a run returns: the new documents (in input order, spans in
// their input order, re-aligned), every mapping it used (New marks those the
// job must store), the patients' shifts and the items for review.
type Result struct {
	Docs     []pipeline.Document
	Mappings []Mapping
	Shifts   []PatientShift
	Review   []ReviewItem
	Language string // the language the surrogates were written for
}

// Run resynthesizes docs. Documents are grouped by their Patient field; store
// holds the mappings and shifts of earlier runs, which are reused.
func (r *Resynthesizer) Run(docs []pipeline.Document, store Store) (*Result, error) {
	if err := r.Policy.Validate(); err != nil {
		return nil, err
	}
	for i := range docs {
		if err := checkSpans(&docs[i]); err != nil {
			return nil, fmt.Errorf("document %s: %w", docs[i].ID, err)
		}
	}
	e := r.prepare(docs, store)

	// Corpus-scope values first, in sorted order, from one generator: they are
	// shared by all patients and must not depend on how patients are scheduled.
	corpusGen := e.newGen(e.corpus, e.rngFor("corpus"), nil, nil)
	for _, v := range e.corpusValues(docs) {
		corpusGen.excls = corpusGen.excls[:0]
		for _, p := range v.patients {
			corpusGen.excls = append(corpusGen.excls, e.perPat[p])
		}
		corpusGen.surrogate(v.doc, v.span, v.rule, "")
	}
	e.review = append(e.review, corpusGen.review...)

	patients := groupByPatient(docs)
	results := make([]patientResult, len(patients))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = e.runPatient(docs, patients[i])
			}
		}()
	}
	for i := range patients {
		next <- i
	}
	close(next)
	wg.Wait()

	res := &Result{Docs: make([]pipeline.Document, len(docs)), Language: e.lang}
	res.Review = append(res.Review, e.review...)
	for _, pr := range results {
		for i, d := range pr.docs {
			res.Docs[pr.idx[i]] = d
		}
		res.Mappings = append(res.Mappings, pr.mappings...)
		res.Shifts = append(res.Shifts, pr.shift)
		res.Review = append(res.Review, pr.review...)
	}
	res.Mappings = append(res.Mappings, e.corpus.used()...)
	sortMappings(res.Mappings)
	sort.Slice(res.Shifts, func(i, j int) bool { return res.Shifts[i].Patient < res.Shifts[j].Patient })
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
	dmy     bool
	pools   *pools
	enPools *pools
	orig    *valueSet            // every replaced original value of the corpus
	perPat  map[string]*valueSet // ... of each patient
	names   map[string]bool      // folded original name words of the corpus
	streets map[string]bool      // folded "name\x00suffix" pairs of original streets
	dates   map[string][]dateRef // date-shuffle pools by pattern
	corpus  *table
	stored  map[string]*table // patient scope -> stored mappings
	shifts  map[string]PatientShift
	review  []ReviewItem
}

type dateRef struct{ doc, text string }

func (r *Resynthesizer) prepare(docs []pipeline.Document, store Store) *engine {
	e := &engine{r: r, orig: newValueSet(), perPat: map[string]*valueSet{},
		names: map[string]bool{}, streets: map[string]bool{}, dates: map[string][]dateRef{},
		corpus: newTable(ScopeCorpus), stored: map[string]*table{}, shifts: map[string]PatientShift{}}
	all := append(append([]pipeline.Document(nil), docs...), r.Context...)
	e.lang = r.Policy.Language
	if e.lang == "auto" {
		texts := make([]string, 0, 50)
		for i := 0; i < len(all) && i < 50; i++ {
			texts = append(texts, all[i].Text)
		}
		e.lang = detectLanguage(texts)
	}
	e.res = r.Resources
	if e.res == nil {
		e.res = resources.ForLanguage(e.lang)
	}
	e.en = resources.Default()
	e.pools = poolsFor(e.res)
	e.enPools = poolsFor(e.en)
	e.dmy = r.Policy.DateOrder == "DMY" || r.Policy.DateOrder == "auto" && e.lang == "es"
	// Each patient's values are read on every core; the corpus's are the
	// union of the patients'.
	groups := groupByPatient(all)
	preps := make([]patientPrep, len(groups))
	parallel(len(groups), func(i int) { preps[i] = e.preparePatient(all, groups[i].docs) })
	for i, pp := range preps {
		e.perPat[groups[i].id] = pp.values
		e.orig.merge(pp.values)
		for _, w := range pp.names {
			e.names[w] = true
		}
		for _, st := range pp.streets {
			e.streets[st] = true
		}
		for _, d := range pp.dates {
			e.dates[d.pattern] = append(e.dates[d.pattern], d.ref)
		}
	}
	for _, k := range slices.Sorted(mapsKeys(e.dates)) {
		refs := e.dates[k]
		sort.Slice(refs, func(i, j int) bool { return refs[i].doc+refs[i].text < refs[j].doc+refs[j].text })
	}
	for _, m := range store.Mappings {
		t := e.corpus
		if m.Scope != ScopeCorpus {
			if t = e.stored[m.Scope]; t == nil {
				t = newTable(m.Scope)
				e.stored[m.Scope] = t
			}
		}
		m.New = false
		t.put(m)
	}
	for _, s := range store.Shifts {
		s.New = false
		e.shifts[s.Patient] = s
	}
	return e
}

// patientPrep is what prepare reads from one patient's records.
type patientPrep struct {
	values  *valueSet // replaced originals, and name words as words
	names   []string  // folded name words
	streets []string  // street name and suffix pairs
	dates   []struct {
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
			if rule.Strategy == Keep {
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
				for _, w := range splitName(s.Text, e.lang) {
					if w.role != roleLiteral && utf8.RuneCountInString(w.text) > 1 {
						pp.names = append(pp.names, fold(w.text))
						pp.values.addWord(w.text)
					}
				}
			case Street:
				pp.streets = append(pp.streets, streetPairs(e.res, s.Text)...)
			case DateShuffle:
				if dt, ok := parseDate(s.Text, e.dmy); ok {
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
	doc      *pipeline.Document
	span     pipeline.Span
	rule     Rule
	patients []string // the patients whose records hold the value, sorted
}

// corpusValues lists the distinct corpus-scope values of docs, sorted, each
// with the patients its surrogate goes to: those whose records hold it, and
// for a name every patient whose records hold one of its words in a name of
// that type (a word's surrogate is shared by all of them).
func (e *engine) corpusValues(docs []pipeline.Document) []spanRef {
	index := map[string]int{}
	var out []spanRef
	pats := map[string]map[string]bool{} // value or name word key -> patients
	addPat := func(k, p string) {
		if pats[k] == nil {
			pats[k] = map[string]bool{}
		}
		pats[k][p] = true
	}
	for i := range docs {
		p := patientOf(docs[i])
		for _, s := range docs[i].Spans {
			rule := e.r.Policy.Rule(s.Category, s.Type)
			if rule.Scope != ScopeCorpus || rule.Strategy == Keep || patientOnly[rule.Strategy] {
				continue
			}
			k := s.Type + "\x00" + fold(s.Text) // as the corpus table looks values up
			if _, ok := index[k]; !ok {
				index[k] = len(out)
				out = append(out, spanRef{doc: &docs[i], span: s, rule: rule})
			}
			addPat(k, p)
			if rule.Strategy == Name {
				for _, w := range splitName(s.Text, e.lang) {
					addPat(s.Type+"\x01"+fold(w.text), p)
				}
			}
		}
	}
	for i := range out {
		s := out[i].span
		all := map[string]bool{}
		for p := range pats[s.Type+"\x00"+fold(s.Text)] {
			all[p] = true
		}
		if out[i].rule.Strategy == Name {
			for _, w := range splitName(s.Text, e.lang) {
				for p := range pats[s.Type+"\x01"+fold(w.text)] {
					all[p] = true
				}
			}
		}
		out[i].patients = slices.Sorted(mapsKeys(all))
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].span, out[j].span
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Text, b.Text)) < 0
	})
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
}

func (e *engine) runPatient(docs []pipeline.Document, p patientGroup) patientResult {
	scope := PatientScope(p.id)
	tab := newTable(scope)
	if st := e.stored[scope]; st != nil {
		for _, m := range st.maps {
			tab.put(m)
		}
	}
	g := e.newGen(tab, e.rngFor(scope), e.perPat[p.id], e.corpus)
	g.patient = p.id
	g.chooseShifts(docs, p)
	out := patientResult{idx: p.docs}
	for _, i := range p.docs {
		out.docs = append(out.docs, g.rewrite(&docs[i]))
	}
	out.mappings = tab.used()
	out.shift = g.shift
	out.review = g.review
	return out
}

// rewrite returns a copy of d with every span replaced and re-aligned.
// Spans do not overlap, so one pass over the text in span order converts
// code points to bytes and back.
func (g *gen) rewrite(d *pipeline.Document) pipeline.Document {
	order := make([]int, len(d.Spans))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return d.Spans[order[a]].Start < d.Spans[order[b]].Start })
	var b strings.Builder
	b.Grow(len(d.Text) + len(d.Text)/8)
	nd := *d
	nd.Spans = make([]pipeline.Span, len(d.Spans))
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
	prev, ncp := 0, 0 // bytes of the original written; code points written
	for _, i := range order {
		s := d.Spans[i]
		bs := byteOf(s.Start)
		be := byteOf(s.End)
		b.WriteString(d.Text[prev:bs])
		ncp += utf8.RuneCountInString(d.Text[prev:bs])
		s.Text = d.Text[bs:be]
		before := d.Text[max(0, bs-16):bs]
		sur := g.surrogate(d, s, g.e.r.Policy.Rule(s.Category, s.Type), before)
		b.WriteString(sur)
		s.Start = ncp
		ncp += utf8.RuneCountInString(sur)
		s.End, s.Text = ncp, sur
		nd.Spans[i] = s
		prev = be
	}
	b.WriteString(d.Text[prev:])
	nd.Text = b.String()
	return nd
}

// table is the mappings of one scope.
type table struct {
	scope string
	maps  []Mapping                  // in insertion order
	index map[string]map[string]int  // type -> folded original -> index in maps
	taken map[string]map[string]bool // type -> folded surrogate: keeps the mapping one-to-one
	hit   []bool                     // mappings used by this run
	mu    sync.Mutex                 // the corpus table is read by all patients at once
}

func newTable(scope string) *table {
	return &table{scope: scope, index: map[string]map[string]int{}, taken: map[string]map[string]bool{}}
}

func (t *table) put(m Mapping) int {
	m.Scope = t.scope
	byType := t.index[m.Type]
	if byType == nil {
		byType = map[string]int{}
		t.index[m.Type] = byType
		t.taken[m.Type] = map[string]bool{}
	}
	k := fold(m.Original)
	i, dup := byType[k]
	if dup {
		t.maps[i] = m
	} else {
		i = len(t.maps)
		t.maps = append(t.maps, m)
		t.hit = append(t.hit, false)
		byType[k] = i
	}
	t.taken[m.Type][fold(m.Surrogate)] = true
	return i
}

func (t *table) get(typ, orig string) (Mapping, bool) {
	var arr [64]byte
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.index[typ][string(appendFold(arr[:0], orig))]
	if !ok {
		return Mapping{}, false
	}
	t.hit[i] = true
	return t.maps[i], true
}

func (t *table) add(m Mapping) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m.New = true
	t.hit[t.put(m)] = true
}

func (t *table) isTaken(typ, sur string) bool {
	var arr [64]byte
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.taken[typ][string(appendFold(arr[:0], sur))]
}

// used returns the mappings this run looked up or made.
func (t *table) used() []Mapping {
	var out []Mapping
	for i, m := range t.maps {
		if t.hit[i] {
			out = append(out, m)
		}
	}
	return out
}
