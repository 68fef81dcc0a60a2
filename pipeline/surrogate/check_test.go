package surrogate

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
)

// A corpus-scope value written with two surrogates in different parts of a
// run, or mapped to two, is reported once with both, as Check reports it
// over the whole run.
func TestCheckerReportsACorpusValueWithTwoSurrogates(t *testing.T) {
	var docs []pipeline.Document
	if err := synth.Generate(synth.Options{Patients: 6, Seed: 4}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 3).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	if rep := Check(docs, res, pol); len(rep.Inconsistent) != 0 {
		t.Fatalf("a clean run is inconsistent: %v", rep.Inconsistent)
	}
	// The last mention of a corpus-scope value that is mentioned before gets
	// another surrogate of the same length, so that offsets stay right.
	seen := map[[2]string]bool{}
	var at [2]int
	var orig, was string
	for di, d := range res.Docs {
		for si, sp := range docs[di].Spans {
			if r := pol.Rule(sp.Category, sp.Type); r.Scope != ScopeCorpus || r.Strategy == Keep || patientOnly[r.Strategy] {
				continue
			}
			k := [2]string{sp.Type, fold(sp.Text)}
			if seen[k] && len(d.Spans[si].Text) > 3 {
				at, orig, was = [2]int{di, si}, sp.Text, d.Spans[si].Text
			}
			seen[k] = true
		}
	}
	if orig == "" {
		t.Fatal("no corpus-scope value mentioned twice")
	}
	other := []byte(was)
	slices.Reverse(other)
	if fold(string(other)) == fold(was) {
		other[0], other[1] = 'Q', 'x'
	}
	d := &res.Docs[at[0]]
	sp := &d.Spans[at[1]]
	d.Text = d.Text[:sp.Start] + string(other) + d.Text[sp.End:]
	sp.Text = string(other)

	half := len(docs) / 2
	for half < len(docs) && docs[half].Patient == docs[half-1].Patient {
		half++
	}
	c := NewChecker(pol, res.Language)
	c.Add(docs[:half], &Result{Docs: res.Docs[:half], Shifts: res.Shifts, Language: res.Language})
	c.Add(docs[half:], &Result{Docs: res.Docs[half:], Language: res.Language})
	c.Add(nil, &Result{Mappings: []Mapping{{Scope: ScopeCorpus, Type: "DOCTOR", Original: "Ann Lee", Surrogate: "Bo Kim"}}})
	c.Add(nil, &Result{Mappings: []Mapping{{Scope: ScopeCorpus, Type: "DOCTOR", Original: "ANN LEE", Surrogate: "Cy Day"}}})
	got := c.Report().Inconsistent
	want := []Inconsistency{
		{ScopeCorpus, docs[at[0]].Spans[at[1]].Type, fold(orig), slices.Sorted(slices.Values([]string{fold(was), fold(string(other))}))},
		{ScopeCorpus, "DOCTOR", "ann lee", []string{"bo kim", "cy day"}},
	}
	if !slices.EqualFunc(got, want, func(a, b Inconsistency) bool {
		return a.Scope == b.Scope && a.Type == b.Type && a.Original == b.Original && slices.Equal(a.Surrogates, b.Surrogates)
	}) {
		t.Errorf("inconsistencies %v, want %v", got, want)
	}
}

// A value read across the end of one surrogate and the start of the next is a
// coincidence of two surrogates, not a copy; the same value inside one span,
// or reaching unannotated text, is a leak.
func TestScanLeavesValuesJoinedAcrossTwoSurrogates(t *testing.T) {
	vals := newValueSet()
	vals.addTyped("1/12", "DATE")
	pol := DefaultPolicy()
	const text = "Seen at HOSPITAL-1    12/08/2100 by 1/12 staff."
	doc := func(spans ...[2]int) pipeline.Document {
		d := pipeline.Document{ID: "d", Text: text}
		for _, s := range spans {
			d.Spans = append(d.Spans, pipeline.Span{Start: s[0], End: s[1], Type: "DATE", Text: text[s[0]:s[1]]})
		}
		return d
	}
	hospital, date := [2]int{8, 18}, [2]int{22, 32}
	if hospital != [2]int{strings.Index(text, "HOSPITAL"), strings.Index(text, "-1") + 2} || text[date[0]:date[1]] != "12/08/2100" {
		t.Fatal("the test's offsets are wrong")
	}
	second := [2]int{strings.Index(text, "by 1/12") + 3, strings.Index(text, " staff")}
	cases := []struct {
		name              string
		spans             [][2]int
		leaks, unannotate int
	}{
		{"two surrogates side by side", [][2]int{hospital, date, second}, 1, 0}, // only "1/12" in the third span
		{"the first token outside any span", [][2]int{{8, 16}, date, second}, 2, 0},
		{"the value in unannotated text", [][2]int{hospital, date}, 0, 1},
	}
	for _, c := range cases {
		d := doc(c.spans...)
		toks, folded := scanTokens(d.Text)
		f := scan("p", d, toks, folded, vals, pol)
		if len(f.leaks) != c.leaks || len(f.unannotated) != c.unannotate {
			t.Errorf("%s: %d leaks %v and %d unannotated finds %v, want %d and %d",
				c.name, len(f.leaks), f.leaks, len(f.unannotated), f.unannotated, c.leaks, c.unannotate)
		}
	}
}

