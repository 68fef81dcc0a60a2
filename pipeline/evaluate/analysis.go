package evaluate

import (
	"slices"
	"sort"
	"unicode"

	"deidcorpus/pipeline"
)

// Row and column names of the confusion matrix cells without a partner.
const (
	Missing  = "MISSING"  // a gold tag no system tag has the offsets of
	Spurious = "SPURIOUS" // a system tag no gold tag has the offsets of
)

// Confusion is a strict-entity confusion matrix over types (Yang &
// Garibaldi 2015, Table 8): Cells[i][j] counts gold tags of Types[i] that a
// system tag with the same offsets labels Types[j]. The extra last column is
// Missing (no system tag at those offsets) and the extra last row Spurious
// (system tags at offsets no gold tag has).
type Confusion struct {
	Types []string `json:"types"`
	Cells [][]int  `json:"cells"` // len(Types)+1 rows of len(Types)+1
}

// Error kinds of Yeniterzi et al. 2010 (Table 1), for a gold tag without an
// exact match.
const (
	Correct   = "correct"    // same offsets and type
	Missed    = "missed"     // no system tag overlaps it
	TagClash  = "tag-clash"  // same offsets, other type
	SpanClash = "span-clash" // overlapped by a tag of its type, offsets differ
	BothClash = "both-clash" // overlapped by tags of other types only, offsets differ
)

// ErrorCounts tallies gold tags by error kind and says how many errors expose
// PHI: leave at least one non-space character of the gold tag outside every
// system tag, whatever its type.
type ErrorCounts struct {
	Gold           int `json:"gold"`
	Correct        int `json:"correct"`
	Missed         int `json:"missed"`
	TagClash       int `json:"tag_clash"`
	SpanClash      int `json:"span_clash"`
	BothClash      int `json:"both_clash"`
	Exposed        int `json:"exposed"`         // errors that expose PHI
	ExposedMissed  int `json:"exposed_missed"`  // of which missed
	ExposedSpan    int `json:"exposed_span"`    // of which span-clash
	ExposedBoth    int `json:"exposed_both"`    // of which both-clash
	ExposedChars   int `json:"exposed_chars"`   // PHI characters left uncovered
	GoldChars      int `json:"gold_chars"`      // PHI characters in all gold tags
	ProtectedCount int `json:"protected_count"` // correct, plus errors that expose nothing
}

func (e *ErrorCounts) add(kind string, exposed, total int) {
	e.Gold++
	e.GoldChars += total
	e.ExposedChars += exposed
	switch kind {
	case Correct:
		e.Correct++
	case Missed:
		e.Missed++
	case TagClash:
		e.TagClash++
	case SpanClash:
		e.SpanClash++
	case BothClash:
		e.BothClash++
	}
	if exposed == 0 {
		e.ProtectedCount++
		return
	}
	e.Exposed++
	switch kind {
	case Missed:
		e.ExposedMissed++
	case SpanClash:
		e.ExposedSpan++
	case BothClash:
		e.ExposedBoth++
	}
}

// ErrorInstance is one gold tag scored as an error.
type ErrorInstance struct {
	Document     string `json:"document"`
	Start        int    `json:"start"`
	End          int    `json:"end"`
	Category     string `json:"category"`
	Type         string `json:"type"`
	Kind         string `json:"kind"`
	ExposedChars int    `json:"exposed_chars"`
}

// ErrorAnalysis is the error taxonomy and exposure of every gold tag.
type ErrorAnalysis struct {
	Total  ErrorCounts            `json:"total"`
	ByType map[string]ErrorCounts `json:"by_type"`
	Errors []ErrorInstance        `json:"errors"`
}

// TokenAccuracy counts every word of the notes (Unicode letter or digit
// runs), PHI or not, as Yeniterzi et al. do: a word is labelled with the
// type of a tag overlapping it, or O, and is correct when gold and system
// labels agree. LabelBlind compares PHI-or-not only.
type TokenAccuracy struct {
	Documents int     `json:"documents"` // documents with text
	Words     int     `json:"words"`
	Correct   int     `json:"correct"`
	Accuracy  float64 `json:"accuracy"`
	// LabelBlindCorrect words are PHI on both sides or on neither.
	LabelBlindCorrect int     `json:"label_blind_correct"`
	LabelBlind        float64 `json:"label_blind_accuracy"`
	// PHIWords and MaskedPHIWords give label-blind word recall; Exposure is
	// 1 minus it, the share of PHI words a system leaves unmasked (Yeniterzi
	// Table 4, last column).
	PHIWords       int     `json:"phi_words"`
	MaskedPHIWords int     `json:"masked_phi_words"`
	Exposure       float64 `json:"exposure"`
}

// Analyze computes the confusion matrix, the error taxonomy with exposure
// and token accuracy over the pairs, on the tags keep accepts (nil keeps
// all; system tags are filtered the same way).
func Analyze(pairs []Pair, typeOrder []string, keep func(pipeline.Span) bool) (Confusion, ErrorAnalysis, TokenAccuracy) {
	a := newAnalyzer(keep, true)
	a.add(pairs)
	return a.finish(typeOrder)
}

