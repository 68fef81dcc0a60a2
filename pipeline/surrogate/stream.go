package surrogate

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sort"
	"strings"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
)

// Stream resynthesizes a corpus a batch of whole patients at a time, so that
// memory holds one batch and what the corpus's values decide, never its text:
// Observe reads every batch once (pass 1), Plan draws the surrogates all
// patients share, Rewrite replaces the PHI of one batch (pass 2) and Finish
// returns what belongs to no single batch. A patient's output depends only on
// the seed, the stored state, the plan and that patient's records: batches
// may be rewritten in any order, in several processes, or again after a crash,
// and give the same documents. Run is the same steps over one batch.
type Stream struct {
	e       *engine
	started bool
	planned bool
	seen    map[string]bool // patients observed
	stale   map[string]bool // patients whose earlier notes are rewritten too
	redrawn map[string]bool // ... and of those, the ones whose stored state is drawn anew
	// What stalePatients needs to redraw stored corpus-scope mappings: the
	// rows of the stored corpus table each patient's records use (a rerun's
	// every patient uses some: a row's index costs 4 bytes, where its key's
	// string would cost 40), and the rows that now hold an original value of
	// a patient they go to.
	uses     map[string][]int32
	dropRows map[int32]bool
	// values are the corpus-scope values and the name words of the corpus
	// (see valueEntry), by key: what the first pass keeps most of until the
	// plan.
	values valueTable
	// The labels of values: (category, type) by index, and the index of each.
	valueLabels  [][2]string
	valueLabelAt map[[2]string]uint32
	// tokenPats are, for each single-word value or name word (by its hash,
	// keyHash: two words of one hash can only make a candidate look held),
	// the patients whose records hold it, by index in patients.
	tokenPats map[uint64][]int32
	patients  []string
	sets      []*valueSet // per patient index: the patient's values (engine.perPat's)
	mark      []uint32    // per patient index: the last valuePatients call that visited it
	epoch     uint32
	labels    map[[2]string]bool
	load      PatientState // nil: every stored mapping came with the Store
}

// PatientState returns the stored patient-scope mappings of some patients:
// what earlier runs drew for them (see LoadPatientState).
type PatientState func(patients []string) ([]Mapping, error)

// LoadPatientState makes the stream read the stored patient-scope mappings of
// a batch's patients with the batch, in Observe and again in Rewrite, and let
// them go after it, instead of holding every patient's from the start: the
// Store given to Stream then holds the corpus-scope mappings and the shifts.
// The output is the same either way.
func (s *Stream) LoadPatientState(load PatientState) { s.load = load }

// loadPatients puts the stored mappings of patients into the engine's tables
// for one batch; unloadPatients takes them out again.
func (s *Stream) loadPatients(patients []string) error {
	if s.load == nil || len(patients) == 0 {
		return nil
	}
	ms, err := s.load(patients)
	if err != nil {
		return err
	}
	want := make(map[string]bool, len(patients))
	for _, p := range patients {
		want[PatientScope(p)] = true
	}
	for _, m := range ms {
		if !want[m.Scope] {
			return fmt.Errorf("the stored mappings read for a batch's patients (%s, ...) hold one of scope %q, no patient of the batch", patients[0], m.Scope)
		}
		t := s.e.stored[m.Scope]
		if t == nil {
			t = newTable(m.Scope)
			s.e.stored[m.Scope] = t
		}
		m.New = false
		t.put(m)
	}
	return nil
}

func (s *Stream) unloadPatients(patients []string) {
	if s.load != nil {
		for _, p := range patients {
			delete(s.e.stored, PatientScope(p))
		}
	}
}

// corpusValue is the occurrence of a corpus-scope value a plan draws its
// surrogate for; of all occurrences, the least by (context, text, category,
// document, start), so that the choice depends on no batch's order. One is
// kept per distinct value of the corpus until the plan, in a few words: the
// document's id, not the document; the patient's and the label's indexes.
type corpusValue struct {
	doc, text  string
	start, end int32  // code points
	patient    int32  // index in Stream.patients
	label      uint32 // index in Stream.valueLabels
	context    bool
	named      bool // an occurrence is kept (a name word's entry has none)
}

