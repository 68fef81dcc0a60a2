package tagger

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"

	"deidcorpus/pipeline"
)

// A hand-built longitudinal corpus: patient 100 has three records, patient
// 200 one. The CRF found "Harlan Valdez" only in record 100-01; propagation
// must recover the name (and its permutations) in 100-02, and leave patient
// 200's record alone.
func TestPropagationRecoversNameMissedInAnotherRecord(t *testing.T) {
	types := []SpanType{{"DATE", "DATE"}, {"NAME", "DOCTOR"}, {"NAME", "PATIENT"}}
	m := &Model{Config: DefaultConfig(), Types: types}
	m.labels = newLabels(types)
	m.learnt.Propagate = []string{"PATIENT", "DOCTOR"}
	docs := []pipeline.Document{
		{ID: "100-01", Patient: "100", Text: "Harlan Valdez, 67, seen by Dr. Ruiz. Harlan Valdez is well."},
		{ID: "100-02", Patient: "100", Text: "Follow-up.\nValdez, Harlan called; H. Valdez reports pain. Valdez stable."},
		{ID: "100-03", Patient: "100", Text: "No names here."},
		{ID: "200-01", Patient: "200", Text: "Harlan Valdez is another patient's neighbour."},
	}
	tagged := make([]*taggedDoc, len(docs))
	for i := range docs {
		tk := Tokenize(docs[i].Text)
		tagged[i] = &taggedDoc{doc: &docs[i], tk: tk, ix: pipeline.NewIndex(docs[i].Text), model: m}
	}
	// What the CRF found: the first mention in 100-01 only, and a doctor.
	tagged[0].pred = []tokSpan{{0, 2, 2}, {9, 10, 1}}

	m.propagate(docs, tagged)

	texts := func(td *taggedDoc) []string {
		var out []string
		for _, s := range td.spans() {
			out = append(out, s.Type+":"+s.Text)
		}
		sort.Strings(out)
		return out
	}
	want := map[string][]string{
		"100-01": {"DOCTOR:Ruiz", "PATIENT:Harlan Valdez", "PATIENT:Harlan Valdez"},
		"100-02": {"PATIENT:H. Valdez", "PATIENT:Valdez", "PATIENT:Valdez, Harlan"},
		"100-03": nil,
		"200-01": nil,
	}
	for i, d := range docs {
		if got := texts(tagged[i]); !reflect.DeepEqual(got, want[d.ID]) {
			t.Errorf("%s: spans %q, want %q", d.ID, got, want[d.ID])
		}
	}
	// Offsets are code points and match the text.
	for i := range docs {
		d := docs[i]
		d.Spans = tagged[i].spans()
		if err := d.Validate(false); err != nil {
			t.Errorf("%s: %v", d.ID, err)
		}
	}

	// Without AcrossRecords a record only sees its own terms.
	m.Config.Post.AcrossRecords = false
	for _, td := range tagged {
		td.pred = nil
	}
	tagged[0].pred = []tokSpan{{0, 2, 2}}
	m.propagate(docs, tagged)
	if got := texts(tagged[1]); got != nil {
		t.Errorf("100-02 without across_records: %q, want nothing", got)
	}
}

func TestNamePermutations(t *testing.T) {
	cases := map[string][]string{
		"Harlan Valdez":           {"Valdez, Harlan", "H. Valdez", "Valdez"},
		"Ignacio Navarro Cuéllar": {"Navarro Cuéllar, Ignacio", "I. Navarro Cuéllar", "Navarro Cuéllar", "Navarro"},
		"Ernesto":                 nil,
		"the patient":             nil,
	}
	for in, want := range cases {
		tk := Tokenize(in)
		if got := namePermutations(tk, 0, len(tk.Tokens)); !reflect.DeepEqual(got, want) {
			t.Errorf("namePermutations(%q) = %q, want %q", in, got, want)
		}
	}
}

