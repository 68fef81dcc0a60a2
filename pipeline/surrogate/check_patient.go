package surrogate

import "deidcorpus/pipeline"

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
	strategies                    map[string]int // spans replaced, by strategy
	kept                          map[[2]string]int
	seen                          map[[3]string]map[string]bool // scope, type, folded original -> folded surrogates
	origPatterns, surPatterns     []string                      // of each name span
}

// checkPatient checks the documents idx of res, one patient's (or one
// document without its original), writing each document's findings to docs.
// Each kind of finding has its own function over the patient's span pairs.
func checkPatient(byID map[string]*pipeline.Document, res *Result, idx []int, docs []docCheck, pol *Policy, rd dateReading,
	shift map[string]int, keptForReview func(doc string, start int) bool, across acrossCorpus) patientCheck {
	for _, di := range idx {
		d := res.Docs[di]
		docs[di].misaligned = misaligned(d, byID[d.ID])
	}
	ps := pairSpans(byID, res.Docs, idx, pol, rd, keptForReview)
	pc := patientCheck{spans: len(ps.pairs)}
	pc.replaced, pc.strategies = countReplaced(ps.pairs)
	var kept *valueSet
	pc.kept, kept = keptValues(ps.pairs)
	pc.seen = surrogatesByValue(ps.pairs, ps.scope)
	pc.origPatterns, pc.surPatterns = namePatterns(ps.pairs)
	replaced := replacedValues(ps.pairs, pol, rd.lang)
	equalToOriginal(ps, res.Docs, replaced, docs, pol)
	days, shifted := shift[ps.patient]
	pc.datesChecked = checkIntervals(ps, res.Docs, days, rd, docs)
	// A value kept in one span of a patient's records (an age under 90, a
	// mislabelled OTHER) is in the output by the policy's choice: it is listed
	// as kept, not counted as a leak where another span replaced it. (A
	// surrogate equal to it is still a surrogate equal to an original, above.)
	texts := func(yield func(string) bool) {
		for _, di := range ps.docs {
			if !yield(byID[res.Docs[di].ID].Text) {
				return
			}
		}
	}
	parts := partValues(ps.pairs, pol, func(w string) bool { return across.wide.common(w) || writtenLower(w, texts) }, rd.lang)
	for v := range kept.m {
		delete(replaced.m, v)
		delete(parts.m, v)
	}
	for _, di := range ps.docs {
		d := res.Docs[di]
		docs[di].metadata = checkMetadata(ps.patient, *byID[d.ID], d, replaced, parts, days, shifted, pol)
	}
	ids := patientIDs(ps.patient, ps.docIDs(res.Docs))
	for _, di := range ps.docs {
		d := res.Docs[di]
		docs[di].finds = scanDocument(ps.patient, d, byID[d.ID], replaced, ids, pol)
		docs[di].finds.unannotated = across.finds(ps.patient, d, parts, pol, rd.lang, docs[di].finds)
	}
	return pc
}

// spanPair is a span of an original document beside its surrogate's span,
// with the rule the policy gives it and what the check makes of it.
type spanPair struct {
	doc   int // the surrogate document's index in the run's result
	o, s  pipeline.Span
	rule  Rule
	class spanClass
}

// spanClass is what the check makes of a span pair.
type spanClass uint8

const (
	// replacedSpan is a value the run was to replace: searched for in the
	// output, and checked for one surrogate per value.
	replacedSpan spanClass = iota
	keptSpan               // left in place by the policy's choice (classify)
	vagueDate              // a weekday, month or season alone (classify)
)

// patientSpans is one patient's documents as the check pairs them.
type patientSpans struct {
	patient, scope string
	docs           []int // the documents checked (those with their original): indexes into the run's result
	pairs          []spanPair
}

// docIDs returns the ids of the documents checked.
func (ps patientSpans) docIDs(docs []pipeline.Document) []string {
	ids := make([]string, len(ps.docs))
	for i, di := range ps.docs {
		ids[i] = docs[di].ID
	}
	return ids
}

// pairSpans pairs each span of the documents idx of a run's result with its
// original's, in document and span order. A document without its original,
// or whose original has another number of spans, is left out (misaligned
// reports it); the first document paired names the patient.
func pairSpans(byID map[string]*pipeline.Document, out []pipeline.Document, idx []int, pol *Policy, rd dateReading,
	keptForReview func(doc string, start int) bool) patientSpans {
	var ps patientSpans
	for _, di := range idx {
		d := out[di]
		o := byID[d.ID]
		if o == nil || len(o.Spans) != len(d.Spans) {
			continue
		}
		if ps.patient == "" {
			ps.patient = patientOf(*o)
			ps.scope = PatientScope(ps.patient)
		}
		ps.docs = append(ps.docs, di)
		for i, os := range o.Spans {
			pr := spanPair{doc: di, o: os, s: d.Spans[i], rule: pol.Rule(os.Category, os.Type)}
			pr.class = classify(pr, d.ID, rd, keptForReview)
			ps.pairs = append(ps.pairs, pr)
		}
	}
	return ps
}

// countReplaced counts the spans whose text the run changed, in all and by
// strategy.
func countReplaced(pairs []spanPair) (int, map[string]int) {
	n, by := 0, map[string]int{}
	for _, pr := range pairs {
		if pr.o.Text != pr.s.Text {
			n++
			by[pr.rule.Strategy]++
		}
	}
	return n, by
}

// scanDocument looks for a patient's replaced values and identifiers in one
// of their output documents, d, whose original is o, tokenized once for both.
// A note without spans is searched too: its text is all copied.
func scanDocument(patient string, d pipeline.Document, o *pipeline.Document, replaced *valueSet, ids idSet, pol *Policy) docFinds {
	var out docFinds
	leaks := len(replaced.m) > 0
	if !leaks && len(ids.ids) == 0 {
		return out
	}
	toks, folded := scanTokens(d.Text)
	if leaks {
		out = scan(patient, d, toks, folded, replaced, pol)
	}
	out.ids = scanIDs(patient, d, o, toks, folded, ids)
	return out
}