// lessValue orders the occurrences of one value (see corpusValue).
func (s *Stream) lessValue(v, o *corpusValue) bool {
	if v.context != o.context {
		return !v.context
	}
	return cmp.Or(cmp.Compare(v.text, o.text), cmp.Compare(s.valueLabels[v.label][0], s.valueLabels[o.label][0]),
		cmp.Compare(v.doc, o.doc), cmp.Compare(v.start, o.start)) < 0
}

// Stream starts a batched run over the state earlier runs stored.
func (r *Resynthesizer) Stream(store Store) (*Stream, error) {
	if err := r.Policy.Validate(); err != nil {
		return nil, err
	}
	e := &engine{r: r, orig: newUnion(), wide: newCorpusWide(), perPat: map[string]*valueSet{},
		names: map[string]bool{}, streets: map[string]bool{}, countries: map[string]int{}, providers: map[string]int{}, cities: map[string]int{}, dates: map[string][]dateRef{},
		corpus: newTable(ScopeCorpus), stored: map[string]*table{}, shifts: map[string]PatientShift{}, noteTypes: map[string]int{}}
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
	s := &Stream{e: e, seen: map[string]bool{}, stale: map[string]bool{}, redrawn: map[string]bool{},
		uses: map[string][]int32{}, dropRows: map[int32]bool{},
		values: newValueTable(), valueLabelAt: map[[2]string]uint32{}, tokenPats: map[uint64][]int32{}, labels: map[[2]string]bool{}}
	return s, nil
}

// start settles the language and the lists from the first batch's documents.
func (e *engine) start(first []pipeline.Document) {
	r := e.r
	e.lang = r.Policy.Language
	if e.lang == "auto" {
		texts := make([]string, 0, 50)
		for i := 0; i < len(first) && i < 50; i++ {
			texts = append(texts, first[i].Text)
		}
		e.lang = detectLanguage(texts)
	}
	e.res = r.Resources
	pack := cmp.Or(r.Policy.Resources, e.lang)
	if e.res == nil && len(r.Policy.ResourceFiles) > 0 {
		if e.res, e.err = resources.LoadText(r.Policy.ResourceFiles, pack); e.err != nil {
			e.err = fmt.Errorf("%w: resourceFiles %w", ErrPolicy, e.err)
		}
	}
	if e.res == nil {
		e.res = resources.ForLanguage(pack)
	}
	e.en = resources.Default()
	e.pools = poolsFor(e.res)
	e.enPools = poolsFor(e.en)
	e.reading = readingFor(r.Policy, e.lang)
	r.Policy = r.Policy.atHome(e.lang)
}

