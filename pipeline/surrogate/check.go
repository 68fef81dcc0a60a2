package surrogate

import (
	"cmp"
	"encoding/json"
	"maps"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"deidcorpus/pipeline"
)

// Report is what Check found. A clean run has no Misaligned, Leaks,
// Identifiers, Inconsistent, IntervalErrors or EqualToOriginal; Unannotated
// and Kept are listed for a person to read.
type Report struct {
	Documents int `json:"documents"`
	Spans     int `json:"spans"`
	Replaced  int `json:"replaced"` // spans whose text changed
	// Strategies counts the spans replaced by each strategy: how many
	// values were surrogates, how many masks.
	Strategies map[string]int `json:"strategies"`

	Misaligned []SpanProblem `json:"misaligned"` // a span's Text differs from the text at its offsets
	// Leaks are replaced original values found in the output, as whole token
	// sequences, in the records of their patient, where they touch surrogate text.
	Leaks []Leak `json:"leaks"`
	// Unannotated are the same finds in text copied unchanged from the
	// original: the value was written there without a span (an annotation gap).
	Unannotated []Leak `json:"unannotated"`
	// Propagated are the unannotated occurrences of annotated values the
	// run replaced by their surrogates (Result.Propagated): no finds, listed
	// for a person, who may annotate them in the source.
	Propagated []Propagation `json:"propagated"`
	// Identifiers are the source's own identifiers found in an output
	// document's text: its patient's id, its id or the id of another
	// document of its patient (patientIDs says which ids are searched).
	Identifiers []IdentifierLeak `json:"identifiers"`
	Kept        []KeptValue      `json:"kept"` // values the policy keeps (ages under 90, OTHER), with counts
	// Inconsistent are originals replaced by more than one surrogate in a scope.
	Inconsistent []Inconsistency `json:"inconsistent"`
	// IntervalErrors are shifted dates that are not the original moved by the
	// patient's shift (so an interval between two dates changed).
	IntervalErrors  []SurrogateProblem `json:"intervalErrors"`
	DatesChecked    int                `json:"datesChecked"`    // shifted dates whose interval to every other was verified
	EqualToOriginal []SurrogateProblem `json:"equalToOriginal"` // a surrogate equal to an original value of its patient
	NamePatterns    []PatternRow       `json:"namePatterns"`    // Yeniterzi et al. Table 7, original beside surrogate
	// Metadata are fields beside the text (creation date, note type, span
	// comments) that give an original away.
	Metadata []MetadataProblem `json:"metadata"`
	// Incoherent are notes whose surrogate parts disagree (a town and its
	// postal code, province or country; a title and a first name) where the
	// original's agreed: listed for review, counted.
	Incoherent []Incoherence `json:"incoherent"`
	Review     int           `json:"review"` // items the run listed for review
}

// CheckFile is a run's full check report as its job saves it: the report and
// the items listed for review. Reports saved before the fields had JSON names
// ("Leaks") still read, since encoding/json matches keys without regard to
// case.
type CheckFile struct {
	Report Report       `json:"report"`
	Review []ReviewItem `json:"review"`
}

// MarshalJSON writes an empty list, never null, for a kind of finding the run
// did not find: a reader (jq, a dashboard) need not tell the two apart.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report // without this method
	p := plain(r)
	p.Misaligned, p.Leaks, p.Unannotated, p.Propagated = orEmpty(p.Misaligned), orEmpty(p.Leaks), orEmpty(p.Unannotated), orEmpty(p.Propagated)
	p.Identifiers, p.Kept, p.Inconsistent = orEmpty(p.Identifiers), orEmpty(p.Kept), orEmpty(p.Inconsistent)
	p.IntervalErrors, p.EqualToOriginal, p.NamePatterns = orEmpty(p.IntervalErrors), orEmpty(p.EqualToOriginal), orEmpty(p.NamePatterns)
	p.Metadata, p.Incoherent = orEmpty(p.Metadata), orEmpty(p.Incoherent)
	if p.Strategies == nil {
		p.Strategies = map[string]int{}
	}
	return json.Marshal(p)
}

