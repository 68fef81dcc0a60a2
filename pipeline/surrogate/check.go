package surrogate

import (
	"cmp"
	"encoding/json"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/stats"
)

// Report is what Check found. A clean run has no Misaligned, Leaks,
// Identifiers, Inconsistent, IntervalErrors or EqualToOriginal; Unannotated
// and Kept are listed for a person to read.
type Report struct {
	Documents int `json:"documents"`
	Spans     int `json:"spans"`
	Replaced  int `json:"replaced"` // spans whose text changed

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
	Review   int               `json:"review"` // items the run listed for review
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
	p.Metadata = orEmpty(p.Metadata)
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
}

// surrogateSets are the folded surrogates of each (scope, type, folded
// original) of a corpus scope: one per corpus value of a run, kept by the
// key's hash (keyHash), so a value with one surrogate, as every value of a
// consistent run has, costs its surrogate and a number. Two keys with one
// hash and different surrogates would be reported as one inconsistent
// value, never hide one (about one run in six million at 2.5 million
// values).
type surrogateSets struct {
	first map[uint64]string
	more  map[[3]string]map[string]bool // the values with a second surrogate
	keys  map[uint64][3]string          // each hash's key, kept only for State
}

func newSurrogateSets() surrogateSets {
	return surrogateSets{first: map[uint64]string{}, more: map[[3]string]map[string]bool{}}
}

func (s surrogateSets) add(k [3]string, sur string) {
	var arr [128]byte
	h := keyHash(append(append(append(append(append(arr[:0], k[0]...), 0), k[1]...), 0), k[2]...))
	first, ok := s.first[h]
	switch {
	case !ok:
		s.first[h] = sur
		if s.keys != nil {
			s.keys[h] = k
		}
	case first != sur:
		if s.more[k] == nil {
			s.more[k] = map[string]bool{first: true}
		}
		s.more[k][sur] = true
	}
}

// inconsistencies lists the values with more than one surrogate, sorted.
func (s surrogateSets) inconsistencies() []Inconsistency {
	var out []Inconsistency
	for _, k := range inconsistentKeys(s.more) {
		out = append(out, inconsistency(k, s.more[k]))
	}
	return out
}

type checkAt struct {
	doc   string
	start int
}

// NewChecker starts a check of a run under its policy, in the language its
// result names.
func NewChecker(pol *Policy, language string) *Checker {
	return &Checker{pol: pol, rd: readingFor(pol, language), r: &Report{}, keptForReview: map[checkAt]bool{},
		kept: map[[2]string]int{}, seen: newSurrogateSets(), corpusMaps: newSurrogateSets(),
		origPatterns: map[string]int{}, surPatterns: map[string]int{}}
}

// NewPartChecker is NewChecker for one part of a run checked in a process
// of its own: it also keeps each corpus-scope value's key, so that its
// State can be merged into the Checker that finishes the run.
func NewPartChecker(pol *Policy, language string) *Checker {
	c := NewChecker(pol, language)
	c.seen.keys = map[uint64][3]string{}
	return c
}

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
	r, pol, rd := c.r, c.pol, c.rd
	r.Documents += len(res.Docs)
	r.Review += len(res.Review)
	byID := make(map[string]*pipeline.Document, len(orig))
	for i := range orig {
		byID[orig[i].ID] = &orig[i]
	}
	for _, it := range res.Review {
		if it.Kept {
			c.keptForReview[checkAt{it.Doc, it.Start}] = true
		}
	}
	shift := map[string]int{}
	for _, s := range res.Shifts {
		shift[s.Patient] = s.Days
	}

	// A patient's documents are checked together, patients on every core;
	// the findings are merged in document order.
	var groups [][]int // indices into res.Docs
	groupOf := map[string]int{}
	for di, d := range res.Docs {
		key := "\x00" + d.ID // a document without its original is checked alone
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
	docs := make([]docCheck, len(res.Docs))
	pats := make([]patientCheck, len(groups))
	parallel(len(groups), func(g int) {
		pats[g] = checkPatient(byID, res, groups[g], docs, pol, rd, shift, func(doc string, start int) bool {
			return c.keptForReview[checkAt{doc, start}]
		})
	})
	for _, pc := range pats {
		r.Spans += pc.spans
		r.Replaced += pc.replaced
		r.DatesChecked += pc.datesChecked
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
	}
	byMap := map[[3]string]map[string]bool{}
	for _, m := range res.Mappings {
		k := [3]string{m.Scope, m.Type, fold(m.Original)}
		if m.Scope == ScopeCorpus {
			c.corpusMaps.add(k, fold(m.Surrogate))
			continue
		}
		if byMap[k] == nil {
			byMap[k] = map[string]bool{}
		}
		byMap[k][fold(m.Surrogate)] = true
	}
	for _, k := range inconsistentKeys(byMap) {
		c.mapProblems = append(c.mapProblems, inconsistency(k, byMap[k]))
	}
}