// Observe reads one batch in pass 1: docs are notes to rewrite, context the
// batch's notes that an earlier run rewrote (they constrain the surrogates).
// A patient's records must all come in one batch. The language of a corpus
// policy marks "auto" is read from the first batch's first documents.
func (s *Stream) Observe(docs, context []pipeline.Document) error {
	if s.planned {
		return errors.New("a stream observes every batch before its plan")
	}
	for i := range docs {
		if err := checkSpans(&docs[i]); err != nil {
			return fmt.Errorf("document %s: %w", docs[i].ID, err)
		}
	}
	all := append(docs[:len(docs):len(docs)], context...)
	e := s.e
	if !s.started {
		s.started = true
		e.start(all)
	}
	if e.err != nil {
		return e.err
	}
	groups := groupByPatient(all)
	ids := make([]string, len(groups))
	for i, g := range groups {
		if s.seen[g.id] {
			return fmt.Errorf("the records of patient %s come in two batches", g.id)
		}
		s.seen[g.id] = true
		ids[i] = g.id
	}
	if err := s.loadPatients(ids); err != nil {
		return err
	}
	defer s.unloadPatients(ids)
	// Each patient's values are read on every core; the corpus's are the
	// union of the patients'.
	preps := make([]patientPrep, len(groups))
	parallel(len(groups), func(i int) { preps[i] = e.preparePatient(all, groups[i].docs) })
	for i, pp := range preps {
		p := int32(len(s.patients) + i) // the index groups[i] gets below
		for _, set := range []map[string]bool{pp.values.m, pp.values.words} {
			for k := range set {
				if !strings.Contains(k, " ") {
					h := keyHash(k)
					s.tokenPats[h] = append(s.tokenPats[h], p)
				}
			}
		}
		e.orig.merge(pp.values)
		pp.values.freeze() // kept to the end of the run
		e.perPat[groups[i].id] = pp.values
		for _, w := range pp.names {
			e.names[w] = true
		}
		for _, st := range pp.streets {
			e.streets[st] = true
		}
		for _, c := range pp.countries {
			e.countries[c]++
		}
		for _, d := range pp.providers {
			e.providers[d]++
		}
		for _, c := range pp.cities {
			e.cities[c]++
		}
		for _, d := range pp.dates {
			e.dates[d.pattern] = append(e.dates[d.pattern], d.ref)
		}
	}
	todo := map[string]bool{}
	for _, d := range docs {
		todo[patientOf(d)] = true
	}
	if len(e.shifts) > 0 || len(e.stored) > 0 || len(e.corpus.rows) > 0 { // else a first run: nothing stored to collide with
		for _, g := range groups {
			s.stalePatient(all, g, todo[g.id])
		}
	}
	for gi, g := range groups {
		e.countNoteTypes(all, g.docs)
		s.patients = append(s.patients, g.id)
		s.sets = append(s.sets, preps[gi].values)
		for _, i := range g.docs {
			s.observeValues(&all[i], i >= len(docs))
			e.wide.observe(&all[i], e.r.Policy, e.lang)
		}
	}
	return nil
}

// stalePatient tells whether a patient's stored date shift or patient-scope
// surrogates no longer fit their records: a shifted date, or a surrogate,
// that now equals or holds one of their original values (a new note mentions
// it). Their stored state is dropped at the plan, so that the run draws them
// anew for all their notes. It also notes which stored corpus-scope mappings
// the patient's records use, and those that now hold one of their values.
func (s *Stream) stalePatient(all []pipeline.Document, g patientGroup, todo bool) {
	e, pol := s.e, s.e.r.Policy
	vals := e.perPat[g.id]
	if sh, ok := e.shifts[g.id]; ok && todo {
	docs:
		for _, i := range g.docs {
			for _, sp := range all[i].Spans {
				if st := pol.Rule(sp.Category, sp.Type).Strategy; st != DateShift && st != DateShuffle {
					continue
				}
				if dt, ok := parseDate(sp.Text, e.reading); ok && vals.within(dt.shifted(sh.Days)) {
					s.redrawn[g.id] = true
					break docs
				}
			}
		}
	}
	if t := e.stored[PatientScope(g.id)]; t != nil && todo && !s.redrawn[g.id] {
		for m := range t.all() {
			if vals.within(m.Surrogate) {
				s.redrawn[g.id] = true
				break
			}
		}
	}
	if s.redrawn[g.id] {
		s.stale[g.id] = true
	}
	// A stored corpus-scope surrogate (a doctor's, a hospital's) that now
	// holds an original value of a patient it goes to is drawn anew, and
	// every patient whose records use it is rewritten with the new one.
	if len(e.corpus.rows) == 0 {
		return
	}
	uses := map[int32]bool{}
	for _, i := range g.docs {
		for _, sp := range all[i].Spans {
			if row, ok := e.corpus.rowOf(sp.Type, fold(sp.Text)); ok {
				uses[row] = true
			}
			if pol.Rule(sp.Category, sp.Type).Strategy == Name {
				for _, w := range splitName(sp.Text, e.lang) {
					if row, ok := e.corpus.rowOf(sp.Type, fold(w.text)); ok {
						uses[row] = true
					}
				}
			}
		}
	}
	if len(uses) == 0 {
		return
	}
	s.uses[g.id] = slices.Sorted(maps.Keys(uses))
	if !todo {
		return
	}
	// By row, not over the whole table: every patient of a rerun into a new
	// corpus uses some of it, and the table holds every corpus-scope value.
	for row := range uses {
		if vals.within(e.corpus.rows[row].surrogate) {
			s.dropRows[row] = true
		}
	}
}