// MarshalJSON writes an empty review list, never null.
func (f CheckFile) MarshalJSON() ([]byte, error) {
	type plain CheckFile
	p := plain(f)
	p.Review = orEmpty(p.Review)
	return json.Marshal(p)
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// OK reports whether the output passed every check.
//
// A source identifier in the text fails the check like a leak, where an
// unannotated find is only listed: the identifiers searched are the record
// numbers a hospital gives patients and notes (MRNs, accession numbers, PHI
// under HIPAA), only distinctive ones are searched, so a find is the id
// rather than a number or word that spells it, and the text around it is
// released as written. That the output documents keep the source's ids as
// their own ids does not make the find harmless: an export may rename them,
// the text keeps them, and the gold annotation lacks the span a tagger
// should learn.
func (r *Report) OK() bool {
	return len(r.Misaligned) == 0 && len(r.Leaks) == 0 && len(r.Identifiers) == 0 && len(r.Inconsistent) == 0 &&
		len(r.IntervalErrors) == 0 && len(r.EqualToOriginal) == 0 && len(r.Metadata) == 0
}

// SpanProblem is a span whose text is not the document's text at its offsets.
type SpanProblem struct {
	Doc       string `json:"doc"`
	Start     int    `json:"start"` // the span's code points
	End       int    `json:"end"`
	Type      string `json:"type"`
	Text      string `json:"text"`      // what the span says it covers
	AtOffsets string `json:"atOffsets"` // what its offsets cover
}

// UnmarshalJSON also reads the form of reports saved before the fields had
// JSON names, where the span was nested whole under "Span".
func (p *SpanProblem) UnmarshalJSON(data []byte) error {
	type plain SpanProblem
	var v struct {
		plain
		Span *pipeline.Span
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*p = SpanProblem(v.plain)
	if s := v.Span; s != nil {
		p.Start, p.End, p.Type, p.Text = s.Start, s.End, s.Type, s.Text
	}
	return nil
}

// Leak is an original value found in the output.
type Leak struct {
	Patient string `json:"patient"`
	Doc     string `json:"doc"`
	Type    string `json:"type"`
	Value   string `json:"value"`
	Start   int    `json:"start"` // code points in the output document
	End     int    `json:"end"`
	// SourceStart and SourceEnd are an unannotated find's code points in
	// the source document, where a curator adds the missing span.
	SourceStart int `json:"sourceStart,omitempty"`
	SourceEnd   int `json:"sourceEnd,omitempty"`
}

// The kinds of an IdentifierLeak.
const (
	PatientIDKind  = "patient id"
	DocumentIDKind = "document id"
)

// IdentifierLeak is a source identifier found in an output document.
type IdentifierLeak struct {
	Patient string `json:"patient"` // where it was found
	Doc     string `json:"doc"`
	Kind    string `json:"kind"` // PatientIDKind or DocumentIDKind
	// ID is the identifier found: the patient's id, or a document's id, in
	// full where the part of it after its patient's id was found.
	ID    string `json:"id"`
	Value string `json:"value"` // the text found
	Start int    `json:"start"` // code points in the output document
	End   int    `json:"end"`
}

// KeptValue is a value left in place, with how often.
type KeptValue struct {
	Type  string `json:"type"`
	Value string `json:"value"`
	Count int    `json:"count"`
}

// Inconsistency is one original with several surrogates in one scope.
type Inconsistency struct {
	Scope      string   `json:"scope"`
	Type       string   `json:"type"`
	Original   string   `json:"original"`
	Surrogates []string `json:"surrogates"`
}

// SurrogateProblem is one replaced span at fault.
type SurrogateProblem struct {
	Patient   string `json:"patient"`
	Doc       string `json:"doc"`
	Type      string `json:"type"`
	Original  string `json:"original"`
	Surrogate string `json:"surrogate"`
	Want      string `json:"want"`
}

// PatternRow is one name pattern's count in the original and the surrogate corpus.
type PatternRow struct {
	Pattern   string `json:"pattern"`
	Tokens    int    `json:"tokens"`
	Original  int    `json:"original"`
	Surrogate int    `json:"surrogate"`
}

// Check compares the original documents with a run's result under the policy
// the run used. It is pure and independent of how the run made its choices.
func Check(orig []pipeline.Document, res *Result, pol *Policy) *Report {
	c := NewChecker(pol, res.Language)
	c.wide = newCorpusWide()
	for i := range orig {
		c.wide.observe(&orig[i], c.pol, c.rd.lang)
	}
	c.Add(orig, res)
	return c.Report()
}

// Checker is Check over a run fed a part at a time (a Stream's plan, its
// batches, its finish): documents are checked with their patient's, and what
// spans patients (corpus-scope consistency, kept values, name patterns) is
// kept as counts per value and merged, so that the report equals Check's
// over the whole run when the parts come in the run's document order.
type Checker struct {
	pol           *Policy
	rd            dateReading
	r             *Report
	keptForReview map[checkAt]bool
	kept          map[[2]string]int
	seen          surrogateSets   // corpus scope: every patient's surrogates
	seenProblems  []Inconsistency // patient scope, found per part
	corpusMaps    surrogateSets   // corpus-scope mappings' surrogates
	mapProblems   []Inconsistency // patient scope, found per part
	// The name patterns (Yeniterzi et al. Table 7) of the original and
	// surrogate name spans, counted.
	origPatterns, surPatterns map[string]int
	wide                      *corpusWide // the values searched in every note (see Across)
	coh                       coherence
}

type checkAt struct {
	doc   string
	start int
}

// NewChecker starts a check of a run under its policy, in the language its
// result names.
func NewChecker(pol *Policy, language string) *Checker {
	return &Checker{pol: pol.atHome(language), rd: readingFor(pol, language), r: &Report{}, keptForReview: map[checkAt]bool{},
		kept: map[[2]string]int{}, seen: newSurrogateSets(), corpusMaps: newSurrogateSets(),
		origPatterns: map[string]int{}, surPatterns: map[string]int{}, coh: newCoherence(pol, language)}
}

// NewPartChecker is NewChecker for one part of a run checked in a process
// of its own: it also keeps each corpus-scope value's key, so that its
// State can be merged into the Checker that finishes the run.
func NewPartChecker(pol *Policy, language string) *Checker {
	c := NewChecker(pol, language)
	c.seen.keys = map[uint64][3]string{}
	return c
}

// Across makes the check search every note for the values of the whole
// corpus that the stream's run searched (names, institutions, places, see
// parts.go), as Check does: a part of a run has only its patients' notes.
func (c *Checker) Across(s *Stream) { c.wide = s.e.wide }

// KeptForReview notes review items of the run (its plan's) that keep a
// value, as Add does, without counting them: a part's checker, whose
// plan's items the Checker that finishes the run counts.
func (c *Checker) KeptForReview(items []ReviewItem) {
	for _, it := range items {
		if it.Kept {
			c.keptForReview[checkAt{it.Doc, it.Start}] = true
		}
	}
}

// CheckState is what a part's Checker found (see NewPartChecker), written
// out for the Checker that finishes the run (Merge): the findings and
// counts, the values kept, each corpus-scope value with its surrogates and
// the name patterns. It names original values: it is as sensitive as the
// report.
type CheckState struct {
	Report       Report // the findings and counts so far; Inconsistent, Kept and NamePatterns are below
	Kept         []KeptValue
	Seen         []SeenValue
	SeenProblems []Inconsistency
	MapProblems  []Inconsistency
	OrigPatterns map[string]int
	SurPatterns  map[string]int
}

// SeenValue is one corpus-scope value and its folded surrogates.
type SeenValue struct {
	Key        [3]string // scope, type, folded original
	Surrogates []string
}

// State returns what a part's Checker found. It panics for a Checker
// NewPartChecker did not make, which cannot name its values.
func (c *Checker) State() CheckState {
	if c.seen.keys == nil {
		panic("surrogate: State of a Checker that keeps no keys (use NewPartChecker)")
	}
	st := CheckState{Report: *c.r, SeenProblems: c.seenProblems, MapProblems: c.mapProblems,
		OrigPatterns: c.origPatterns, SurPatterns: c.surPatterns}
	for k, n := range c.kept {
		st.Kept = append(st.Kept, KeptValue{k[0], k[1], n})
	}
	slices.SortFunc(st.Kept, func(a, b KeptValue) int { return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Value, b.Value)) })
	for h, sur := range c.seen.first {
		k := c.seen.keys[h]
		surs := []string{sur}
		if more := c.seen.more[k]; more != nil {
			surs = slices.Sorted(maps.Keys(more))
		}
		st.Seen = append(st.Seen, SeenValue{k, surs})
	}
	slices.SortFunc(st.Seen, func(a, b SeenValue) int { return slices.Compare(a.Key[:], b.Key[:]) })
	return st
}