// Each rule finds its PHI and nothing around it: phones and faxes after
// their keyword, makers after a trademarked product.
func TestRuleMatches(t *testing.T) {
	ruleOf := func(kind string) *rule {
		for i := range rules {
			if rules[i].Kind == kind {
				return &rules[i]
			}
		}
		t.Fatalf("no rule %s", kind)
		return nil
	}
	for _, c := range []struct {
		kind, text string
		want       []string
	}{
		{"FAX", "Tel: 91 555 12 34. Fax: 91 555 12 35.", []string{"91 555 12 35"}},
		{"PHONE", "Tel: 91 555 12 34. Fax: 91 555 12 35.", []string{"91 555 12 34"}},
		{"PHONE", "Tel.: 948 255 400 Fax: 948 296 500 E-mail", []string{"948 255 400"}},
		// A list under one keyword, however long.
		{"PHONE", "Alcalá de Henares. Telfs.: 918823884 / 918823984 / 619128686. Correo", []string{"918823884", "918823984", "619128686"}},
		{"PHONE", "Cádiz. Tfno: 956 203 145 y 956 203 146.", []string{"956 203 145", "956 203 146"}},
		// A Kelvin sign lower-cases to one byte instead of three: offsets
		// into the text still hold.
		{"PHONE", "\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a\u212a Tel.: 948 255 400", []string{"948 255 400"}},
		// A number too short for a phone is not one, keyword or not.
		{"PHONE", "Tel. NHC: 7845678", nil},
		// No keyword, no phone: record numbers and dosages stay out.
		{"PHONE", "NHC 918823884. Peso 3 400 500 g.", nil},
		// A number far from its keyword, and not listed, is not taken.
		{"PHONE", "Teléfono de la unidad de hospitalización pediátrica 918823884", nil},
		// The maker after a trademarked product, up to its field's end.
		{"MAKER", "(Zovirax®, Glaxo Smith Kline) y oral (Virex®, Biogen).", []string{"Glaxo Smith Kline", "Biogen"}},
		{"MAKER", "(Travatan®, Alcon-Cusí, Fort Worth, Texas)", []string{"Alcon-Cusí"}},
		{"MAKER", "(Efferalgan®; Laboratorios Dr. Esteve S.A., Barcelona)", []string{"Laboratorios Dr. Esteve S.A."}},
		// A list of products is not a maker; nor is a lower-case field, or
		// a field outside brackets.
		{"MAKER", "(Viekirax®, Exviera® y Rebetol®, sin respuesta)", nil},
		{"MAKER", "(Edemox®, vía oral)", nil},
		{"MAKER", "se pautó Sintrom®, Tras dos semanas, mejoró", nil},
	} {
		tk := Tokenize(c.text)
		var got []string
		for _, m := range ruleOf(c.kind).matches(tk) {
			got = append(got, tk.Text[tk.Tokens[m[0]].Start:tk.Tokens[m[1]-1].End])
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s in %q: %q, want %q", c.kind, c.text, got, c.want)
		}
	}
}

func TestTemplatesTellDatesFromDosing(t *testing.T) {
	var dateNum int
	for k, tp := range templates {
		if tp.Name == "DATE_NUM" {
			dateNum = k
		}
	}
	for text, want := range map[string]string{
		"El 22-7-04 se implantó":      "22-7-04",
		"TC (16/09/03), sin cambios":  "16/09/03",
		"morfina (10-0-10 mg)":        "",
		"EVA 2-3/10":                  "",
		"nacido el 3.12.1999.":        "3.12.1999",
		"el 12/25/2090 a las 10:00 h": "12/25/2090",
	} {
		tk := Tokenize(text)
		got := ""
		for _, r := range matchTemplates(tk)[dateNum] {
			got = text[tk.Tokens[r[0]].Start:tk.Tokens[r[1]-1].End]
		}
		if got != want {
			t.Errorf("DATE_NUM in %q: %q, want %q", text, got, want)
		}
	}
}

func TestTrimKeepsAbbreviations(t *testing.T) {
	types := []SpanType{{"LOCATION", "PAIS"}}
	m := &Model{Config: DefaultConfig(), Types: types}
	m.labels = newLabels(types)
	m.learnt.TrimEdges = []string{"PAIS"}
	for text, want := range map[string]string{
		"California, EE.UU.) En":     "EE.UU.",
		"Vive en EE. UU.) En":        "EE. UU.",
		"Vive en España. Vino":       "España",
		"Vive en España 4 Izq. Vino": "España 4 Izq",
	} {
		tk := Tokenize(text)
		td := &taggedDoc{tk: tk, ix: pipeline.NewIndex(text), model: m}
		// The CRF's span runs from the country to the next '.' or ')'.
		first, last := 0, 0
		for i := range tk.Tokens {
			if w := tk.Word(i); w == "EE" || w == "España" {
				first = i
			}
		}
		for last = first + 1; tk.Word(last) != ")" && tk.Word(last) != "Vino" && tk.Word(last) != "En"; last++ {
		}
		td.pred = []tokSpan{{first, last, 0}}
		m.trim(td)
		if got := td.spans()[0].Text; got != want {
			t.Errorf("trim in %q: %q, want %q", text, got, want)
		}
	}
}