// Report returns what the check found in every part added.
func (c *Checker) Report() *Report {
	r := *c.r
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

// inconsistency lists the surrogates of one original, sorted.
func inconsistency(k [3]string, surrogates map[string]bool) Inconsistency {
	return Inconsistency{k[0], k[1], k[2], slices.Sorted(maps.Keys(surrogates))}
}

// inconsistentKeys returns, sorted, the keys with more than one surrogate.
func inconsistentKeys(m map[[3]string]map[string]bool) [][3]string {
	var keys [][3]string
	for k, v := range m {
		if len(v) > 1 {
			keys = append(keys, k)
		}
	}
	return sortKeys3(keys)
}

func sortKeys3(keys [][3]string) [][3]string {
	slices.SortFunc(keys, func(a, b [3]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]), cmp.Compare(a[2], b[2]))
	})
	return keys
}

// docCheck is what the check found in one document.
type docCheck struct {
	misaligned []SpanProblem
	equal      []SurrogateProblem
	interval   []SurrogateProblem
	finds      docFinds
	metadata   []MetadataProblem
}

// patientCheck is what the check counted in one patient's documents.
type patientCheck struct {
	spans, replaced, datesChecked int
	kept                          map[[2]string]int
	seen                          map[[3]string]map[string]bool // scope, type, folded original -> folded surrogates
	origPatterns, surPatterns     []string                      // of each name span
}