// Merge adds what a part's Checker found (its State), as if its documents
// had been added here: parts merged in the run's document order give the
// report one Checker would.
func (c *Checker) Merge(st CheckState) {
	r, p := c.r, &st.Report
	r.Documents += p.Documents
	r.Spans += p.Spans
	r.Replaced += p.Replaced
	c.addStrategies(p.Strategies)
	r.DatesChecked += p.DatesChecked
	r.Review += p.Review
	r.Misaligned = append(r.Misaligned, p.Misaligned...)
	r.Leaks = append(r.Leaks, p.Leaks...)
	r.Unannotated = append(r.Unannotated, p.Unannotated...)
	r.Propagated = append(r.Propagated, p.Propagated...)
	r.Identifiers = append(r.Identifiers, p.Identifiers...)
	r.IntervalErrors = append(r.IntervalErrors, p.IntervalErrors...)
	r.EqualToOriginal = append(r.EqualToOriginal, p.EqualToOriginal...)
	r.Metadata = append(r.Metadata, p.Metadata...)
	r.Incoherent = append(r.Incoherent, p.Incoherent...)
	for _, k := range st.Kept {
		c.kept[[2]string{k.Type, k.Value}] += k.Count
	}
	for _, v := range st.Seen {
		for _, sur := range v.Surrogates {
			c.seen.add(v.Key, sur)
		}
	}
	c.seenProblems = append(c.seenProblems, st.SeenProblems...)
	c.mapProblems = append(c.mapProblems, st.MapProblems...)
	for p, n := range st.OrigPatterns {
		c.origPatterns[p] += n
	}
	for p, n := range st.SurPatterns {
		c.surPatterns[p] += n
	}
}