// A word that often comes just before a type's gold spans and never begins
// one is learnt as a title, and trimmed, with its period, from the start of
// the CRF's spans of that type; a word that begins some gold span is not.
func TestTitlesAreTrimmed(t *testing.T) {
	types := []SpanType{{"NAME", "DOCTOR"}}
	var docs []pipeline.Document
	var toks []*Tokens
	for i, name := range []string{"Ana Ruiz", "Luis Gil", "Eva Sanz", "Juan Mora", "Rosa Vila", "Sara Bravo"} {
		title := "Dr. "
		if i == 5 {
			title = "Remitido por "
		}
		text := "Informe. " + title + name + " firmó."
		start := len([]rune("Informe. " + title))
		docs = append(docs, pipeline.Document{Text: text, Spans: []pipeline.Span{
			{Start: start, End: start + len([]rune(name)), Category: "NAME", Type: "DOCTOR"},
		}})
		toks = append(toks, Tokenize(text))
	}
	// A number or an initial before 5 spans is no title.
	for _, title := range []string{"46 ", "J. "} {
		for range 5 {
			text := "Visto por " + title + "Ana Ruiz."
			start := len([]rune("Visto por " + title))
			docs = append(docs, pipeline.Document{Text: text, Spans: []pipeline.Span{
				{Start: start, End: start + len("Ana Ruiz"), Category: "NAME", Type: "DOCTOR"},
			}})
			toks = append(toks, Tokenize(text))
		}
	}
	// "Dr" precedes 5 spans and begins none; "por" precedes one.
	titles := titleWords(toks, goldTokenSpans(docs, toks, types), types)
	if want := []string{"dr"}; !slices.Equal(titles["DOCTOR"], want) {
		t.Fatalf("titles %v, want %v", titles["DOCTOR"], want)
	}
	// Once a gold span begins with it, it is part of names, not a title.
	begun := pipeline.Document{Text: "Dr Ana Ruiz.", Spans: []pipeline.Span{{Start: 0, End: 11, Category: "NAME", Type: "DOCTOR"}}}
	docs, toks = append(docs, begun), append(toks, Tokenize(begun.Text))
	if got := titleWords(toks, goldTokenSpans(docs, toks, types), types); len(got["DOCTOR"]) > 0 {
		t.Fatalf("titles %v after a span that begins with one, want none", got["DOCTOR"])
	}
	m := &Model{Config: DefaultConfig(), Types: types}
	m.labels = newLabels(types)
	m.learnt.Titles = titles
	for _, c := range []struct{ text, span, want string }{
		{"Dr. Pedro Gómez firmó", "Dr. Pedro Gómez", "Pedro Gómez"},
		{"DR Pedro Gómez firmó", "DR Pedro Gómez", "Pedro Gómez"},
		{"Dr. firmó", "Dr.", "Dr."}, // the title is all the span holds
	} {
		tk := Tokenize(c.text)
		td := &taggedDoc{tk: tk, ix: pipeline.NewIndex(c.text), model: m}
		last := 0
		for last < len(tk.Tokens) && tk.Tokens[last].End <= len(c.span) {
			last++
		}
		td.pred = []tokSpan{{0, last, 0}}
		m.trim(td)
		if got := td.spans()[0].Text; got != c.want {
			t.Errorf("trim of %q in %q: %q, want %q", c.span, c.text, got, c.want)
		}
	}
}

