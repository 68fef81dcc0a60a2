package surrogate

import (
	"cmp"
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
// Inconsistent, IntervalErrors or EqualToOriginal; Unannotated and Kept are
// listed for a person to read.
type Report struct {
	Documents int
	Spans     int
	Replaced  int // spans whose text changed

	Misaligned []SpanProblem // a span's Text differs from the text at its offsets
	// Leaks are replaced original values found in the output, as whole token
	// sequences, in the records of their patient, where they touch surrogate text.
	Leaks []Leak
	// Unannotated are the same finds in text copied unchanged from the
	// original: the value was written there without a span (an annotation gap).
	Unannotated []Leak
	Kept        []KeptValue // values the policy keeps (ages under 90, OTHER), with counts
	// Inconsistent are originals replaced by more than one surrogate in a scope.
	Inconsistent []Inconsistency
	// IntervalErrors are shifted dates that are not the original moved by the
	// patient's shift (so an interval between two dates changed).
	IntervalErrors  []SurrogateProblem
	DatesChecked    int                // shifted dates whose interval to every other was verified
	EqualToOriginal []SurrogateProblem // a surrogate equal to an original value of its patient
	NamePatterns    []PatternRow       // Yeniterzi et al. Table 7, original beside surrogate
	Review          int                // items the run listed for review
}

// OK reports whether the output passed every check.
func (r *Report) OK() bool {
	return len(r.Misaligned) == 0 && len(r.Leaks) == 0 && len(r.Inconsistent) == 0 &&
		len(r.IntervalErrors) == 0 && len(r.EqualToOriginal) == 0
}

// SpanProblem is a span whose text is not the document's text at its offsets.
type SpanProblem struct {
	Doc       string
	Span      pipeline.Span
	AtOffsets string
}

// Leak is an original value found in the output.
type Leak struct {
	Patient, Doc, Type, Value string
	Start, End                int // code points in the output document
}

// KeptValue is a value left in place, with how often.
type KeptValue struct {
	Type, Value string
	Count       int
}

// Inconsistency is one original with several surrogates in one scope.
type Inconsistency struct {
	Scope, Type, Original string
	Surrogates            []string
}

// SurrogateProblem is one replaced span at fault.
type SurrogateProblem struct {
	Patient, Doc, Type, Original, Surrogate, Want string
}

// PatternRow is one name pattern's count in the original and the surrogate corpus.
type PatternRow struct {
	Pattern             string
	Tokens              int
	Original, Surrogate int
}

// Check compares the original documents with a run's result under the policy
// the run used. It is pure and independent of how the run made its choices.
func Check(orig []pipeline.Document, res *Result, pol *Policy) *Report {
	r := &Report{Documents: len(res.Docs), Review: len(res.Review)}
	byID := make(map[string]*pipeline.Document, len(orig))
	for i := range orig {
		byID[orig[i].ID] = &orig[i]
	}
	type at struct {
		doc   string
		start int
	}
	keptForReview := map[at]bool{}
	for _, it := range res.Review {
		if it.Kept {
			keptForReview[at{it.Doc, it.Start}] = true
		}
	}
	shift := map[string]int{}
	for _, s := range res.Shifts {
		shift[s.Patient] = s.Days
	}
	dmy := pol.DateOrder == "DMY" || pol.DateOrder == "auto" && res.Language == "es"

	type pair struct{ o, s pipeline.Span }
	replaced := map[string]*valueSet{} // patient -> replaced originals
	keptBy := map[string]*valueSet{}   // patient -> values kept somewhere in their records
	kept := map[[2]string]int{}
	seen := map[[3]string]map[string]bool{}
	var origNames, surNames []string
	pairs := make([][]pair, len(res.Docs))
	for di, d := range res.Docs {
		ix := pipeline.NewIndex(d.Text)
		for _, s := range d.Spans {
			if s.Start < 0 || s.End > ix.Len() || s.Start > s.End || ix.Slice(s.Start, s.End) != s.Text {
				got := ""
				if s.Start >= 0 && s.End <= ix.Len() && s.Start <= s.End {
					got = ix.Slice(s.Start, s.End)
				}
				r.Misaligned = append(r.Misaligned, SpanProblem{d.ID, s, got})
			}
		}
		o := byID[d.ID]
		if o == nil || len(o.Spans) != len(d.Spans) {
			r.Misaligned = append(r.Misaligned, SpanProblem{Doc: d.ID, AtOffsets: "no original document with as many spans"})
			continue
		}
		p := patientOf(*o)
		if replaced[p] == nil {
			replaced[p], keptBy[p] = newValueSet(), newValueSet()
		}
		for i, os := range o.Spans {
			ss := d.Spans[i]
			pairs[di] = append(pairs[di], pair{os, ss})
			r.Spans++
			rule := pol.Rule(os.Category, os.Type)
			if os.Text == ss.Text && (rule.Strategy == Keep || rule.Strategy == Age || rule.Strategy == DepartmentS ||
				keptForReview[at{d.ID, os.Start}]) {
				kept[[2]string{os.Type, os.Text}]++
				keptBy[p].add(os.Text)
				continue
			}
			if os.Text != ss.Text {
				r.Replaced++
			}
			// HIPAA counts ages of 90 and over only: a younger original age
			// (replaced because the patient's ages moved) identifies no one.
			if n, _, _, ok := ageYears(os.Text); rule.Strategy == Age && (!ok || n <= 90) {
				kept[[2]string{os.Type, os.Text}]++
				keptBy[p].add(os.Text)
				continue
			}
			// A weekday, month or season alone names one of a handful of
			// values: it identifies no one, and the shifted value often equals
			// another of the patient's originals. Its shift is still checked
			// below; it is neither a leak nor a surrogate equal to an original.
			if rule.Strategy == DateShift && vague(os.Text, dmy) {
				continue
			}
			replaced[p].addTyped(os.Text, os.Type)
			scope := ScopeCorpus
			if rule.Scope == ScopePatient || patientOnly[rule.Strategy] {
				scope = PatientScope(p)
			}
			k := [3]string{scope, os.Type, fold(os.Text)}
			if seen[k] == nil {
				seen[k] = map[string]bool{}
			}
			seen[k][fold(ss.Text)] = true
			if rule.Strategy == Name {
				origNames = append(origNames, os.Text)
				surNames = append(surNames, ss.Text)
			}
		}
	}
	for di, d := range res.Docs {
		o := byID[d.ID]
		if o == nil || len(pairs[di]) == 0 {
			continue
		}
		p := patientOf(*o)
		for _, pr := range pairs[di] {
			rule := pol.Rule(pr.o.Category, pr.o.Type)
			if pr.o.Text != pr.s.Text && replaced[p].has(pr.s.Text) {
				r.EqualToOriginal = append(r.EqualToOriginal, SurrogateProblem{p, d.ID, pr.o.Type, pr.o.Text, pr.s.Text, ""})
			}
			if rule.Strategy == DateShift {
				if od, ok := parseDate(pr.o.Text, dmy); ok {
					if want := od.shifted(shift[p]); want != pr.s.Text {
						r.IntervalErrors = append(r.IntervalErrors, SurrogateProblem{p, d.ID, pr.o.Type, pr.o.Text, pr.s.Text, want})
					} else {
						r.DatesChecked++
					}
				}
			}
		}
	}
	// A value kept in one span of a patient's records (an age under 90, a
	// mislabelled OTHER) is in the output by the policy's choice: it is listed
	// as kept, not counted as a leak where another span replaced it.
	for p, kv := range keptBy {
		for v := range kv.m {
			delete(replaced[p].m, v)
		}
	}
	// The scan reads every output document: documents are independent, so
	// it runs on every core, and the finds are merged in document order.
	finds := make([]docFinds, len(res.Docs))
	parallel(len(res.Docs), func(di int) {
		d := res.Docs[di]
		if o := byID[d.ID]; o != nil && len(pairs[di]) > 0 {
			p := patientOf(*o)
			finds[di] = scan(p, d, replaced[p], pol)
		}
	})
	for _, f := range finds {
		r.Leaks = append(r.Leaks, f.leaks...)
		r.Unannotated = append(r.Unannotated, f.unannotated...)
	}
	for _, k := range inconsistentKeys(seen) {
		if len(seen[k]) > 1 {
			var s []string
			for v := range seen[k] {
				s = append(s, v)
			}
			sort.Strings(s)
			r.Inconsistent = append(r.Inconsistent, Inconsistency{k[0], k[1], k[2], s})
		}
	}
	byMap := map[[3]string]map[string]bool{}
	for _, m := range res.Mappings {
		k := [3]string{m.Scope, m.Type, fold(m.Original)}
		if byMap[k] == nil {
			byMap[k] = map[string]bool{}
		}
		byMap[k][fold(m.Surrogate)] = true
	}
	for _, k := range inconsistentKeys(byMap) {
		if len(byMap[k]) > 1 {
			var s []string
			for v := range byMap[k] {
				s = append(s, v)
			}
			sort.Strings(s)
			r.Inconsistent = append(r.Inconsistent, Inconsistency{k[0], k[1], k[2], s})
		}
	}
	for k, n := range kept {
		r.Kept = append(r.Kept, KeptValue{k[0], k[1], n})
	}
	sort.Slice(r.Kept, func(i, j int) bool {
		a, b := r.Kept[i], r.Kept[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Type+a.Value < b.Type+b.Value
	})
	r.NamePatterns = patternRows(origNames, surNames)
	return r
}

// inconsistentKeys returns, sorted, the keys with more than one surrogate.
func inconsistentKeys(m map[[3]string]map[string]bool) [][3]string {
	var keys [][3]string
	for k, v := range m {
		if len(v) > 1 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b [3]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]), cmp.Compare(a[2], b[2]))
	})
	return keys
}