// analyzer accumulates Analyze's results over batches of pairs. Without
// instances it keeps the counts only, not each error's ErrorInstance.
type analyzer struct {
	keep      func(pipeline.Span) bool
	instances bool
	conf      *confusionBuilder
	ea        ErrorAnalysis
	acc       TokenAccuracy
}

func newAnalyzer(keep func(pipeline.Span) bool, instances bool) *analyzer {
	return &analyzer{keep: keep, instances: instances, conf: newConfusion(nil), ea: ErrorAnalysis{ByType: map[string]ErrorCounts{}}}
}

func (a *analyzer) add(pairs []Pair) {
	filter := func(spans []pipeline.Span) []pipeline.Span {
		out := make([]pipeline.Span, 0, len(spans))
		for _, s := range spans {
			if a.keep == nil || a.keep(s) {
				out = append(out, s)
			}
		}
		return out
	}
	for _, p := range pairs {
		gold, sys := uniqueSpans(filter(p.Gold.Spans)), uniqueSpans(filter(p.System.Spans))
		a.conf.addDocument(gold, sys)
		text := p.text()
		errorsOf(&a.ea, p.ID, gold, sys, text, a.instances)
		if text != "" {
			accuracyOf(&a.acc, gold, sys, text)
		}
	}
}

// finish gives the results with the confusion matrix's types in typeOrder
// (which lists every type met) and the error instances in document order.
func (a *analyzer) finish(typeOrder []string) (Confusion, ErrorAnalysis, TokenAccuracy) {
	acc := a.acc
	acc.Accuracy = ratio(acc.Correct, acc.Words)
	acc.LabelBlind = ratio(acc.LabelBlindCorrect, acc.Words)
	acc.Exposure = 1 - ratio(acc.MaskedPHIWords, acc.PHIWords)
	if acc.PHIWords == 0 {
		acc.Exposure = 0
	}
	// Batches may come in any order; a document's instances are in one.
	slices.SortStableFunc(a.ea.Errors, func(x, y ErrorInstance) int { return cmpString(x.Document, y.Document) })
	return a.conf.reorder(typeOrder).finish(), a.ea, acc
}