// checkPatient checks the documents idx of res, one patient's (or one
// document without its original), writing each document's findings to docs.
func checkPatient(byID map[string]*pipeline.Document, res *Result, idx []int, docs []docCheck, pol *Policy, rd dateReading,
	shift map[string]int, keptForReview func(doc string, start int) bool) patientCheck {
	pc := patientCheck{kept: map[[2]string]int{}, seen: map[[3]string]map[string]bool{}}
	type pair struct{ o, s pipeline.Span }
	pairs := make([][]pair, len(idx))
	replaced := newValueSet() // the patient's replaced originals
	keptBy := newValueSet()   // values kept somewhere in their records
	// The documents checked (those with their original), and their ids.
	checked := make([]bool, len(idx))
	var docIDs []string
	p, scope := "", ""
	for n, di := range idx {
		d := res.Docs[di]
		dc := &docs[di]
		ix := pipeline.NewIndex(d.Text)
		for _, s := range d.Spans {
			if s.Start < 0 || s.End > ix.Len() || s.Start > s.End || ix.Slice(s.Start, s.End) != s.Text {
				got := ""
				if s.Start >= 0 && s.End <= ix.Len() && s.Start <= s.End {
					got = ix.Slice(s.Start, s.End)
				}
				dc.misaligned = append(dc.misaligned, SpanProblem{Doc: d.ID, Start: s.Start, End: s.End, Type: s.Type, Text: s.Text, AtOffsets: got})
			}
		}
		o := byID[d.ID]
		if o == nil || len(o.Spans) != len(d.Spans) {
			dc.misaligned = append(dc.misaligned, SpanProblem{Doc: d.ID, AtOffsets: "no original document with as many spans"})
			continue
		}
		if p == "" {
			p = patientOf(*o)
			scope = PatientScope(p)
		}
		checked[n] = true
		docIDs = append(docIDs, d.ID)
		for i, os := range o.Spans {
			ss := d.Spans[i]
			pairs[n] = append(pairs[n], pair{os, ss})
			pc.spans++
			rule := pol.Rule(os.Category, os.Type)
			if os.Text == ss.Text && (rule.Strategy == Keep || rule.Strategy == Age || rule.Strategy == DepartmentS ||
				keptForReview(d.ID, os.Start)) {
				pc.kept[[2]string{os.Type, os.Text}]++
				keptBy.add(os.Text)
				continue
			}
			if os.Text != ss.Text {
				pc.replaced++
			}
			// HIPAA counts ages of 90 and over only: a younger original age
			// (replaced because the patient's ages moved) identifies no one.
			if n, _, _, ok := ageYears(os.Text); rule.Strategy == Age && (!ok || n <= 90) {
				pc.kept[[2]string{os.Type, os.Text}]++
				keptBy.add(os.Text)
				continue
			}
			// A weekday, month or season alone names one of a handful of
			// values: it identifies no one, and the shifted value often equals
			// another of the patient's originals. Its shift is still checked
			// below; it is neither a leak nor a surrogate equal to an original.
			if rule.Strategy == DateShift && vague(os.Text, rd) {
				continue
			}
			replaced.addTyped(os.Text, os.Type)
			if rule.Strategy == Name {
				for _, part := range nameParts(os.Text, rd.lang) {
					replaced.addTyped(part, os.Type)
				}
			}
			sc := ScopeCorpus
			if rule.Scope == ScopePatient || patientOnly[rule.Strategy] {
				sc = scope
			}
			k := [3]string{sc, os.Type, fold(os.Text)}
			if pc.seen[k] == nil {
				pc.seen[k] = map[string]bool{}
			}
			pc.seen[k][fold(ss.Text)] = true
			if rule.Strategy == Name {
				pc.origPatterns = append(pc.origPatterns, stats.NamePattern(os.Text))
				pc.surPatterns = append(pc.surPatterns, stats.NamePattern(ss.Text))
			}
		}
	}
	for n, di := range idx {
		d := res.Docs[di]
		for _, pr := range pairs[n] {
			rule := pol.Rule(pr.o.Category, pr.o.Type)
			if pr.o.Text != pr.s.Text && replaced.has(pr.s.Text) {
				docs[di].equal = append(docs[di].equal, SurrogateProblem{p, d.ID, pr.o.Type, pr.o.Text, pr.s.Text, ""})
			}
			if rule.Strategy == DateShift {
				if od, ok := parseDate(pr.o.Text, rd); ok {
					if want := od.shifted(shift[p]); want != pr.s.Text {
						docs[di].interval = append(docs[di].interval, SurrogateProblem{p, d.ID, pr.o.Type, pr.o.Text, pr.s.Text, want})
					} else {
						pc.datesChecked++
					}
				}
			}
		}
	}
	// A value kept in one span of a patient's records (an age under 90, a
	// mislabelled OTHER) is in the output by the policy's choice: it is listed
	// as kept, not counted as a leak where another span replaced it.
	for v := range keptBy.m {
		delete(replaced.m, v)
	}
	days, shifted := shift[p]
	for n, di := range idx {
		if checked[n] {
			d := res.Docs[di]
			docs[di].metadata = checkMetadata(p, *byID[d.ID], d, replaced, days, shifted, pol)
		}
	}
	ids := patientIDs(p, docIDs)
	for n, di := range idx {
		leaks := len(replaced.m) > 0 // a note without spans is searched too: its text is all copied
		if !checked[n] || !leaks && len(ids.ids) == 0 {
			continue
		}
		d := res.Docs[di]
		toks, folded := scanTokens(d.Text)
		if leaks {
			docs[di].finds = scan(p, d, toks, folded, replaced, pol)
		}
		docs[di].finds.ids = scanIDs(p, d, byID[d.ID], toks, folded, ids)
	}
	return pc
}

// nameParts are the runs of two or more words of a name, from one name word
// to another, short of the whole name ("García López" and "Juan García" of
// "Dr. Juan García López"): a name is also written without its first name
// or its second surname, and such a copy is still the person's.
func nameParts(name, lang string) []string {
	ws := splitName(name, lang)
	var at []int // the name words' indexes in ws
	for i, w := range ws {
		if w.role != roleLiteral && w.role != roleInitial {
			at = append(at, i)
		}
	}
	var out []string
	for a := range at {
		for b := a + 1; b < len(at); b++ {
			if a == 0 && b == len(at)-1 {
				continue // the whole name
			}
			var part strings.Builder
			for _, w := range ws[at[a] : at[b]+1] {
				part.WriteString(w.text)
			}
			out = append(out, part.String())
		}
	}
	return out
}

