package surrogate

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
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
	keptForReview := map[string]bool{}
	for _, it := range res.Review {
		if it.Kept {
			keptForReview[fmt.Sprintf("%s\x00%d", it.Doc, it.Start)] = true
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
				keptForReview[fmt.Sprintf("%s\x00%d", d.ID, os.Start)]) {
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
			replaced[p].add(os.Text)
			scope := ScopeCorpus
			if rule.Scope == ScopePatient || patientOnly[rule.Strategy] {
				scope = PatientScope(p)
			}
			k := [3]string{scope, os.Type, resources.Fold(os.Text)}
			if seen[k] == nil {
				seen[k] = map[string]bool{}
			}
			seen[k][resources.Fold(ss.Text)] = true
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
	for di, d := range res.Docs {
		if o := byID[d.ID]; o != nil && len(pairs[di]) > 0 {
			r.scan(patientOf(*o), d, replaced[patientOf(*o)])
		}
	}
	for _, k := range sortedKeys3(seen) {
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
		k := [3]string{m.Scope, m.Type, resources.Fold(m.Original)}
		if byMap[k] == nil {
			byMap[k] = map[string]bool{}
		}
		byMap[k][resources.Fold(m.Surrogate)] = true
	}
	for _, k := range sortedKeys3(byMap) {
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

func sortedKeys3[V any](m map[[3]string]V) [][3]string {
	keys := make([][3]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0]+"\x00"+keys[i][1]+"\x00"+keys[i][2] < keys[j][0]+"\x00"+keys[j][1]+"\x00"+keys[j][2]
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

// posToken is a folded token with its byte offsets.
type posToken struct {
	text       string
	start, end int
}

func tokensAt(s string) []posToken {
	var out []posToken
	start := -1
	for i, r := range s {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if alnum && start < 0 {
			start = i
		} else if !alnum && start >= 0 {
			out = append(out, posToken{resources.Fold(s[start:i]), start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, posToken{resources.Fold(s[start:]), start, len(s)})
	}
	return out
}

// scan looks for the patient's replaced values in one output document. A
// single letter alone (an initial) is not searched: it occurs everywhere and
// identifies no one.
func (r *Report) scan(patient string, d pipeline.Document, vals *valueSet) {
	if vals == nil || len(vals.m) == 0 {
		return
	}
	ix := pipeline.NewIndex(d.Text)
	type rng struct{ s, e int }
	spans := make([]rng, len(d.Spans))
	for i, s := range d.Spans {
		spans[i] = rng{ix.Byte(s.Start), ix.Byte(s.End)}
	}
	toks := tokensAt(d.Text)
	var b strings.Builder
	for i := range toks {
		b.Reset()
		for j := i; j < len(toks) && j-i < vals.longest; j++ {
			if j > i {
				b.WriteByte(' ')
			}
			b.WriteString(toks[j].text)
			v := b.String()
			if !vals.m[v] || j == i && (len([]rune(v)) < 2 || vals.abbreviation(v, d.Text[toks[i].start:toks[i].end])) {
				continue
			}
			bs, be := toks[i].start, toks[j].end
			l := Leak{Patient: patient, Doc: d.ID, Value: d.Text[bs:be], Start: ix.CodePoint(bs), End: ix.CodePoint(be)}
			inSurrogate := false
			for k, s := range spans {
				if bs < s.e && s.s < be {
					inSurrogate = true
					l.Type = d.Spans[k].Type
				}
			}
			if inSurrogate {
				r.Leaks = append(r.Leaks, l)
			} else {
				r.Unannotated = append(r.Unannotated, l)
			}
		}
	}
}

// vague reports a date without day and year: a weekday, month or season alone.
func vague(text string, dmy bool) bool {
	d, ok := parseDate(text, dmy)
	return ok && !d.hasY && !d.hasD && !d.hasDecade
}