// observeValues notes the corpus-scope values of a document with its patient:
// each value's surrogate goes to those whose records hold it, and for a name
// to every patient whose records hold one of its words in a name of that
// type (a word's surrogate is shared by all of them).
func (s *Stream) observeValues(d *pipeline.Document, context bool) {
	pi := int32(len(s.patients) - 1) // Observe appended the document's patient last
	p := pi * 2
	if !context {
		p++
	}
	addPat := func(k valueKey) *valueEntry {
		e := s.values.entry(k)
		if len(e.pats) == 0 || e.pats[len(e.pats)-1] != p {
			e.pats = append(e.pats, p)
		}
		return e
	}
	var rs []rune // the text's code points, once a name needs the title before it
	for _, sp := range d.Spans {
		rule := s.e.r.Policy.Rule(sp.Category, sp.Type)
		if rule.Scope != ScopeCorpus || rule.kept(sp.Text) || patientOnly[rule.Strategy] {
			continue
		}
		v := corpusValue{doc: d.ID, text: sp.Text, start: int32(sp.Start), end: int32(sp.End),
			patient: pi, label: s.valueLabel(sp.Category, sp.Type), context: context, named: true}
		e := addPat(valueKeyOf(sp.Type, sp.Text))
		if !e.v.named || s.lessValue(&v, &e.v) {
			e.v = v
			if rule.Strategy == Email {
				e.owner = ownerBefore(d, sp, s.e.r.Policy)
			}
		}
		if rule.Strategy == Name {
			if rs == nil {
				rs = []rune(d.Text)
			}
			e.said |= titleBits(rs, sp, s.e.lang)
			for _, w := range nameWords(sp.Text, s.e.lang) {
				addPat(wordKeyOf(sp.Type, w))
			}
		}
	}
}

// Plan decides, once every batch is observed, which patients' earlier notes
// are rewritten too and the surrogates of the corpus-scope values. force are
// patients to rewrite whole whatever their stored state (those an earlier
// attempt of the same run decided to, whose state it already dropped). The
// result holds the plan's review items, the language, Redone and Dropped.
func (s *Stream) Plan(force []string) (*Result, error) {
	if s.planned {
		return nil, errors.New("a stream is planned once")
	}
	s.planned = true
	e := s.e
	if !s.started {
		s.started = true
		e.start(nil)
	}
	if e.err != nil {
		return nil, e.err
	}
	e.orig.seal() // every batch is merged into it
	e.countryPool = newCorpusPool(e.countries, e.res.CountryOf)
	e.providerPool = newCorpusPool(e.providers, func(d string) (string, bool) { return d, true })
	e.cityPool = newCorpusPool(e.cities, e.res.PlaceOfCity)
	for _, p := range force {
		s.stale[p] = true
	}
	for _, k := range slices.Sorted(mapsKeys(e.dates)) {
		refs := e.dates[k]
		sort.Slice(refs, func(i, j int) bool { return refs[i].doc+refs[i].text < refs[j].doc+refs[j].text })
	}
	for p := range s.redrawn {
		delete(e.stored, PatientScope(p))
		delete(e.shifts, p)
	}
	if len(s.dropRows) > 0 {
		var dropped []string
		for _, row := range slices.Sorted(maps.Keys(s.dropRows)) { // in the table's order
			m := e.corpus.mapping(int(row))
			dropped = append(dropped, m.Type+"\x00"+fold(m.Original))
			e.dropped = append(e.dropped, m)
		}
		e.corpus = e.corpus.without(dropped)
		for p, u := range s.uses {
			for _, row := range u {
				if s.dropRows[row] {
					s.stale[p] = true
				}
			}
		}
	}

	// Corpus-scope values first, in sorted order, from one generator: they are
	// shared by all patients and must not depend on how patients are scheduled.
	corpusGen := e.newGen(e.corpus, e.rngFor("corpus"), nil, nil)
	corpusGen.exclWord = func(f string) bool {
		for _, i := range s.tokenPats[keyHash(f)] {
			if s.mark[i] == s.epoch { // valuePatients visited it for this value
				return true
			}
		}
		return false
	}
	for _, i := range s.corpusValues() {
		v := s.ref(&s.values.at(i).v)
		corpusGen.excls = corpusGen.excls[:0]
		s.valuePatients(v, func(p int32) {
			corpusGen.excls = append(corpusGen.excls, s.sets[p])
		})
		corpusGen.planSaid, corpusGen.planOwner = saidSex(s.values.at(i).said), s.values.at(i).owner
		corpusGen.surrogate(v.doc, v.span, v.rule, "")
	}
	// What only the plan reads is let go before pass 2: the occurrences of
	// the corpus-scope values and their patients, and which patients hold
	// which word (only the plan's exclusions look words up by patient).
	s.seen, s.uses, s.dropRows, s.valueLabels, s.valueLabelAt = nil, nil, nil, nil, nil
	s.values, s.tokenPats, s.patients, s.sets, s.mark = valueTable{}, nil, nil, nil, nil
	return &Result{Review: corpusGen.review, Language: e.lang, Redone: s.Redone(), Dropped: e.dropped}, nil
}