func patternRows(orig, sur []string) []PatternRow {
	rows := map[string]*PatternRow{}
	for _, pc := range stats.NamePatterns(orig) {
		rows[pc.Pattern] = &PatternRow{Pattern: pc.Pattern, Tokens: pc.Tokens, Original: pc.Count}
	}
	for _, pc := range stats.NamePatterns(sur) {
		if rows[pc.Pattern] == nil {
			rows[pc.Pattern] = &PatternRow{Pattern: pc.Pattern, Tokens: pc.Tokens}
		}
		rows[pc.Pattern].Surrogate = pc.Count
	}
	out := make([]PatternRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Original != out[j].Original {
			return out[i].Original > out[j].Original
		}
		return out[i].Pattern < out[j].Pattern
	})
	return out
}

// docFinds are one document's finds.
type docFinds struct{ leaks, unannotated []Leak }

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

// scan looks for the patient's replaced values in one output document. A
// single letter alone (an initial) is not searched: it occurs everywhere and
// identifies no one.
func scan(patient string, d pipeline.Document, vals *valueSet, pol *Policy) docFinds {
	var out docFinds
	if vals == nil || len(vals.m) == 0 {
		return out
	}
	// The document's tokens, folded into one buffer.
	type tok struct{ start, end, fs, fe int } // bytes in the text, then in folded
	var toks []tok
	folded := make([]byte, 0, len(d.Text))
	start := -1
	for i, r := range d.Text {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if alnum && start < 0 {
			start = i
		} else if !alnum && start >= 0 {
			fs := len(folded)
			folded = appendFold(folded, d.Text[start:i])
			toks = append(toks, tok{start, i, fs, len(folded)})
			start = -1
		}
	}
	if start >= 0 {
		fs := len(folded)
		folded = appendFold(folded, d.Text[start:])
		toks = append(toks, tok{start, len(d.Text), fs, len(folded)})
	}
	var ix *pipeline.Index
	var spans [][2]int
	var arr [256]byte
	buf := arr[:0]
	for i := range toks {
		buf = buf[:0]
		for j := i; j < len(toks) && j-i < vals.longest; j++ {
			if j > i {
				buf = append(buf, ' ')
			}
			buf = append(buf, folded[toks[j].fs:toks[j].fe]...)
			if !vals.m[string(buf)] {
				if !vals.prefix[string(buf)] {
					break
				}
				continue
			}
			v := string(buf)
			if j == i && (utf8.RuneCountInString(v) < 2 || vals.abbreviation(v, d.Text[toks[i].start:toks[i].end])) {
				continue
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
			inSurrogate := false
			for k, s := range spans {
				if bs < s[1] && s[0] < be {
					inSurrogate = true
					l.Type = d.Spans[k].Type
				}
			}
			if inSurrogate {
				out.leaks = append(out.leaks, l)
			} else if l.Type = vals.typ[v]; spelled(vals, v, l.Type, d.Text, bs, be, pol) {
				out.unannotated = append(out.unannotated, l)
			}
		}
	}
	return out
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
func vague(text string, dmy bool) bool {
	d, ok := parseDate(text, dmy)
	return ok && !d.hasY && !d.hasD && !d.hasDecade
}