// End to end on a synthetic longitudinal corpus: the model learns names only
// from "Paciente:" fields, so it misses a bare name in another record's
// narrative; propagation across the patient's records recovers it, and does
// not spill into another patient's record.
func TestTagRecoversNameAcrossRecords(t *testing.T) {
	given := []string{"Ernesto", "Lucía", "Marta", "Jorge", "Pilar", "Andrés", "Elena", "Tomás", "Rosa", "Iván"}
	family := []string{"Rivera", "Bueno", "Navarro", "Castro", "Molina", "Ortega", "Prieto", "Vidal", "Soler", "Campos"}
	narrative := []string{"Refiere dolor abdominal desde ayer.", "Presenta fiebre y tos.", "Acude a control rutinario.", "Niega alergias conocidas."}
	var train []pipeline.Document
	for i := 0; i < 40; i++ {
		name := given[i%len(given)] + " " + family[(i*3+1)%len(family)]
		head := "Paciente: "
		text := head + name + ".\n" + narrative[i%len(narrative)] + "\n" + narrative[(i+1)%len(narrative)] + "\n"
		train = append(train, pipeline.Document{ID: fmt.Sprintf("t%d", i), Text: text, Spans: []pipeline.Span{
			{Start: len(head), End: len(head) + len([]rune(name)), Category: "NAME", Type: "PATIENT"},
		}})
	}
	cfg := DefaultConfig()
	cfg.Features.Lexicon = "" // only what the corpus teaches
	cfg.Training.MaxIterations = 50
	cfg.Post.PropagateMinSpans = 1
	m, err := Train(context.Background(), train, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(m.learnt.Propagate, "PATIENT") {
		t.Fatalf("PATIENT not learnt as a trusted type: %v", m.learnt.Propagate)
	}
	docs := []pipeline.Document{
		{ID: "500-01", Patient: "500", Text: "Paciente: Harlan Valdez.\nAcude a control rutinario.\n"},
		{ID: "500-02", Patient: "500", Text: "Control.\nHoy Harlan Valdez refiere dolor abdominal.\n"},
		{ID: "600-01", Patient: "600", Text: "Control.\nHoy Harlan Valdez refiere dolor abdominal.\n"},
	}
	names := func(out []pipeline.Document) map[string][]string {
		got := map[string][]string{}
		for _, d := range out {
			for _, s := range d.Spans {
				got[d.ID] = append(got[d.ID], s.Type+":"+s.Text)
			}
		}
		return got
	}
	before, err := m.Tag(context.Background(), docs, TagOptions{NoPostProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	after, err := m.Tag(context.Background(), docs, TagOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, a := names(before), names(after)
	if !reflect.DeepEqual(b["500-01"], []string{"PATIENT:Harlan Valdez"}) || len(b["500-02"]) != 0 {
		t.Fatalf("the CRF alone should find the field and miss the narrative: %q", b)
	}
	if !reflect.DeepEqual(a["500-02"], []string{"PATIENT:Harlan Valdez"}) {
		t.Errorf("record 500-02 after propagation: %q, want the name", a["500-02"])
	}
	if len(a["600-01"]) != 0 {
		t.Errorf("another patient's record got %q", a["600-01"])
	}
}

// Tagging's word cache and phrase memo give every token the attributes emit
// gives it, in emit's order, whether a word is new, cached or the cache was
// started again between documents, at any window.
func TestWordCacheGivesEmitsAttributes(t *testing.T) {
	var train []pipeline.Document
	for i := range 30 {
		name := []string{"Ana Ruiz", "JORGE Prieto", "Elena Soler"}[i%3]
		head := fmt.Sprintf("Paciente: ")
		text := head + name + fmt.Sprintf(".\nEdad: %d años. Ingresa el 12/0%d/2019 en Madrid.\n", 20+i, 1+i%9)
		train = append(train, pipeline.Document{ID: fmt.Sprintf("t%d", i), Text: text, Spans: []pipeline.Span{
			{Start: len(head), End: len(head) + len([]rune(name)), Category: "NAME", Type: "PATIENT"},
		}})
	}
	docs := []string{
		"Paciente: Ana Ruiz.\nEdad: 31 años. Ingresa el 12/03/2019 en Madrid.\n",
		"Madrid",
		"",
		"INGRESA  ingresa Ingresa 70yoM, en Madrid el 3-4-19; Paciente Ruiz (Ruiz).",
		"Paciente: Ana Ruiz.\nEdad: 31 años.",
	}
	listed := map[string]bool{} // the prefixes of the lists the documents hit
	for _, window := range []int{0, 1, 3} {
		cfg := DefaultConfig()
		cfg.Features.Window = window
		cfg.Training.MaxIterations = 5
		m, err := Train(context.Background(), train, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, max := range []int{0, 3} {
			c := wordCache{max: max}
			var memo phraseMemo
			for pass := range 2 {
				for _, text := range docs {
					dm := m.ext.prepare(Tokenize(text), &memo)
					got, _ := m.sequenceOf(m.ext, dm, &c, nil)
					d := m.ext.prepare(Tokenize(text), nil)
					if !reflect.DeepEqual(dm.lists, d.lists) {
						t.Fatalf("%q: the phrase memo gave the lists %v, want %v", text, dm.lists, d.lists)
					}
					for _, hits := range d.lists {
						for _, h := range hits {
							listed[h.name[:2]] = true
						}
					}
					want := sequence{off: []int32{0}}
					for i := range d.tk.Tokens {
						m.ext.emit(d, i, nil, func(b []byte) {
							if id, ok := m.attrIndex[string(b)]; ok {
								want.attrs = append(want.attrs, id)
							}
						})
						want.off = append(want.off, int32(len(want.attrs)))
					}
					if !slices.Equal(got.off, want.off) || !slices.Equal(got.attrs, want.attrs) {
						t.Fatalf("window %d, cache bound %d, pass %d, %q:\ngot  %v %v\nwant %v %v",
							window, max, pass, text, got.off, got.attrs, want.off, want.attrs)
					}
				}
			}
		}
	}
	if !listed["d="] || !listed["g="] {
		t.Errorf("the documents hit lists %v: want both the lexicon's (d=) and the gazetteer's (g=)", listed)
	}
}