// Which identifiers are searched: numbers of five digits or more, ids with
// letters and three digits or more, the part of a document id after its
// patient's id when it is distinctive itself; not words, short numbers or a
// word with a small number.
func TestPatientIDsAreTheDistinctiveOnes(t *testing.T) {
	cases := []struct {
		patient string
		docs    []string
		want    []string // the searched sequences, sorted
	}{
		{"100234", []string{"100234-07"}, []string{"100234", "100234 07"}},
		{"100234", []string{"100234-A1234"}, []string{"100234", "100234 a1234", "a1234"}},
		{"100234", []string{"100234-318"}, []string{"100234", "100234 318"}}, // "318": a number of three digits
		{"100234", []string{"1002347"}, []string{"100234", "1002347"}},       // no separator, so no part after the prefix
		{"100", []string{"100-01", "100-02"}, []string{"100 01", "100 02"}},  // five digits in all
		{"42", []string{"42-1"}, nil},
		{"1234", []string{"1234"}, nil},
		{"smith", []string{"smith-notes", "note-1", "day 12", "SpO2"}, nil},
		{"p7", []string{"record-318", "A1234", "A12", "HbA1c"}, []string{"a1234", "record 318"}},
		// A document without a patient is its own patient: its id is a document id.
		{"S0004-06142005000500011-1", []string{"S0004-06142005000500011-1"}, []string{"s0004 06142005000500011 1"}},
	}
	for _, c := range cases {
		ids := patientIDs(c.patient, c.docs)
		got := slices.Sorted(maps.Keys(ids.ids))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %v: searched %q, want %q", c.patient, c.docs, got, c.want)
		}
		if c.patient == c.docs[0] && len(got) > 0 && ids.ids[got[0]].kind != DocumentIDKind {
			t.Errorf("%s: an id that is its document's is a %s", c.patient, ids.ids[got[0]].kind)
		}
	}
}

// A patient's id and the ids of their documents written in the text of an
// output document are found as whole tokens, fail the check and are
// reported, by Check and by a Checker fed a patient at a time; a longer
// number that contains one, a short number, an id glued to a word and
// another patient's id are not.
func TestCheckFindsTheSourcesIdentifiersInTheText(t *testing.T) {
	mk := func(id, patient, text string, names ...string) pipeline.Document {
		d := pipeline.Document{ID: id, Patient: patient, Text: text}
		ix := pipeline.NewIndex(text)
		for _, n := range names {
			b := strings.Index(text, n)
			d.Spans = append(d.Spans, pipeline.Span{Start: ix.CodePoint(b), End: ix.CodePoint(b + len(n)), Text: n, Category: "NAME", Type: "DOCTOR"})
		}
		return d
	}
	docs := []pipeline.Document{
		mk("100234-07", "100234", "Señor seen by Dr. Ann Lee, MRN: 100234. Not ids: 1002345, 10023, 234, 07, MRN100234, 100234.5.\n"+
			"See note 100234-A1234 and record-318; accession a1234.", "Ann Lee"),
		mk("100234-A1234", "100234", "Follow-up of 100234 07 by Dr. Bo Kim.", "Bo Kim"),
		mk("record-318", "100234", "Record 318 copied; records 318 and 318 are not."), // no span: searched all the same
		mk("55555-02", "55555", "Seen with 100234 (another patient's) by Dr. Cy Day; 42 and 555555 are no ids.", "Cy Day"),
		mk("42-1", "42", "Patient 42, note 42-1, by Dr. Di Fox.", "Di Fox"),
	}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 1).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	type find struct{ doc, kind, id, value string }
	want := []find{
		{"100234-07", PatientIDKind, "100234", "100234"},
		{"100234-07", PatientIDKind, "100234", "100234"}, // of "100234.5": "." separates tokens
		{"100234-07", DocumentIDKind, "100234-A1234", "100234-A1234"},
		{"100234-07", DocumentIDKind, "record-318", "record-318"},
		{"100234-07", DocumentIDKind, "100234-A1234", "a1234"},
		{"100234-A1234", DocumentIDKind, "100234-07", "100234 07"},
		{"record-318", DocumentIDKind, "record-318", "Record 318"},
	}
	check := func(name string, rep *Report) {
		t.Helper()
		var got []find
		for _, l := range rep.Identifiers {
			got = append(got, find{l.Doc, l.Kind, l.ID, l.Value})
			var text string
			for _, d := range res.Docs {
				if d.ID == l.Doc {
					text = d.Text
				}
			}
			if at := pipeline.NewIndex(text).Slice(l.Start, l.End); at != l.Value || l.Patient != "100234" {
				t.Errorf("%s: %+v: the text at its offsets is %q, the patient 100234", name, l, at)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: found\n%q\nwant\n%q", name, got, want)
		}
		if rep.OK() || len(rep.Leaks) != 0 || len(rep.Misaligned) != 0 {
			t.Errorf("%s: identifiers in the text pass the check (ok %v, leaks %v, misaligned %v)", name, rep.OK(), rep.Leaks, rep.Misaligned)
		}
	}
	check("Check", Check(docs, res, pol))
	c := NewChecker(pol, res.Language)
	c.Add(docs[:3], &Result{Docs: res.Docs[:3], Shifts: res.Shifts, Mappings: res.Mappings, Language: res.Language})
	c.Add(docs[3:], &Result{Docs: res.Docs[3:], Language: res.Language})
	check("Checker", c.Report())

	// Without the first three documents, nothing is found and the check passes.
	res.Docs = res.Docs[3:]
	if rep := Check(docs[3:], res, pol); !rep.OK() || len(rep.Identifiers) != 0 {
		t.Errorf("no id in the text, yet the check found %v (ok %v)", rep.Identifiers, rep.OK())
	}
}

