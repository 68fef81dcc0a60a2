package surrogate

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
)

// span makes a span of text's first occurrence of value from byte from on.
func spanOf(t *testing.T, text, value, category, typ string, from int) pipeline.Span {
	t.Helper()
	i := strings.Index(text[from:], value)
	if i < 0 {
		t.Fatalf("%q holds no %q", text, value)
	}
	ix := pipeline.NewIndex(text)
	start := ix.CodePoint(from + i)
	return pipeline.Span{Start: start, End: start + len([]rune(value)), Text: value, Category: category, Type: typ}
}

// missesCorpus is two patients' notes, MEDDOCAN's labels: p's first note
// annotates a name, a town, a short town and a date, which its second writes
// again unannotated, in other cases, inside a longer word and inside a span;
// q's note names the town unannotated too (a place: searched across the
// corpus).
func missesCorpus(t *testing.T) []pipeline.Document {
	t1 := "Paciente: Juan Mendieta Espinosa, natural de Murcia y de Vic. Ingreso el 12/03/2019."
	t2 := "Remitido por Mendieta Espinosa desde MURCIA. Los murcianos lo conocen. Vive en murcia, cerca de Vic, " +
		"en el Hospital de Murcia, desde el 12/03/2019."
	t3 := "Natural de Murcia."
	return []pipeline.Document{
		{ID: "p-1", Patient: "p", Text: t1, Spans: []pipeline.Span{
			spanOf(t, t1, "Juan Mendieta Espinosa", "NAME", "NOMBRE_SUJETO_ASISTENCIA", 0),
			spanOf(t, t1, "Murcia", "LOCATION", "TERRITORIO", 0),
			spanOf(t, t1, "Vic", "LOCATION", "TERRITORIO", 0),
			spanOf(t, t1, "12/03/2019", "DATE", "FECHAS", 0),
		}},
		{ID: "p-2", Patient: "p", Text: t2, Spans: []pipeline.Span{
			spanOf(t, t2, "Hospital de Murcia", "LOCATION", "HOSPITAL", 0),
		}},
		{ID: "q-1", Patient: "q", Text: t3},
	}
}

// TestPropagation: an annotated name, place, id or contact of four letters
// or more that its patient's records write again outside the spans is
// replaced by its surrogate there, whatever its case, as a whole word, the
// name also without its first name; dates, values of three letters and
// occurrences inside a word or a span are left. A place is searched in the
// other patients' notes too.
func TestPropagation(t *testing.T) {
	docs := missesCorpus(t)
	pol := DefaultPolicy()
	res, err := New(pol, nil, 3).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	rep := assertClean(t, docs, res, pol)
	sur := func(doc, typ string) string { // the surrogate of the first span of a type
		i := slices.IndexFunc(res.Docs, func(d pipeline.Document) bool { return d.ID == doc })
		k := slices.IndexFunc(res.Docs[i].Spans, func(s pipeline.Span) bool { return s.Type == typ })
		return res.Docs[i].Spans[k].Text
	}
	name, town := sur("p-1", "NOMBRE_SUJETO_ASISTENCIA"), sur("p-1", "TERRITORIO")
	out := res.Docs[1].Text
	var got []string
	for _, p := range res.Propagated {
		if p.Doc == "q-1" {
			if orig := pipeline.NewIndex(docs[2].Text).Slice(p.SourceStart, p.SourceEnd); orig != "Murcia" {
				t.Errorf("propagated %+v into q-1: the source holds %q there", p, orig)
			}
			continue
		}
		got = append(got, pipeline.NewIndex(out).Slice(p.Start, p.End))
		if orig := pipeline.NewIndex(docs[1].Text).Slice(p.SourceStart, p.SourceEnd); !strings.EqualFold(orig, "Mendieta Espinosa") && !strings.EqualFold(orig, "Murcia") {
			t.Errorf("propagated %+v: the source holds %q there", p, orig)
		}
	}
	surname := strings.SplitN(name, " ", 2)[1] // "Mendieta Espinosa" is the name without its first name
	want := []string{surname, strings.ToUpper(town), strings.ToLower(town)}
	if !slices.Equal(got, want) {
		t.Errorf("propagated %q, want %q (name %q, town %q)", got, want, name, town)
	}
	for _, kept := range []string{"murcianos", "Vic", "12/03/2019"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q is no longer in %q", kept, out)
		}
	}
	if strings.Contains(strings.ToLower(out), "murcia ") || strings.Contains(strings.ToLower(out), "murcia,") ||
		strings.Contains(out, "Mendieta") {
		t.Errorf("an original is left: %q", out)
	}
	if strings.Contains(res.Docs[2].Text, "Murcia") || len(res.Propagated) != 4 {
		t.Errorf("another patient's note keeps the place: %q (%d propagated)", res.Docs[2].Text, len(res.Propagated))
	}
	// The spans are the source's, one for one, re-aligned past the
	// replaced occurrences.
	if len(res.Docs[1].Spans) != 1 || res.Docs[1].Spans[0].Text != pipeline.NewIndex(out).Slice(res.Docs[1].Spans[0].Start, res.Docs[1].Spans[0].End) {
		t.Errorf("spans %+v of %q", res.Docs[1].Spans, out)
	}
	// Left for a person: the date and the short town, at the source's offsets.
	var finds []string
	for _, l := range rep.Unannotated {
		finds = append(finds, l.Value)
		if src := pipeline.NewIndex(docs[1].Text).Slice(l.SourceStart, l.SourceEnd); src != l.Value {
			t.Errorf("unannotated %q: the source holds %q at %d-%d", l.Value, src, l.SourceStart, l.SourceEnd)
		}
	}
	if !slices.Equal(finds, []string{"Vic", "12/03/2019"}) {
		t.Errorf("unannotated finds %q", finds)
	}
	if !slices.Equal(rep.Propagated, res.Propagated) {
		t.Errorf("the report lists %+v, the run %+v", rep.Propagated, res.Propagated)
	}
	data, err := json.Marshal(rep.Propagated)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.ToLower(string(data)); strings.Contains(s, "murcia") || strings.Contains(s, "mendieta") {
		t.Errorf("the list of propagated occurrences names an original: %s", data)
	}
}