// uniqueSpans drops repeated (offsets, label) tags, as set-based scoring
// does, and sorts by offsets.
func uniqueSpans(spans []pipeline.Span) []pipeline.Span {
	slices.SortFunc(spans, func(a, b pipeline.Span) int {
		switch {
		case a.Start != b.Start:
			return a.Start - b.Start
		case a.End != b.End:
			return a.End - b.End
		case a.Category != b.Category:
			return cmpString(a.Category, b.Category)
		}
		return cmpString(a.Type, b.Type)
	})
	return slices.CompactFunc(spans, func(a, b pipeline.Span) bool {
		return a.Start == b.Start && a.End == b.End && a.Category == b.Category && a.Type == b.Type
	})
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type confusionBuilder struct {
	index map[string]int
	types []string
	cells map[[2]int]int
}

func newConfusion(order []string) *confusionBuilder {
	c := &confusionBuilder{index: map[string]int{}, cells: map[[2]int]int{}}
	for _, t := range order {
		c.typ(t)
	}
	return c
}

func (c *confusionBuilder) typ(t string) int {
	if i, ok := c.index[t]; ok {
		return i
	}
	c.index[t] = len(c.types)
	c.types = append(c.types, t)
	return c.index[t]
}

// addDocument pairs tags at identical offsets: same types first, the rest in
// type order; the leftovers are missing or spurious.
func (c *confusionBuilder) addDocument(gold, sys []pipeline.Span) {
	const none = -1
	type at struct{ start, end int }
	byOffsets := func(spans []pipeline.Span) map[at][]string {
		m := map[at][]string{}
		for _, s := range spans {
			k := at{s.Start, s.End}
			m[k] = append(m[k], s.Type)
		}
		return m
	}
	g, s := byOffsets(gold), byOffsets(sys)
	for k, gt := range g {
		st := append([]string(nil), s[k]...)
		var rest []string
		for _, t := range gt {
			if i := slices.Index(st, t); i >= 0 {
				c.cells[[2]int{c.typ(t), c.typ(t)}]++
				st = slices.Delete(st, i, i+1)
			} else {
				rest = append(rest, t)
			}
		}
		for i, t := range rest {
			col := none
			if i < len(st) {
				col = c.typ(st[i])
			}
			c.cells[[2]int{c.typ(t), col}]++
		}
		for i := len(rest); i < len(st); i++ {
			c.cells[[2]int{none, c.typ(st[i])}]++
		}
	}
	for k, st := range s {
		if _, ok := g[k]; !ok {
			for _, t := range st {
				c.cells[[2]int{none, c.typ(t)}]++
			}
		}
	}
}

// reorder is the same cells with the types in order first.
func (c *confusionBuilder) reorder(order []string) *confusionBuilder {
	out := newConfusion(order)
	for _, t := range c.types {
		out.typ(t) // any type order lacks, in the order met
	}
	name := func(i int) int {
		if i < 0 {
			return i
		}
		return out.typ(c.types[i])
	}
	for k, v := range c.cells {
		out.cells[[2]int{name(k[0]), name(k[1])}] += v
	}
	return out
}

func (c *confusionBuilder) finish() Confusion {
	n := len(c.types)
	out := Confusion{Types: c.types, Cells: make([][]int, n+1)}
	for i := range out.Cells {
		out.Cells[i] = make([]int, n+1)
	}
	for k, v := range c.cells {
		r, col := k[0], k[1]
		if r < 0 {
			r = n
		}
		if col < 0 {
			col = n
		}
		out.Cells[r][col] += v
	}
	return out
}

// errorsOf classifies each gold tag and measures what it exposes.
// Without instances only the counts are kept.
func errorsOf(ea *ErrorAnalysis, doc string, gold, sys []pipeline.Span, text string, instances bool) {
	var ix *pipeline.Index
	if text != "" {
		ix = pipeline.NewIndex(text)
	}
	cover := coverage(sys)
	for _, g := range gold {
		kind := Missed
		exact, sameType := false, false
		for _, s := range sys {
			if s.Start >= g.End {
				break // sorted by start
			}
			if s.End <= g.Start {
				continue
			}
			switch {
			case s.Start == g.Start && s.End == g.End && s.Type == g.Type:
				kind = Correct
			case s.Start == g.Start && s.End == g.End:
				exact = true
			case s.Type == g.Type:
				sameType = true
			}
			if kind == Correct {
				break
			}
		}
		if kind != Correct {
			switch {
			case exact:
				kind = TagClash
			case sameType:
				kind = SpanClash
			default:
				if overlapsOpen(g, sys) {
					kind = BothClash
				}
			}
		}
		exposed, total := uncovered(g, cover, ix)
		tc := ea.ByType[g.Type]
		tc.add(kind, exposed, total)
		ea.ByType[g.Type] = tc
		ea.Total.add(kind, exposed, total)
		if kind != Correct && instances {
			ea.Errors = append(ea.Errors, ErrorInstance{Document: doc, Start: g.Start, End: g.End, Category: g.Category, Type: g.Type, Kind: kind, ExposedChars: exposed})
		}
	}
}

func overlapsOpen(g pipeline.Span, sys []pipeline.Span) bool {
	for _, s := range sys {
		if s.Start < g.End && g.Start < s.End {
			return true
		}
	}
	return false
}

// coverage merges system tags into disjoint sorted intervals.
func coverage(sys []pipeline.Span) []offsets {
	var out []offsets
	for _, s := range sys { // sorted by start
		if n := len(out); n > 0 && s.Start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.End)
			continue
		}
		out = append(out, offsets{s.Start, s.End})
	}
	return out
}

// uncovered counts the characters of g outside every covering interval, and
// g's characters, skipping white space when the text is known (an uncovered
// space reveals nothing).
func uncovered(g pipeline.Span, cover []offsets, ix *pipeline.Index) (exposed, total int) {
	var runes []rune
	if ix != nil && g.Start >= 0 && g.End <= ix.Len() {
		runes = []rune(ix.Slice(g.Start, g.End))
	}
	i := sort.Search(len(cover), func(i int) bool { return cover[i].end > g.Start })
	for cp := g.Start; cp < g.End; cp++ {
		if runes != nil && unicode.IsSpace(runes[cp-g.Start]) {
			continue
		}
		total++
		for i < len(cover) && cover[i].end <= cp {
			i++
		}
		if i == len(cover) || cp < cover[i].start {
			exposed++
		}
	}
	return exposed, total
}

// accuracyOf labels every word of the text on both sides.
func accuracyOf(acc *TokenAccuracy, gold, sys []pipeline.Span, text string) {
	acc.Documents++
	cp, start, in := 0, 0, false
	gi, si := 0, 0
	label := func(spans []pipeline.Span, k *int, a, b int) string {
		for *k < len(spans) && spans[*k].End <= a {
			*k++
		}
		for j := *k; j < len(spans) && spans[j].Start < b; j++ {
			if spans[j].End > a {
				return spans[j].Type
			}
		}
		return ""
	}
	word := func(a, b int) {
		acc.Words++
		gl, sl := label(gold, &gi, a, b), label(sys, &si, a, b)
		if gl == sl {
			acc.Correct++
		}
		if (gl == "") == (sl == "") {
			acc.LabelBlindCorrect++
		}
		if gl != "" {
			acc.PHIWords++
			if sl != "" {
				acc.MaskedPHIWords++
			}
		}
	}
	for _, r := range text {
		alnum := unicode.IsLetter(r) || unicode.IsNumber(r)
		switch {
		case alnum && !in:
			in, start = true, cp
		case !alnum && in:
			in = false
			word(start, cp)
		}
		cp++
	}
	if in {
		word(start, cp)
	}
}