// An id spelled by surrogates alone (a shifted date "2075-04-18" in the
// note "2075-04") is a coincidence, not a copy; the id reaching from a
// surrogate into copied text, copied, or in a span left unchanged is a find.
func TestCheckLeavesIDsSpelledBySurrogates(t *testing.T) {
	// doc writes the note with its spans: the values of a date, a doctor and
	// an OTHER, in this order in the text.
	doc := func(text string, values ...string) pipeline.Document {
		d := pipeline.Document{ID: "2075-04", Patient: "2075", Text: text}
		from := 0
		for i, v := range values {
			b := from + strings.Index(text[from:], v)
			typ := []string{"DATE", "DOCTOR", "OTHER"}[i]
			d.Spans = append(d.Spans, pipeline.Span{Start: b, End: b + len(v), Text: v, Category: typ, Type: typ})
			from = b + len(v)
		}
		return d
	}
	cases := []struct {
		name      string
		orig, out pipeline.Document
		want      []string
	}{
		{"in a surrogate", doc("Admitted 2070-07-22 by Dr. Ann Lee (x).", "2070-07-22", "Ann Lee", "x"),
			doc("Admitted 2075-04-18 by Dr. Bo Kim (x).", "2075-04-18", "Bo Kim", "x"), nil},
		{"from a surrogate into copied text", doc("Admitted 2070-07-22 04 by Dr. Ann Lee (x).", "2070-07-22", "Ann Lee", "x"),
			doc("Admitted 2070-2075 04 by Dr. Bo Kim (x).", "2070-2075", "Bo Kim", "x"), []string{"2075 04"}},
		{"in copied text", doc("Admitted 2070-07-22 by Dr. Ann Lee (x), note 2075-04.", "2070-07-22", "Ann Lee", "x"),
			doc("Admitted 2071-01-02 by Dr. Bo Kim (x), note 2075-04.", "2071-01-02", "Bo Kim", "x"), []string{"2075-04"}},
		{"in a span left unchanged", doc("Admitted 2070-07-22 by Dr. Ann Lee (ref 2075-04).", "2070-07-22", "Ann Lee", "ref 2075-04"),
			doc("Admitted 2071-01-02 by Dr. Bo Kim (ref 2075-04).", "2071-01-02", "Bo Kim", "ref 2075-04"), []string{"2075-04"}},
	}
	pol := DefaultPolicy()
	for _, c := range cases {
		var ids []string
		for _, l := range Check([]pipeline.Document{c.orig}, &Result{Docs: []pipeline.Document{c.out}}, pol).Identifiers {
			ids = append(ids, l.Value)
		}
		if !slices.Equal(ids, c.want) {
			t.Errorf("%s: found %q, want %q", c.name, ids, c.want)
		}
	}
}