// Add checks one part of a run: res's documents against their originals in
// orig, with res's shifts, mappings and review items. A patient's documents,
// shift and patient-scope mappings come in one part; review items that keep
// a value come before or with the part of their document.
func (c *Checker) Add(orig []pipeline.Document, res *Result) {
	c.r.Documents += len(res.Docs)
	c.r.Review += len(res.Review)
	byID := make(map[string]*pipeline.Document, len(orig))
	for i := range orig {
		byID[orig[i].ID] = &orig[i]
	}
	c.KeptForReview(res.Review)
	shift := map[string]int{}
	for _, s := range res.Shifts {
		shift[s.Patient] = s.Days
	}
	// A patient's documents are checked together, patients on every core;
	// the findings are merged in document order.
	groups := patientGroups(byID, res.Docs)
	docs := make([]docCheck, len(res.Docs))
	pats := make([]patientCheck, len(groups))
	across := acrossCorpus{wide: c.wide, props: map[string][]Propagation{}}
	for _, p := range res.Propagated {
		across.props[p.Doc] = append(across.props[p.Doc], p)
	}
	parallel(len(groups), func(g int) {
		pats[g] = checkPatient(byID, res, groups[g], docs, c.pol, c.rd, shift, func(doc string, start int) bool {
			return c.keptForReview[checkAt{doc, start}]
		}, across)
	})
	for _, pc := range pats {
		c.addPatient(pc)
	}
	c.addDocuments(byID, res, docs)
	c.addMappings(res.Mappings)
}

// patientGroups returns the indexes of a run's documents by patient, in the
// order of each patient's first document; a document without its original
// (or whose original has another number of spans) is a group alone.
func patientGroups(byID map[string]*pipeline.Document, out []pipeline.Document) [][]int {
	var groups [][]int
	groupOf := map[string]int{}
	for di, d := range out {
		key := "\x00" + d.ID
		if o := byID[d.ID]; o != nil && len(o.Spans) == len(d.Spans) {
			key = patientOf(*o)
		}
		g, ok := groupOf[key]
		if !ok {
			g = len(groups)
			groupOf[key] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], di)
	}
	return groups
}