// Redone are the patients whose earlier notes a planned run rewrites.
func (s *Stream) Redone() []string { return slices.Sorted(mapsKeys(s.stale)) }

// Redrawn are the patients of Redone whose stored date shift and
// patient-scope mappings the run draws anew: the store drops them.
func (s *Stream) Redrawn() []string { return slices.Sorted(mapsKeys(s.redrawn)) }

// valueLabel returns the index of a label in valueLabels.
func (s *Stream) valueLabel(category, typ string) uint32 {
	l := [2]string{category, typ}
	i, ok := s.valueLabelAt[l]
	if !ok {
		i = uint32(len(s.valueLabels))
		s.valueLabelAt[l] = i
		s.valueLabels = append(s.valueLabels, l)
	}
	return i
}

// corpusValues lists the corpus-scope values of the notes the run rewrites,
// by index in values, sorted by type and text: one for each value (the plan
// makes each value's span when it draws its surrogate, see ref).
func (s *Stream) corpusValues() []int32 {
	var out []int32
	for i := range s.values.len() {
		if e := s.values.at(i); e.v.named && s.rewritten(e) {
			out = append(out, i)
		}
	}
	// Addresses come after names: an address follows its owner's new name
	// (see followName).
	address := func(v *corpusValue) bool {
		l := s.valueLabels[v.label]
		return s.e.r.Policy.Rule(l[0], l[1]).Strategy == Email
	}
	slices.SortFunc(out, func(i, j int32) int {
		a, b := &s.values.at(i).v, &s.values.at(j).v
		return cmp.Or(cmpBool(address(a), address(b)), cmp.Compare(s.valueLabels[a.label][1], s.valueLabels[b.label][1]),
			cmp.Compare(a.text, b.text))
	})
	return out
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// ref is a corpus value's occurrence as the generator takes it.
func (s *Stream) ref(v *corpusValue) spanRef {
	l := s.valueLabels[v.label]
	return spanRef{doc: &pipeline.Document{ID: v.doc, Patient: s.patients[v.patient]},
		span: pipeline.Span{Start: int(v.start), End: int(v.end), Text: v.text, Category: l[0], Type: l[1]},
		rule: s.e.r.Policy.Rule(l[0], l[1])}
}

// rewritten reports whether the run rewrites a note that holds a value.
func (s *Stream) rewritten(v *valueEntry) bool {
	for _, e := range v.pats {
		if e%2 == 1 || s.stale[s.patients[e/2]] {
			return true
		}
	}
	return false
}

// valuePatients calls fn once for each patient (by index in patients) a
// corpus-scope value's surrogate goes to: those whose rewritten records hold
// it, and for a name every patient whose rewritten records hold one of its
// words in a name of that type (a word's surrogate is shared by all of them).
// Nothing is allocated nor looked up by name: a common name word is shared by
// thousands of patients, and the plan visits them for each name that holds it.
func (s *Stream) valuePatients(v spanRef, fn func(p int32)) {
	if len(s.mark) < len(s.patients) {
		s.mark = make([]uint32, len(s.patients))
	}
	s.epoch++
	visit := func(k valueKey) {
		for _, e := range s.values.pats(k) {
			i := e / 2
			if s.mark[i] != s.epoch && (e%2 == 1 || s.stale[s.patients[i]]) {
				s.mark[i] = s.epoch
				fn(i)
			}
		}
	}
	visit(valueKeyOf(v.span.Type, v.span.Text))
	if v.rule.Strategy == Name {
		for _, w := range nameWords(v.span.Text, s.e.lang) {
			visit(wordKeyOf(v.span.Type, w))
		}
	}
}

// Rewrite replaces the PHI of one batch in pass 2: docs, and the context
// notes of the patients the plan rewrites whole, each patient on a core. The
// result holds the new documents (docs in their order, then those context
// notes), the patients' mappings and shifts, and their review items.
func (s *Stream) Rewrite(docs, context []pipeline.Document) (*Result, error) {
	if !s.planned {
		return nil, errors.New("a stream rewrites after its plan")
	}
	e := s.e
	all := docs[:len(docs):len(docs)]
	for _, d := range context {
		if s.stale[patientOf(d)] {
			all = append(all, d)
		}
	}
	for _, d := range all {
		for _, sp := range d.Spans {
			s.labels[[2]string{sp.Category, sp.Type}] = true
		}
	}
	patients := groupByPatient(all)
	var ids []string // whose stored state holds: the plan dropped the redrawn patients'
	for _, g := range patients {
		if !s.redrawn[g.id] {
			ids = append(ids, g.id)
		}
	}
	if err := s.loadPatients(ids); err != nil {
		return nil, err
	}
	defer s.unloadPatients(ids)
	results := make([]patientResult, len(patients))
	parallel(len(patients), func(i int) { results[i] = e.runPatient(all, patients[i]) })
	res := &Result{Docs: make([]pipeline.Document, len(all)), Language: e.lang}
	props := make([][]Propagation, len(all))
	for _, pr := range results {
		for i, d := range pr.docs {
			res.Docs[pr.idx[i]] = d
			props[pr.idx[i]] = pr.propagated[i]
		}
		res.Mappings = append(res.Mappings, pr.mappings...)
		res.Shifts = append(res.Shifts, pr.shift)
		res.Review = append(res.Review, pr.review...)
	}
	res.Propagated = slices.Concat(props...)
	sortMappings(res.Mappings)
	return res, nil
}

// Finish returns what the run decided beyond any batch but its corpus-scope
// mappings (CorpusMappings): the language and the rule each of the rewritten
// notes' labels got.
func (s *Stream) Finish() *Result {
	return &Result{Language: s.e.lang, Labels: s.e.r.Policy.explain(s.Labels())}
}

// Labels are the labels of the notes Rewrite rewrote, sorted: what a part
// of a run rewritten in another process tells the stream that finishes the
// run (AddLabels), whose Finish explains them.
func (s *Stream) Labels() [][2]string {
	return slices.SortedFunc(maps.Keys(s.labels), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
}

// AddLabels adds labels of notes rewritten elsewhere (see Labels).
func (s *Stream) AddLabels(labels [][2]string) {
	for _, l := range labels {
		s.labels[l] = true
	}
}

// CorpusMappings yields, once every batch is rewritten, the corpus-scope
// mappings the rewritten notes used, in sortMappings's order, one at a time:
// a million notes use millions, which a slice of them all would hold at
// once. It may be ranged over more than once.
func (s *Stream) CorpusMappings() iter.Seq[Mapping] { return s.e.corpus.used() }