// TestCheckFileJSONNames: a check report is written with the JSON names
// GraphQL's checkReport shows ("leaks", "sourceStart"), and a report saved
// before the fields had them (Go's names, "Leaks") still reads whole.
func TestCheckFileJSONNames(t *testing.T) {
	old := `{"report":{"Documents":2,"Replaced":3,"Leaks":[{"Patient":"p1","Doc":"d1","Type":"NAME","Value":"Ana","Start":4,"End":7}],
		"Misaligned":[{"Doc":"d3","Span":{"ID":"T1","Start":2,"End":5,"Text":"Ana","Category":"NAME","Type":"PATIENT","Comment":""},"AtOffsets":"Eva"}],
		"Unannotated":[{"Patient":"p1","Doc":"d1","Value":"Ana","Start":9,"End":12,"SourceStart":9,"SourceEnd":12}],
		"Identifiers":[{"Patient":"p1","Doc":"d1","Kind":"patient id","ID":"100234","Value":"100234","Start":20,"End":26}],
		"Kept":[{"Type":"AGE","Value":"45","Count":2}],"Inconsistent":[{"Scope":"corpus","Type":"CITY","Original":"Lugo","Surrogates":["Vigo","Soria"]}],
		"IntervalErrors":[{"Doc":"d2","Want":"2020-01-02"}],"DatesChecked":5,"EqualToOriginal":[{"Patient":"p2","Original":"Eva","Surrogate":"Eva"}],
		"NamePatterns":[{"Pattern":"F L","Tokens":2,"Original":4,"Surrogate":4}]},
		"review":[{"Doc":"d1","Start":1,"End":2,"Reason":"ambiguous date","Kept":true}]}`
	var f CheckFile
	if err := json.Unmarshal([]byte(old), &f); err != nil {
		t.Fatal(err)
	}
	want := CheckFile{
		Report: Report{Documents: 2, Replaced: 3,
			Leaks:          []Leak{{Patient: "p1", Doc: "d1", Type: "NAME", Value: "Ana", Start: 4, End: 7}},
			Misaligned:     []SpanProblem{{Doc: "d3", Start: 2, End: 5, Type: "PATIENT", Text: "Ana", AtOffsets: "Eva"}},
			Unannotated:    []Leak{{Patient: "p1", Doc: "d1", Value: "Ana", Start: 9, End: 12, SourceStart: 9, SourceEnd: 12}},
			Identifiers:    []IdentifierLeak{{Patient: "p1", Doc: "d1", Kind: PatientIDKind, ID: "100234", Value: "100234", Start: 20, End: 26}},
			Kept:           []KeptValue{{Type: "AGE", Value: "45", Count: 2}},
			Inconsistent:   []Inconsistency{{Scope: "corpus", Type: "CITY", Original: "Lugo", Surrogates: []string{"Vigo", "Soria"}}},
			IntervalErrors: []SurrogateProblem{{Doc: "d2", Want: "2020-01-02"}}, DatesChecked: 5,
			EqualToOriginal: []SurrogateProblem{{Patient: "p2", Original: "Eva", Surrogate: "Eva"}},
			NamePatterns:    []PatternRow{{Pattern: "F L", Tokens: 2, Original: 4, Surrogate: 4}}},
		Review: []ReviewItem{{Doc: "d1", Start: 1, End: 2, Reason: "ambiguous date", Kept: true}},
	}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("read %+v\nwant %+v", f, want)
	}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var again CheckFile
	// Kinds of finding an older report lacks are written as empty lists.
	want.Report.Metadata, want.Report.Propagated, want.Report.Incoherent = []MetadataProblem{}, []Propagation{}, []Incoherence{}
	want.Report.Strategies = map[string]int{}
	if err := json.Unmarshal(data, &again); err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("the report written does not read back (%v): %s", err, data)
	}
	for _, key := range []string{`"documents":2`, `"leaks":[{"patient":"p1","doc":"d1","type":"NAME","value":"Ana","start":4,"end":7}]`,
		`"misaligned":[{"doc":"d3","start":2,"end":5,"type":"PATIENT","text":"Ana","atOffsets":"Eva"}]`,
		`"identifiers":[{"patient":"p1","doc":"d1","kind":"patient id","id":"100234"`, `"kept":[{"type":"AGE","value":"45","count":2}]`,
		`"inconsistent":[{"scope":"corpus","type":"CITY","original":"Lugo","surrogates":["Vigo","Soria"]}]`, `"equalToOriginal":[{"patient":"p2"`,
		`"sourceStart":9`, `"intervalErrors":`, `"datesChecked":5`, `"namePatterns":[{"pattern":"F L"`, `"review":[{"doc":"d1"`, `"kept":true`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("written report lacks %s: %s", key, data)
		}
	}
}