// addPatient adds what the check counted in one patient's documents: a
// patient-scope value with several surrogates is found here, a corpus-scope
// value's surrogates are kept until the report.
func (c *Checker) addPatient(pc patientCheck) {
	c.r.Spans += pc.spans
	c.r.Replaced += pc.replaced
	c.addStrategies(pc.strategies)
	c.r.DatesChecked += pc.datesChecked
	for k, n := range pc.kept {
		c.kept[k] += n
	}
	for k, v := range pc.seen {
		if k[0] != ScopeCorpus {
			if len(v) > 1 {
				c.seenProblems = append(c.seenProblems, inconsistency(k, v))
			}
			continue
		}
		for sur := range v {
			c.seen.add(k, sur)
		}
	}
	for _, p := range pc.origPatterns {
		c.origPatterns[p]++
	}
	for _, p := range pc.surPatterns {
		c.surPatterns[p]++
	}
}

// addStrategies adds counts of spans replaced by strategy.
func (c *Checker) addStrategies(counts map[string]int) {
	for st, n := range counts {
		if c.r.Strategies == nil {
			c.r.Strategies = map[string]int{}
		}
		c.r.Strategies[st] += n
	}
}

// addDocuments adds each document's findings to the report, in document
// order, an unannotated find with where it stands in the source.
func (c *Checker) addDocuments(byID map[string]*pipeline.Document, res *Result, docs []docCheck) {
	r := c.r
	props := map[string][]Propagation{}
	for _, p := range res.Propagated {
		props[p.Doc] = append(props[p.Doc], p)
	}
	for i, dc := range docs {
		d := res.Docs[i]
		if o := byID[d.ID]; o != nil {
			for k := range dc.finds.unannotated {
				l := &dc.finds.unannotated[k]
				l.SourceStart, l.SourceEnd = sourceOffset(*o, d, props[d.ID], l.Start), sourceOffset(*o, d, props[d.ID], l.End)
			}
		}
		r.Propagated = append(r.Propagated, props[d.ID]...)
		r.Misaligned = append(r.Misaligned, dc.misaligned...)
		r.EqualToOriginal = append(r.EqualToOriginal, dc.equal...)
		r.IntervalErrors = append(r.IntervalErrors, dc.interval...)
		r.Leaks = append(r.Leaks, dc.finds.leaks...)
		r.Unannotated = append(r.Unannotated, dc.finds.unannotated...)
		r.Identifiers = append(r.Identifiers, dc.finds.ids...)
		r.Metadata = append(r.Metadata, dc.metadata...)
		if o := byID[d.ID]; o != nil {
			r.Incoherent = append(r.Incoherent, c.coh.incoherences(*o, d)...)
		}
	}
}

// Report returns what the check found in every part added.
func (c *Checker) Report() *Report {
	r := *c.r
	r.Strategies = maps.Clone(c.r.Strategies)
	seen := append(slices.Clone(c.seenProblems), c.seen.inconsistencies()...)
	mapped := append(slices.Clone(c.mapProblems), c.corpusMaps.inconsistencies()...)
	for _, in := range [][]Inconsistency{seen, mapped} {
		slices.SortFunc(in, func(a, b Inconsistency) int {
			return cmp.Or(cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Type, b.Type), cmp.Compare(a.Original, b.Original))
		})
		r.Inconsistent = append(r.Inconsistent, in...)
	}
	for k, n := range c.kept {
		r.Kept = append(r.Kept, KeptValue{k[0], k[1], n})
	}
	sort.Slice(r.Kept, func(i, j int) bool {
		a, b := r.Kept[i], r.Kept[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Type+a.Value < b.Type+b.Value
	})
	r.NamePatterns = patternRows(c.origPatterns, c.surPatterns)
	return &r
}

// parallel calls fn(0) ... fn(n-1) on every core.
func parallel(n int, fn func(int)) {
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := min(runtime.GOMAXPROCS(0), n); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