func patternRows(orig, sur map[string]int) []PatternRow {
	pairs := stats.ComparePatterns(stats.PatternCounts(orig), stats.PatternCounts(sur))
	out := make([]PatternRow, len(pairs))
	for i, p := range pairs {
		out[i] = PatternRow{Pattern: p.Pattern, Tokens: p.Tokens, Original: p.A, Surrogate: p.B}
	}
	return out
}

// sourceOffset is the code point of the source document at which text
// copied unchanged into its surrogate, at code point at, stands: at moved
// back by what the surrogates before it added, the spans' and those of the
// occurrences propagated into the document. The spans of both are in the
// same order (resynthesis re-aligns them one for one).
func sourceOffset(orig, sur pipeline.Document, props []Propagation, at int) int {
	if len(orig.Spans) != len(sur.Spans) {
		return at
	}
	moved := 0
	for k, s := range sur.Spans {
		if s.End <= at {
			o := orig.Spans[k]
			moved += (o.End - o.Start) - (s.End - s.Start)
		}
	}
	for _, p := range props {
		if p.End <= at {
			moved += (p.SourceEnd - p.SourceStart) - (p.End - p.Start)
		}
	}
	return at + moved
}

// docFinds are one document's finds.
type docFinds struct {
	leaks, unannotated []Leak
	ids                []IdentifierLeak
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

// scanToken is a token of a scanned document: its bytes in the text, then in
// the folded buffer.
type scanToken struct{ start, end, fs, fe int }

// scanTokens returns the tokens of a document's text (the runs of letters
// and digits that tokens splits a value into), folded into one buffer.
func scanTokens(text string) ([]scanToken, []byte) {
	var toks []scanToken
	folded := make([]byte, 0, len(text))
	start := -1
	for i, r := range text {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if alnum && start < 0 {
			start = i
		} else if !alnum && start >= 0 {
			fs := len(folded)
			folded = appendFold(folded, text[start:i])
			toks = append(toks, scanToken{start, i, fs, len(folded)})
			start = -1
		}
	}
	if start >= 0 {
		fs := len(folded)
		folded = appendFold(folded, text[start:])
		toks = append(toks, scanToken{start, len(text), fs, len(folded)})
	}
	return toks, folded
}

// scan looks for the patient's replaced values in one output document, whose
// tokens scanTokens returned. A single letter alone (an initial) is not
// searched: it occurs everywhere and identifies no one.
func scan(patient string, d pipeline.Document, toks []scanToken, folded []byte, vals *valueSet, pol *Policy) docFinds {
	var out docFinds
	if vals == nil || len(vals.m) == 0 {
		return out
	}
	var ix *pipeline.Index
	var spans [][2]int
	var arr [256]byte
	buf := arr[:0]
	for i := range toks {
		buf = valuesAt(toks, folded, i, vals, buf, func(j int, key []byte) bool {
			v := string(key)
			if j == i && (utf8.RuneCountInString(v) < 2 || vals.abbreviation(v, d.Text[toks[i].start:toks[i].end])) {
				return true
			}
			if ix == nil {
				ix = pipeline.NewIndex(d.Text)
				spans = make([][2]int, len(d.Spans))
				for k, s := range d.Spans {
					spans[k] = [2]int{ix.Byte(s.Start), ix.Byte(s.End)}
				}
			}
			bs, be := toks[i].start, toks[j].end
			l := Leak{Patient: patient, Doc: d.ID, Value: d.Text[bs:be], Start: ix.CodePoint(bs), End: ix.CodePoint(be)}
			touched := 0 // the spans the find overlaps
			for k, s := range spans {
				if bs < s[1] && s[0] < be {
					touched++
					l.Type = d.Spans[k].Type
				}
			}
			if touched > 1 && joinsSurrogates(toks[i:j+1], spans) {
				return true
			}
			if touched > 0 {
				out.leaks = append(out.leaks, l)
			} else if l.Type = vals.typ[v]; spelled(vals, v, l.Type, d.Text, bs, be, pol) {
				out.unannotated = append(out.unannotated, l)
			}
			return true
		})
	}
	return out
}

// joinsSurrogates reports whether every token of a find lies inside one of
// the spans and they are not all in one: the end of one surrogate and the
// start of the next, joined by what separates them ("HOSPITAL-1    12/08"
// reads "1 12"). Such a find is a coincidence of two surrogates, not a copy:
// a copied value lies in one span, or reaches text outside the spans.
func joinsSurrogates(toks []scanToken, spans [][2]int) bool {
	in := -1
	for _, t := range toks {
		k := slices.IndexFunc(spans, func(s [2]int) bool { return s[0] <= t.start && t.end <= s[1] })
		if k < 0 {
			return false
		}
		if in >= 0 && k != in {
			return true
		}
		in = k
	}
	return false
}

// idSet is the identifiers searched in one patient's records: each as its
// folded token sequence (see tokens), with the proper prefixes of the longer
// ones, at which a scan extends a sequence.
type idSet struct {
	ids     map[string]idOf
	prefix  map[string]bool
	longest int // tokens
	// The first bytes and the lengths (up to 63) of the ids' first tokens:
	// most tokens of a text begin none, and are passed without a lookup.
	firstByte [256]bool
	firstLen  uint64
}

// idOf is what a sequence of an idSet is the identifier of.
type idOf struct{ kind, id string }

// patientIDs returns the identifiers searched in the text of a patient's
// documents: each of their ids, the part of a document id after the
// patient's id and a separator ("07" of "100234-07"), and the patient's id;
// those of them that are distinctive (distinctiveID). An id that is both a
// document's and its patient's (a document without a patient is its own
// patient) is a document id. A find is the id as whole tokens, so "1002"
// is not found in "10023", and separators are not compared ("100234-07" is
// found written "100234 07"); an id glued to a word ("MRN100234") is not
// found.
func patientIDs(patient string, docs []string) idSet {
	s := idSet{ids: map[string]idOf{}, prefix: map[string]bool{}}
	pt := tokens(patient)
	for _, id := range docs {
		t := tokens(id)
		s.add(t, DocumentIDKind, id)
		if len(pt) > 0 && len(t) > len(pt) && slices.Equal(t[:len(pt)], pt) {
			s.add(t[len(pt):], DocumentIDKind, id)
		}
	}
	s.add(pt, PatientIDKind, patient)
	return s
}

func (s *idSet) add(t []string, kind, id string) {
	if !distinctiveID(t) {
		return
	}
	k := strings.Join(t, " ")
	if _, ok := s.ids[k]; ok {
		return
	}
	s.ids[k] = idOf{kind, id}
	s.longest = max(s.longest, len(t))
	s.firstByte[t[0][0]] = true
	s.firstLen |= 1 << min(len(t[0]), 63)
	for i, n := 0, 0; i < len(t)-1; i++ {
		n += len(t[i])
		s.prefix[k[:n]] = true
		n++ // the space
	}
}

// distinctiveID reports whether an identifier (its tokens) is searched in
// the text: one that is a number needs five digits or more (shorter numbers
// are ages, doses, years, times, room and list numbers); one with letters
// needs a digit, and three or more ("record-318", "A1234"): letters alone
// are a word or a name (names are spans, and the leak check's), and a word
// with a small number is ordinary text ("note 1", "day 12", "SpO2"). So an
// id searched has four letters and digits or more. Separators do not count.
func distinctiveID(t []string) bool {
	letters, digits := 0, 0
	for _, w := range t {
		for _, r := range w {
			if unicode.IsDigit(r) {
				digits++
			} else {
				letters++
			}
		}
	}
	switch {
	case digits == 0:
		return false
	case letters == 0:
		return digits >= 5
	}
	return digits >= 3
}

// scanIDs looks for a patient's identifiers in one of their output
// documents, d, whose original is o and whose tokens scanTokens returned.
// Where several ids begin at a token, the longest is the find ("100234-07",
// not the patient's "100234" in it), and the scan goes on after it. A find
// that lies in surrogates alone (spans whose text the run replaced) is left:
// the run drew them without regard to the source's ids, and one that spells
// an id is a coincidence, not a copy (a shifted date "2075-03-18" spells the
// note "2075-03"); text copied from the source, kept spans included, is the
// source's.
func scanIDs(patient string, d pipeline.Document, o *pipeline.Document, toks []scanToken, folded []byte, ids idSet) []IdentifierLeak {
	if len(ids.ids) == 0 {
		return nil
	}
	var out []IdentifierLeak
	var ix *pipeline.Index
	var surrogates [][2]int // the bytes of the spans replaced
	var arr [128]byte
	for i := 0; i < len(toks); i++ {
		if first := folded[toks[i].fs:toks[i].fe]; len(first) == 0 || !ids.firstByte[first[0]] || ids.firstLen&(1<<min(len(first), 63)) == 0 {
			continue
		}
		buf := arr[:0]
		end, of := -1, idOf{}
		for j := i; j < len(toks) && j-i < ids.longest; j++ {
			if j > i {
				buf = append(buf, ' ')
			}
			buf = append(buf, folded[toks[j].fs:toks[j].fe]...)
			if hit, ok := ids.ids[string(buf)]; ok {
				end, of = j, hit
			}
			if !ids.prefix[string(buf)] {
				break
			}
		}
		if end < 0 {
			continue
		}
		if ix == nil {
			ix = pipeline.NewIndex(d.Text)
			for k, s := range d.Spans {
				if s.Text != o.Spans[k].Text && 0 <= s.Start && s.Start <= s.End && s.End <= ix.Len() {
					surrogates = append(surrogates, [2]int{ix.Byte(s.Start), ix.Byte(s.End)})
				}
			}
		}
		if inSurrogates(toks[i:end+1], surrogates) {
			continue // a find from a later token may reach copied text
		}
		bs, be := toks[i].start, toks[end].end
		out = append(out, IdentifierLeak{Patient: patient, Doc: d.ID, Kind: of.kind, ID: of.id, Value: d.Text[bs:be],
			Start: ix.CodePoint(bs), End: ix.CodePoint(be)})
		i = end
	}
	return out
}

// inSurrogates reports whether every token lies in one of the spans.
func inSurrogates(toks []scanToken, spans [][2]int) bool {
	for _, t := range toks {
		if !slices.ContainsFunc(spans, func(s [2]int) bool { return s[0] <= t.start && t.end <= s[1] }) {
			return false
		}
	}
	return true
}

// spelled reports whether a find in text copied from the original is the
// value rather than an ordinary word or number that spells it: a surname
// "White" written "white" ("white matter"), the state "CT" or "PA" outside an
// address ("CT HEAD", "CHEST, PA AND LATERAL"), an age of 95 that is a
// saturation ("SpO2 95%"), a date "3/2" that is a list's "3" and "2" on two
// lines. Finds that touch a surrogate are leaks and are never judged so.
func spelled(vals *valueSet, v, typ, text string, bs, be int, pol *Policy) bool {
	w := text[bs:be]
	if !vals.lower[v] && strings.ContainsFunc(w, unicode.IsLetter) && !strings.ContainsFunc(w, unicode.IsUpper) {
		return false
	}
	if !strings.Contains(v, " ") && vals.exact[strings.ToUpper(v)] && len(v) <= 3 {
		// A state or country abbreviation: after "City, " and before no
		// word, or before a ZIP code.
		prev := strings.TrimRight(text[:bs], " \t")
		next := nextWord(text[be:])
		return strings.HasSuffix(prev, ",") && !isLetters(next) || len(next) == 5 && isDigits(next)
	}
	if isDigits(strings.ReplaceAll(v, " ", "")) {
		if strings.ContainsAny(w, "\n\r") {
			return false
		}
		if pol.Rule("", typ).Strategy == Age {
			// An age is a number of years: "95 yo", "95-year-old", "aged 95".
			next := fold(nextWord(text[be:]))
			prevWords := strings.Fields(fold(text[max(0, bs-12):bs]))
			prev := ""
			if len(prevWords) > 0 {
				prev = strings.Trim(prevWords[len(prevWords)-1], ":")
			}
			return strings.HasPrefix(next, "y") || strings.HasPrefix(next, "ano") || strings.HasPrefix(next, "a") && len(next) == 1 ||
				prev == "age" || prev == "aged" || prev == "edad"
		}
	}
	return true
}

// nextWord returns the run of letters or digits after spaces and hyphens at
// the start of s.
func nextWord(s string) string {
	s = strings.TrimLeft(s, " \t-")
	end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if end < 0 {
		end = len(s)
	}
	return s[:end]
}

// vague reports a date without day and year: a weekday, month or season alone.
func vague(text string, rd dateReading) bool {
	d, ok := parseDate(text, rd)
	return ok && !d.hasY && !d.hasD && !d.hasDecade
}