// TestPropagationOff: a policy may leave the misses in place, for the
// check to list (which passes over "murcia" written in lower case: a word
// too, where propagation errs the other way).
func TestPropagationOff(t *testing.T) {
	docs := missesCorpus(t)
	pol, err := ParsePolicy([]byte(`{"propagate": false}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := New(pol, nil, 3).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	rep := Check(docs, res, pol)
	if len(res.Propagated) > 0 || len(rep.Propagated) > 0 {
		t.Errorf("propagated %+v", res.Propagated)
	}
	var finds []string
	for _, l := range rep.Unannotated {
		finds = append(finds, l.Value)
	}
	// q's "Murcia": a place is searched in every patient's notes.
	if want := []string{"Mendieta Espinosa", "MURCIA", "Vic", "12/03/2019", "Murcia"}; !slices.Equal(finds, want) {
		t.Errorf("unannotated finds %q, want %q", finds, want)
	}
}

// TestPropagatesNameParts: a name written again without its first name or
// its second surname, or without its title, takes the words of the name's
// surrogate.
func TestPropagatesNameParts(t *testing.T) {
	t1 := "Paciente: Juan García López, de 40 años. Dr. Tomás Ybarrondo firma."
	t2 := "Revisión. El Sr. García López refiere mejoría; Juan García acude solo. Tomás Ybarrondo."
	docs := []pipeline.Document{
		{ID: "1", Patient: "p", Text: t1, Spans: []pipeline.Span{
			spanOf(t, t1, "Juan García López", "NAME", "PATIENT", 0),
			spanOf(t, t1, "Dr. Tomás Ybarrondo", "NAME", "DOCTOR", 0),
		}},
		{ID: "2", Patient: "p", Text: t2},
	}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 5).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	rep := assertClean(t, docs, res, pol)
	if len(rep.Unannotated) > 0 {
		t.Errorf("unannotated finds left: %+v", rep.Unannotated)
	}
	patient := strings.Fields(res.Docs[0].Spans[0].Text)
	doctor := strings.Fields(res.Docs[0].Spans[1].Text)
	want := "Revisión. El Sr. " + patient[1] + " " + patient[2] + " refiere mejoría; " + patient[0] + " " + patient[1] +
		" acude solo. " + doctor[1] + " " + doctor[2] + "."
	if res.Docs[1].Text != want {
		t.Errorf("got  %q\nwant %q", res.Docs[1].Text, want)
	}
}

// TestNoAnnotatedValueRemains: whatever spans the gold misses, no value it
// annotates elsewhere in a patient's records (a name, place, id or contact
// of four letters or digits or more) remains in that patient's surrogate
// notes, as whole words in any case. The synthetic notes lose every fifth
// span, as an annotator's misses.
func TestNoAnnotatedValueRemains(t *testing.T) {
	var docs []pipeline.Document
	if err := synth.Generate(synth.Options{Patients: 150, Seed: 11}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range docs {
		docs[i].Spans = slices.DeleteFunc(slices.Clone(docs[i].Spans), func(pipeline.Span) bool { n++; return n%5 == 0 })
	}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 8).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	rep := assertClean(t, docs, res, pol)
	if len(rep.Propagated) == 0 {
		t.Fatal("nothing propagated")
	}
	values := map[string]map[string]bool{} // patient -> folded token sequences
	for _, d := range docs {
		for _, s := range d.Spans {
			if !pol.propagates(s.Category, s.Type) || wordsOnly(pol.Rule(s.Category, s.Type).Strategy, s.Text) ||
				len([]rune(strings.Join(tokens(s.Text), ""))) < minPropagated {
				continue
			}
			if values[d.Patient] == nil {
				values[d.Patient] = map[string]bool{}
			}
			values[d.Patient][" "+strings.Join(tokens(s.Text), " ")+" "] = true
		}
	}
	for _, d := range res.Docs {
		text := " " + strings.Join(tokens(d.Text), " ") + " "
		for v := range values[d.Patient] {
			if strings.Contains(text, v) {
				t.Errorf("%s: %q remains in %q", d.ID, v, d.Text)
			}
		}
	}
	t.Logf("%d occurrences propagated, %d unannotated finds left", len(rep.Propagated), len(rep.Unannotated))
}
