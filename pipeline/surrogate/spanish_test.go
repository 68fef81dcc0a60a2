package surrogate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
)

func TestSpanishDates(t *testing.T) {
	es := dateReading{dmy: true, lang: "es"}
	for _, c := range []struct {
		in   string
		days int
		want string
	}{
		{"5 de marzo de 2014", 31, "5 de abril de 2014"},
		{"marzo de 2014", 366, "marzo de 2015"},
		{"febrero y abril de 2002", 59, "abril y junio de 2002"},
		{"5 y 7 de marzo", 2, "7 y 9 de marzo"},
		{"06/01/2016", 1, "07/01/2016"},
		{"Septiembre de 2000", 92, "Diciembre de 2000"},
		{"mar-02", 31, "abr-02"}, // marzo in a Spanish corpus, not March
	} {
		d, ok := parseDate(c.in, es)
		if !ok {
			t.Errorf("%q: not read", c.in)
			continue
		}
		if got := d.shifted(c.days); got != c.want {
			t.Errorf("%q shifted %d days = %q, want %q", c.in, c.days, got, c.want)
		}
	}
	if _, ok := parseDate("16/018/1961", es); ok {
		t.Error("16/018/1961 read as a date")
	}
}

// A bare day and month is listed for review only when either could be the
// day: a number above 12 settles the order.
func TestOnlyUnsettledDatesAreAmbiguous(t *testing.T) {
	en, es := dateReading{lang: "en"}, dateReading{dmy: true, lang: "es"}
	for _, c := range []struct {
		in        string
		r         dateReading
		ambiguous bool
	}{
		{"8/31", en, false}, {"31/8", en, false}, {"3/4", en, true}, {"12/12", en, true},
		{"31/8", es, false}, {"8/31", es, false}, {"06/01", es, true},
	} {
		d, ok := parseDate(c.in, c.r)
		if !ok {
			t.Errorf("%q (%s): not read", c.in, c.r.lang)
			continue
		}
		if d.ambiguous != c.ambiguous {
			t.Errorf("%q (%s): ambiguous %v, want %v", c.in, c.r.lang, d.ambiguous, c.ambiguous)
		}
	}
}

// TestDateCaseOfEachMention: a date written twice in different case keeps
// each mention's case, and the check names no interval error (issue 19).
func TestDateCaseOfEachMention(t *testing.T) {
	text := "Ingresó en Septiembre de 2000. Alta en septiembre de 2000."
	doc := pipeline.Document{ID: "1", Patient: "p", Text: text, Spans: []pipeline.Span{
		{Start: 11, End: 29, Text: "Septiembre de 2000", Category: "DATE", Type: "DATE"},
		{Start: 39, End: 57, Text: "septiembre de 2000", Category: "DATE", Type: "DATE"},
	}}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 3).Run([]pipeline.Document{doc}, Store{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.Docs[0].Spans[0].Text, res.Docs[0].Spans[1].Text
	if strings.ToLower(a) != b || a == b {
		t.Errorf("mentions %q and %q: want one date, each in its own case", a, b)
	}
	if rep := Check([]pipeline.Document{doc}, res, pol); !rep.OK() {
		t.Errorf("check: %+v", rep.IntervalErrors)
	}
}

func TestCodesAndWords(t *testing.T) {
	g := &gen{rng: rand.New(rand.NewPCG(1, 2))}
	for _, c := range []struct{ in, keep string }{
		{"Residente de 5° año", "Residente de "},
		{"NHC 1234567", " "},
		{"Bajo A", "Bajo "},
	} {
		got := g.shape(c.in)
		if !strings.Contains(got, c.keep) || got == c.in || len([]rune(got)) != len([]rune(c.in)) {
			t.Errorf("shape(%q) = %q: want its words kept and its codes replaced", c.in, got)
		}
	}
	if hasCode("Lactante") || hasCode("raza caucásica") || !hasCode("MRN") || !hasCode("5B") {
		t.Error("hasCode: words are not codes; MRN and 5B are")
	}
	for i := 0; i < 50; i++ {
		dni := g.shape("12345678Z")
		if p, ok := dniParts(dni, true); !ok || dniLetters[atoi(p.digits)%23] != dni[8] {
			t.Fatalf("shape(12345678Z) = %q: not a DNI with its check letter", dni)
		}
		nie := g.shape("X1234567L")
		if p, ok := dniParts(nie, true); !ok || p.prefix == 0 {
			t.Fatalf("shape(X1234567L) = %q: not a NIE", nie)
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// TestOwnLabelsThroughMappings: MEDDOCAN's own labels reach the i2b2 rules
// through the built-in mapping, and the run says so.
func TestOwnLabelsThroughMappings(t *testing.T) {
	text := "Nombre: Alberto Palacios Hernández. Localidad: Madrid. Sexo: H."
	doc := pipeline.Document{ID: "1", Text: text, Spans: []pipeline.Span{
		{Start: 8, End: 34, Text: "Alberto Palacios Hernández", Category: "NOMBRE_SUJETO_ASISTENCIA", Type: "NOMBRE_SUJETO_ASISTENCIA"},
		{Start: 47, End: 53, Text: "Madrid", Category: "TERRITORIO", Type: "TERRITORIO"},
		{Start: 61, End: 62, Text: "H", Category: "SEXO_SUJETO_ASISTENCIA", Type: "SEXO_SUJETO_ASISTENCIA"},
	}}
	pol := DefaultPolicy()
	pol.Language = "es" // too short a note to tell
	res, err := New(pol, nil, 5).Run([]pipeline.Document{doc}, Store{})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Docs[0]
	if res.Language != "es" || out.Spans[2].Text != "H" || out.Spans[0].Text == doc.Spans[0].Text ||
		strings.Count(out.Spans[0].Text, " ") != 2 || !resources.ForLanguage("es").IsCity(out.Spans[1].Text) {
		t.Errorf("got %q (language %s)", out.Text, res.Language)
	}
	byLabel := map[string]LabelRule{}
	for _, l := range res.Labels {
		byLabel[l.Label] = l
	}
	if l := byLabel["NOMBRE_SUJETO_ASISTENCIA"]; l.Via != "meddocan-i2b2" || l.As != "NAME/PATIENT" || l.Strategy != Name {
		t.Errorf("NOMBRE_SUJETO_ASISTENCIA: %+v", l)
	}
	if l := byLabel["SEXO_SUJETO_ASISTENCIA"]; l.Strategy != Keep {
		t.Errorf("SEXO_SUJETO_ASISTENCIA: %+v", l)
	}
}

// TestSitePack: a policy's resourceFiles replace the pack's lists; a policy
// naming a directory, a pack that is not built in or a list of no known name
// is refused, and a bad list fails the run naming the list and its line.
func TestSitePack(t *testing.T) {
	pol := DefaultPolicy()
	pol.ResourceFiles = map[string]string{"zipcodes.tsv": "Villarriba\tMadrid\t28\n"}
	pol.Language = "es"
	text := "Vive en Parla."
	doc := pipeline.Document{ID: "1", Text: text, Spans: []pipeline.Span{{Start: 8, End: 13, Text: "Parla", Category: "LOCATION", Type: "CITY"}}}
	res, err := New(pol, nil, 1).Run([]pipeline.Document{doc}, Store{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Docs[0].Spans[0].Text; got != "Villarriba" {
		t.Errorf("city %q, want the site's only city", got)
	}
	pol.ResourceFiles = map[string]string{"zipcodes.tsv": "Villarriba\tMadrid\n"}
	if _, err := New(pol, nil, 1).Run([]pipeline.Document{doc}, Store{}); err == nil || !strings.Contains(err.Error(), "resourceFiles zipcodes.tsv:1") {
		t.Errorf("a bad list: %v", err)
	}
	for _, c := range []struct {
		resources string
		files     map[string]string
		want      string
	}{
		{resources: t.TempDir(), want: "resources is a server path"},
		{resources: "fr", want: `no built-in pack "fr" (known: en, es)`},
		{files: map[string]string{"../zipcodes.tsv": "x"}, want: `"../zipcodes.tsv" is no list's name`},
		{files: map[string]string{"zipcodes.tsv": strings.Repeat("x", MaxResourceFiles+1)}, want: "more than the 4194304"},
	} {
		pol := DefaultPolicy()
		pol.Resources, pol.ResourceFiles = c.resources, c.files
		if err := pol.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("resources %q, files %d: %v, want %q", c.resources, len(c.files), err, c.want)
		}
	}
}

// TestSpanishPlacesKeepTheirShape: surrogates of places, hospitals and
// institutions are drawn as a corpus's are distributed, so that a tagger
// trained on the surrogate corpus learns what the original teaches: a city
// by population (notes name Madrid and Barcelona often, Ayna rarely), never
// a province for a city that is both ("Madrid"), and hospitals and
// institutions that start as the original does and have as many words.
func TestSpanishPlacesKeepTheirShape(t *testing.T) {
	res := resources.ForLanguage("es")
	places := []string{"Madrid", "Santiago de Compostela", "Ciudad Real", "E-41013"}
	named := []string{"Hospital Universitario La Paz", "Hospital General", "Hospital Universitario Virgen del Rocío",
		"Complejo Hospitalario Universitario de Albacete", "Centro de Salud Chantrea", "Servicio Castellano-Leonés de Salud",
		"Allergan", "Instituto de Medicina Legal"}
	var docs []pipeline.Document
	for i := range 300 {
		var b strings.Builder
		var spans []pipeline.Span
		for k, v := range append(append([]string{}, places...), named...) {
			typ := "TERRITORIO"
			switch {
			case k >= len(places)+len(named)-3:
				typ = "INSTITUCION"
			case k >= len(places):
				typ = "HOSPITAL"
			}
			b.WriteString("En ")
			start := len([]rune(b.String()))
			b.WriteString(v)
			spans = append(spans, pipeline.Span{Start: start, End: start + len([]rune(v)), Text: v, Category: typ, Type: typ})
			b.WriteString(". ")
		}
		docs = append(docs, pipeline.Document{ID: strconv.Itoa(i), Patient: "p" + strconv.Itoa(i), Text: b.String(), Spans: spans})
	}
	pol := DefaultPolicy()
	pol.Language = "es"
	out, err := New(pol, nil, 9).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	if rep := Check(docs, out, pol); !rep.OK() {
		t.Fatalf("the check fails: %d leaks", len(rep.Leaks))
	}
	madrid := map[string]int{}
	for i, d := range out.Docs {
		for k, s := range d.Spans {
			o := docs[i].Spans[k]
			if len(strings.Fields(s.Text)) != len(strings.Fields(o.Text)) {
				t.Errorf("%q became %q: not as many words", o.Text, s.Text)
			}
			if o.Text == "E-41013" {
				if !strings.HasPrefix(s.Text, "E-") || !isDigits(s.Text[2:]) || len(s.Text) != 7 {
					t.Errorf("%q became %q: not a postal code after its country's letter", o.Text, s.Text)
				}
			} else if o.Type == "TERRITORIO" && !res.IsCity(s.Text) {
				t.Errorf("%q became %q: not a city", o.Text, s.Text)
			}
			if first := strings.Fields(o.Text)[0]; o.Type == "HOSPITAL" && !strings.HasPrefix(s.Text, first+" ") {
				t.Errorf("%q became %q: another kind of place", o.Text, s.Text)
			}
			if o.Text == "Madrid" {
				madrid[s.Text]++
			}
		}
	}
	// Barcelona, the biggest city after Madrid, is a tenth of the pack's
	// people in one-word cities: drawn for about 30 of 300 patients, where
	// a draw of every city alike would give it about 2.
	if madrid["Barcelona"] < 15 {
		t.Errorf("Madrid's surrogates over 300 patients: Barcelona %d times (of %d cities); want the big cities often", madrid["Barcelona"], len(madrid))
	}
}

// A Spanish corpus names its people with Spanish names, even where it has
// more distinct doctors (corpus scope) than the pack has first names, and
// every first name of the pack is some patient's: the pack's names then
// serve two doctors, or a name of another patient's records, before any
// English name does. A name no list knows keeps the sex its ending tells.
func TestSpanishNamesStaySpanish(t *testing.T) {
	es := resources.ForLanguage("es")
	var firsts []string
	for _, sex := range []resources.Sex{resources.Female, resources.Male} {
		for _, n := range es.FirstNames(sex) {
			firsts = append(firsts, n.Text)
		}
	}
	surnames := es.Surnames()
	english := resources.ForLanguage("en").FirstNames(resources.Female)
	var docs []pipeline.Document
	add := func(i int, text string, spans ...pipeline.Span) {
		docs = append(docs, pipeline.Document{ID: strconv.Itoa(i), Patient: "p" + strconv.Itoa(i), Text: text, Spans: spans})
	}
	span := func(text, sub, typ string) pipeline.Span {
		start := len([]rune(text[:strings.Index(text, sub)]))
		return pipeline.Span{Start: start, End: start + len([]rune(sub)), Text: sub, Category: typ, Type: typ}
	}
	for i, f := range firsts { // every pack first name is a patient's
		doctor := english[i].Text + " " + surnames[i%len(surnames)].Text // a doctor's first name for each patient
		text := "Paciente " + f + " Arzoz, visto por " + doctor + ". Inmaculada Ochandorena, su madre."
		add(i, text, span(text, f+" Arzoz", "PATIENT"), span(text, doctor, "DOCTOR"), span(text, "Inmaculada Ochandorena", "PATIENT"))
	}
	pol := DefaultPolicy()
	pol.Language = "es"
	out, err := New(pol, nil, 5).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	if rep := Check(docs, out, pol); !rep.OK() {
		t.Fatalf("the check fails: %d leaks", len(rep.Leaks))
	}
	for i, d := range out.Docs {
		for k, s := range d.Spans {
			words := strings.Fields(s.Text)
			for _, w := range words {
				if !particles[fold(w)] && !es.IsFirstName(w) && !es.IsSurname(w) {
					t.Errorf("%q became %q: %q is no name of the Spanish pack", docs[i].Spans[k].Text, s.Text, w)
				}
			}
			if docs[i].Spans[k].Text == "Inmaculada Ochandorena" {
				if sex, _ := es.SexOf(words[0]); sex != resources.Female {
					t.Errorf("Inmaculada became %q (%v), want a woman's name", words[0], sex)
				}
			}
		}
	}
}

// A postal code follows its city's surrogate, before or after it in the
// text, in Spanish and in English; a code of no city the records name is
// drawn freely.
func TestPostalCodesFollowTheirCity(t *testing.T) {
	for _, c := range []struct {
		lang, typ, zipType string
		text               []string // city, code: in this order in the note
		own                bool     // the code is the city's own, not another town's of its province
	}{
		{"es", "TERRITORIO", "TERRITORIO", []string{"Madrid", "28035"}, true},
		{"es", "TERRITORIO", "TERRITORIO", []string{"08014", "Barcelona"}, true},
		// Another town of the city's province: a town of the surrogate's.
		{"es", "TERRITORIO", "TERRITORIO", []string{"Madrid", "28319"}, false},
		{"es", "TERRITORIO", "TERRITORIO", []string{"09200", "Burgos"}, false},
		{"en", "CITY", "ZIP", []string{"Boston", "02115"}, true},
		{"en", "CITY", "ZIP", []string{"60614", "Chicago"}, true},
	} {
		res := resources.ForLanguage(c.lang)
		var docs []pipeline.Document
		for i := range 40 {
			var b strings.Builder
			var spans []pipeline.Span
			for _, v := range c.text {
				typ := c.typ
				if isDigits(v) {
					typ = c.zipType
				}
				b.WriteString("Vive en ")
				start := len([]rune(b.String()))
				b.WriteString(v)
				spans = append(spans, pipeline.Span{Start: start, End: start + len([]rune(v)), Text: v, Category: "LOCATION", Type: typ})
				b.WriteString(". ")
			}
			docs = append(docs, pipeline.Document{ID: strconv.Itoa(i), Patient: "p" + strconv.Itoa(i), Text: b.String(), Spans: spans})
		}
		pol := DefaultPolicy()
		pol.Language = c.lang
		out, err := New(pol, nil, 3).Run(docs, Store{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range out.Docs {
			var city, zip string
			for _, s := range d.Spans {
				if isDigits(s.Text) {
					zip = s.Text
				} else {
					city = s.Text
				}
			}
			switch {
			case c.own && !res.CityHasZIP(city, zip):
				t.Errorf("%v became %q and %q: the code is none of the city's", c.text, city, zip)
			case !c.own && (!res.CityProvinceHasZIP(city, zip) || zip[2] == '0'):
				t.Errorf("%v became %q and %q: not a town's code of the city's province", c.text, city, zip)
			}
		}
	}
}

// Surnames get surnames: every word after a label of surnames, and in
// Spanish a word after the first that is not surely a first name (Spanish
// names end with two surnames); compound first names stay first names.
func TestSpanishSurnamesStaySurnames(t *testing.T) {
	for before, want := range map[string]bool{"Apellidos: ": true, "Apellidos:  ": true, "Last name: ": true,
		"Nombre: ": false, "susapellidos ": false, "": false} {
		if labelsSurnames(before) != want {
			t.Errorf("labelsSurnames(%q) = %v", before, !want)
		}
	}
	es := resources.ForLanguage("es")
	text := "Apellidos: Higueras Patiño.\nMédico: Jorge Subirá Ríos.\nMédico: Juan Ramón Torrecilla.\n"
	var spans []pipeline.Span
	for _, v := range []struct{ text, typ string }{{"Higueras Patiño", "PATIENT"}, {"Jorge Subirá Ríos", "DOCTOR"}, {"Juan Ramón Torrecilla", "DOCTOR"}} {
		start := len([]rune(text[:strings.Index(text, v.text)]))
		spans = append(spans, pipeline.Span{Start: start, End: start + len([]rune(v.text)), Text: v.text, Category: "NAME", Type: v.typ})
	}
	var docs []pipeline.Document
	for i := range 20 { // 20 patients: the draws vary
		docs = append(docs, pipeline.Document{ID: strconv.Itoa(i), Patient: strconv.Itoa(i), Text: text, Spans: spans})
	}
	pol := DefaultPolicy()
	pol.Language = "es"
	out, err := New(pol, nil, 11).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	surname := func(w string) bool { return es.IsSurname(w) || !es.IsFirstName(w) }
	for _, d := range out.Docs {
		ap, subira, ramon := strings.Fields(d.Spans[0].Text), strings.Fields(d.Spans[1].Text), strings.Fields(d.Spans[2].Text)
		if !surname(ap[0]) || !surname(ap[1]) {
			t.Errorf("Apellidos: Higueras Patiño became %q: a first name among the surnames", d.Spans[0].Text)
		}
		if !surname(subira[1]) {
			t.Errorf("Jorge Subirá Ríos became %q: a first name for the first surname", d.Spans[1].Text)
		}
		if !es.IsFirstName(ramon[1]) {
			t.Errorf("Juan Ramón Torrecilla became %q: the second first name lost", d.Spans[2].Text)
		}
	}
}

// TestRelativesNamesInKeptValues: a relative's name inside a value the policy
// keeps (FAMILIARES, OTHER) is replaced as a name, the same in every note of
// the patient, and the words around it stay; relations alone stay as written.
func TestRelativesNamesInKeptValues(t *testing.T) {
	fam := func(text, value string) pipeline.Span {
		start := len([]rune(text[:strings.LastIndex(text, value)]))
		return pipeline.Span{Start: start, End: start + len([]rune(value)), Text: value, Category: "OTHER", Type: "FAMILIARES_SUJETO_ASISTENCIA"}
	}
	t1 := "Paciente de 40 años que vive con su madre Teresa Rodríguez y su esposo, Diego Maldonado Jiménez. Hijo de una prima hermana con síndrome de Down."
	t2 := "Acude acompañado por su madre Teresa Rodríguez. Tío materno con esquizofrenia. Avisamos a Teresa en el teléfono de su casa."
	docs := []pipeline.Document{
		{ID: "1", Patient: "p", Text: t1, Spans: []pipeline.Span{
			fam(t1, "madre Teresa Rodríguez"), fam(t1, "Diego Maldonado Jiménez"), fam(t1, "Hijo de una prima hermana")}},
		{ID: "2", Patient: "p", Text: t2, Spans: []pipeline.Span{fam(t2, "madre Teresa Rodríguez"), fam(t2, "Tío materno"), fam(t2, "Teresa")}},
	}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 5).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Docs {
		for _, w := range []string{"Teresa", "Rodríguez", "Diego", "Maldonado", "Jiménez"} {
			if strings.Contains(d.Text, w) {
				t.Errorf("note %s still names %q: %s", d.ID, w, d.Text)
			}
		}
	}
	s1, s2 := res.Docs[0].Spans, res.Docs[1].Spans
	if !strings.HasPrefix(s1[0].Text, "madre ") || s1[0].Text != s2[0].Text {
		t.Errorf("the mother is %q in one note and %q in the other; want \"madre \" and one name", s1[0].Text, s2[0].Text)
	}
	if first := strings.Fields(strings.TrimPrefix(s1[0].Text, "madre "))[0]; s2[2].Text != first {
		t.Errorf("\"Teresa\" alone became %q, and %q in the full name", s2[2].Text, first)
	}
	if got := strings.Fields(s1[1].Text); len(got) != 3 {
		t.Errorf("the husband's three-word name became %q", s1[1].Text)
	}
	if s1[2].Text != "Hijo de una prima hermana" || s2[1].Text != "Tío materno" {
		t.Errorf("relations without a name changed: %q, %q", s1[2].Text, s2[1].Text)
	}
	if rep := Check(docs, res, pol); !rep.OK() {
		t.Errorf("check: %d leaks %v, %d inconsistent", len(rep.Leaks), rep.Leaks, len(rep.Inconsistent))
	}
}

// TestSurnamesWithoutFirstNameAreFound: the check finds a patient's name
// copied unannotated without its first name ("Sr. García López") or its
// second surname, not only whole.
func TestSurnamesWithoutFirstNameAreFound(t *testing.T) {
	t1 := "Paciente: Juan García López, de 40 años."
	t2 := "Revisión. El Sr. García López refiere mejoría; Juan García acude solo."
	docs := []pipeline.Document{
		{ID: "1", Patient: "p", Text: t1, Spans: []pipeline.Span{{Start: 10, End: 27, Text: "Juan García López", Category: "NAME", Type: "PATIENT"}}},
		{ID: "2", Patient: "p", Text: t2},
	}
	pol, err := ParsePolicy([]byte(`{"propagate": false}`)) // else the run replaces them (TestPropagatesNameParts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := New(pol, nil, 5).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	rep := Check(docs, res, pol)
	var found []string
	for _, l := range rep.Unannotated {
		found = append(found, l.Value)
	}
	slices.Sort(found)
	if want := []string{"García López", "Juan García"}; !slices.Equal(found, want) {
		t.Errorf("unannotated finds %q, want %q", found, want)
	}
	if len(rep.Leaks) > 0 {
		t.Errorf("leaks %+v", rep.Leaks)
	}
}

// TestSpanishAddressUnits: the floor and door of a Spanish address ("6
// 2ºA", "23 1oE", "Nº 10", "Ed.ICA") keep their signs and unit words, so
// that only the numbers, the door's letter and the street's name change;
// none becomes a name ("2Monroy").
func TestSpanishAddressUnits(t *testing.T) {
	res := resources.ForLanguage("es")
	for _, c := range []struct{ street, want string }{
		{"Calle Francisco del Pino, 6 2ºA", "kpnpkpnppdpdkl"},
		{"C/ Antonio Acuña. Nº 10 5ºA izq", "kppnpnppkkpdpdklpk"},
		{"Avda. Juan Carlos I, 23 1oE", "kppnpnplppdpdkl"},
		{"Pz de Pontevedra,2, Ed.ICA, Esc.2a,5ºC", "kpkpnpdppkpnppkpdkpdkl"},
	} {
		var kinds []byte
		for _, tok := range splitStreet(res, c.street) {
			kinds = append(kinds, tok.kind)
		}
		if string(kinds) != c.want {
			var toks []string
			for _, tok := range splitStreet(res, c.street) {
				toks = append(toks, fmt.Sprintf("%q:%c", tok.text, tok.kind))
			}
			t.Errorf("%q: kinds %s, want %s (%s)", c.street, kinds, c.want, strings.Join(toks, " "))
		}
	}
}

// A province written after its city, or one that holds a city of the
// patient's records, becomes the province of that city's surrogate, and the
// city's surrogate leaves the province: an address stays one real place.
func TestProvincesFollowTheirCity(t *testing.T) {
	for _, c := range []struct {
		lang, cityType, stateType string
		text                      string
		city, state               string // as in text
	}{
		{"es", "TERRITORIO", "TERRITORIO", "Vive en Los Llanos de Aridane Tenerife.", "Los Llanos de Aridane", "Tenerife"},
		{"es", "TERRITORIO", "TERRITORIO", "Natural de Los Llanos de Aridane (Tenerife).", "Los Llanos de Aridane", "Tenerife"},
		{"es", "TERRITORIO", "TERRITORIO", "Domicilio en Elche, Alicante.", "Elche", "Alicante"},
		{"es", "TERRITORIO", "TERRITORIO", "Vive en Telde. Trasladado desde Gran Canaria.", "Telde", "Gran Canaria"},
		{"es", "TERRITORIO", "TERRITORIO", "Procede de Bizkaia. Vive en Bilbao.", "Bilbao", "Bizkaia"},
		{"en", "CITY", "STATE", "Lives in Boston, MA 02115.", "Boston", "MA"},
	} {
		res := resources.ForLanguage(c.lang)
		span := func(v, typ string) pipeline.Span {
			i := strings.Index(c.text, v)
			start := len([]rune(c.text[:i]))
			return pipeline.Span{Start: start, End: start + len([]rune(v)), Text: v, Category: "LOCATION", Type: typ}
		}
		var docs []pipeline.Document
		for i := range 40 {
			docs = append(docs, pipeline.Document{ID: strconv.Itoa(i), Patient: "p" + strconv.Itoa(i), Text: c.text,
				Spans: []pipeline.Span{span(c.city, c.cityType), span(c.state, c.stateType)}})
		}
		pol := DefaultPolicy()
		pol.Language = c.lang
		out, err := New(pol, nil, 5).Run(docs, Store{})
		if err != nil {
			t.Fatal(err)
		}
		orig, _ := res.StateOf(c.state)
		for _, d := range out.Docs {
			var city, state string
			for _, s := range d.Spans {
				if s.Start == d.Spans[0].Start {
					city = s.Text
				} else {
					state = s.Text
				}
			}
			place, ok := res.PlaceOfCity(city)
			st, okState := res.StateOf(state)
			switch {
			case !ok || !okState:
				t.Errorf("%q became %q and %q: not a listed city and state", c.text, city, state)
			case !res.CityIsIn(place.City, st.Name):
				t.Errorf("%q became %q and %q: the city is not in the state", c.text, city, state)
			case st == orig:
				t.Errorf("%q became %q and %q: the state stayed", c.text, city, state)
			}
		}
	}
}

// An address follows its owner's new name: the surname in it becomes the
// surname's surrogate, the initials around it go through the letter map.
func TestEmailFollowsTheNewName(t *testing.T) {
	text := "Responsable clínico: Dra. Teresa Pastor Navarro. E-mail autor: tpastorn@yahoo.es"
	name, mail := "Teresa Pastor Navarro", "tpastorn@yahoo.es"
	ns, ms := strings.Index(text, name), strings.Index(text, mail)
	doc := pipeline.Document{ID: "1", Text: text, Spans: []pipeline.Span{
		{Start: ns, End: ns + len(name), Text: name, Category: "NOMBRE_PERSONAL_SANITARIO", Type: "NOMBRE_PERSONAL_SANITARIO"},
		{Start: ms - 1, End: ms - 1 + len(mail), Text: mail, Category: "CORREO_ELECTRONICO", Type: "CORREO_ELECTRONICO"},
	}}
	doc.Spans[1].Start, doc.Spans[1].End = len([]rune(text[:ms])), len([]rune(text[:ms]))+len(mail)
	doc.Spans[0].Start, doc.Spans[0].End = len([]rune(text[:ns])), len([]rune(text[:ns]))+len([]rune(name))
	pol := DefaultPolicy()
	pol.Language = "es"
	for seed := uint64(1); seed <= 5; seed++ {
		res, err := New(pol, nil, seed).Run([]pipeline.Document{doc}, Store{})
		if err != nil {
			t.Fatal(err)
		}
		words := strings.Fields(res.Docs[0].Spans[0].Text)
		if len(words) != 3 {
			t.Fatalf("name %q", res.Docs[0].Spans[0].Text)
		}
		want := strings.ToLower(words[0][:1]) + asciiWord(words[1]) + strings.ToLower(asciiWord(words[2])[:1]) + "@"
		if got := res.Docs[0].Spans[1].Text; !strings.HasPrefix(got, want) {
			t.Errorf("seed %d: %q for %q, want %s...", seed, got, res.Docs[0].Spans[0].Text, want)
		}
	}
}

// A collegiate number keeps its provinces and redraws its number.
func TestCollegiateNumbersKeepTheirProvinces(t *testing.T) {
	for _, c := range []struct {
		in, prefix string
		ok         bool
	}{
		{"28 28 17103", "28 28 ", true}, {"08-08-25574", "08-08-", true}, {"48 28 98699", "48 28 ", true},
		{"16 59 44561", "", false}, {"28 28", "", false}, {"28-28 1234", "", false}, {"14578", "", false},
	} {
		pre, rest, ok := collegiatePrefix(c.in, "es")
		if ok != c.ok || pre != c.prefix || ok && pre+rest != c.in {
			t.Errorf("%q: %q %q %v", c.in, pre, rest, ok)
		}
	}
	if _, _, ok := collegiatePrefix("28 28 17103", "en"); ok {
		t.Error("an English corpus has no collegiate numbers")
	}
}

// Under the mention scope two mentions of one name are drawn each on its
// own, and the check does not count them inconsistent.
func TestMentionScopeDrawsEachMention(t *testing.T) {
	text := "Paciente: Pilar Gómez. Acude Pilar Gómez a consulta; Pilar Gómez refiere dolor."
	var spans []pipeline.Span
	for i := 0; ; {
		j := strings.Index(text[i:], "Pilar Gómez")
		if j < 0 {
			break
		}
		s := len([]rune(text[:i+j]))
		spans = append(spans, pipeline.Span{Start: s, End: s + 11, Text: "Pilar Gómez", Category: "NAME", Type: "PATIENT"})
		i += j + 1
	}
	doc := pipeline.Document{ID: "1", Patient: "p", Text: text, Spans: spans}
	pol := DefaultPolicy()
	pol.Language = "es"
	pol.Types["PATIENT"] = Rule{Strategy: Name, Scope: ScopeMention}
	if err := pol.Validate(); err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for seed := uint64(1); seed <= 3; seed++ {
		res, err := New(pol, nil, seed).Run([]pipeline.Document{doc}, Store{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Docs[0].Spans {
			if s.Text == "Pilar Gómez" || len(strings.Fields(s.Text)) != 2 {
				t.Fatalf("%q", s.Text)
			}
			distinct[s.Text] = true
		}
		if rep := Check([]pipeline.Document{doc}, res, pol); !rep.OK() {
			t.Fatalf("the check fails: %+v", rep)
		}
	}
	if len(distinct) < 6 {
		t.Errorf("9 mentions, %d names: %v", len(distinct), distinct)
	}
}

// A country's surrogate follows the corpus's countries: mostly one the
// corpus names, never the original.
func TestCountriesFollowTheCorpus(t *testing.T) {
	pol := DefaultPolicy()
	pol.Language = "es"
	pol.Types["COUNTRY"] = Rule{Strategy: CountryS, Scope: ScopePatient} // the home country replaced too
	followsTheCorpus(t, pol, "Natural de ", "COUNTRY", "countries",
		[]string{"España", "España", "España", "España", "España", "España", "Marruecos", "Colombia", "Rumanía", "Ecuador"})
}

// followsTheCorpus gives four patients each value (written after intro, of
// type typ) and asserts that none keeps it, that at least half the
// surrogates are values the corpus names, and that the check passes.
func followsTheCorpus(t *testing.T, pol *Policy, intro, typ, what string, values []string) {
	t.Helper()
	var docs []pipeline.Document
	named := map[string]bool{}
	for i, c := range values {
		named[c] = true
		for k := range 4 {
			start := len([]rune(intro))
			docs = append(docs, pipeline.Document{ID: fmt.Sprintf("%d-%d", i, k), Patient: fmt.Sprintf("p%d-%d", i, k), Text: intro + c + ".",
				Spans: []pipeline.Span{{Start: start, End: start + len([]rune(c)), Text: c, Category: "LOCATION", Type: typ}}})
		}
	}
	res, err := New(pol, nil, 3).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	inCorpus := 0
	for i, d := range res.Docs {
		s := d.Spans[0].Text
		if s == docs[i].Spans[0].Text {
			t.Fatalf("%s kept", s)
		}
		if named[s] {
			inCorpus++
		}
	}
	if inCorpus < len(docs)/2 {
		t.Errorf("%d of %d surrogates are %s the corpus names", inCorpus, len(docs), what)
	}
	if rep := Check(docs, res, pol); !rep.OK() {
		t.Error("the check fails")
	}
}

// Surnames by frequency, the default: a surrogate may be a surname of other
// patients (common names stay common); apart, never.
func TestSurnamesByFrequency(t *testing.T) {
	common := []string{"García", "Rodríguez", "González", "Fernández", "López", "Martínez", "Sánchez", "Pérez"}
	var docs []pipeline.Document
	for p := range 120 {
		name := common[p%len(common)]
		docs = append(docs, pipeline.Document{ID: fmt.Sprint(p), Patient: fmt.Sprint(p), Text: "Sr. " + name + ".",
			Spans: []pipeline.Span{{Start: 4, End: 4 + len([]rune(name)), Text: name, Category: "NAME", Type: "PATIENT"}}})
	}
	isCommon := map[string]bool{}
	for _, n := range common {
		isCommon[n] = true
	}
	for _, c := range []struct {
		surnames string
		want     bool
	}{{SurnamesApart, false}, {"", true}, {SurnamesFrequency, true}} {
		pol := DefaultPolicy()
		pol.Language, pol.Surnames = "es", c.surnames
		res, err := New(pol, nil, 9).Run(docs, Store{})
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for i, d := range res.Docs {
			s := d.Spans[0].Text
			if s == docs[i].Spans[0].Text {
				t.Fatalf("%s: %s kept", c.surnames, s)
			}
			got = got || isCommon[s]
		}
		if got != c.want {
			t.Errorf("surnames %q: a surrogate is another patient's surname: %v", c.surnames, got)
		}
		if rep := Check(docs, res, pol); !rep.OK() {
			t.Errorf("surnames %q: the check fails", c.surnames)
		}
	}
}

// An address that joins two name words follows both, and letters left
// between name words become the start of a surname, never letter soup: the
// "alicia" of "calleja.alicia" is Alicia's surrogate, not "tszkzt".
func TestEmailFollowsEveryNameWord(t *testing.T) {
	surnames := map[string]bool{}
	for _, n := range resources.ForLanguage("es").SurrogateSurnames() {
		surnames[asciiWord(n.Text)] = true
	}
	for _, c := range []struct{ name, mail string }{
		{"Alicia Calleja Fernández", "calleja.alicia@gmail.com"},
		{"Javier Ortega Carretero", "jortegacar@wanadoo.es"},
	} {
		text := "Dra. " + c.name + ". Correo: " + c.mail
		ns, ms := len([]rune("Dra. ")), len([]rune(text))-len(c.mail)
		doc := pipeline.Document{ID: "1", Text: text, Spans: []pipeline.Span{
			{Start: ns, End: ns + len([]rune(c.name)), Text: c.name, Category: "NOMBRE_PERSONAL_SANITARIO", Type: "NOMBRE_PERSONAL_SANITARIO"},
			{Start: ms, End: ms + len(c.mail), Text: c.mail, Category: "CORREO_ELECTRONICO", Type: "CORREO_ELECTRONICO"},
		}}
		pol := DefaultPolicy()
		pol.Language = "es"
		for seed := uint64(1); seed <= 5; seed++ {
			res, err := New(pol, nil, seed).Run([]pipeline.Document{doc}, Store{})
			if err != nil {
				t.Fatal(err)
			}
			words := strings.Fields(res.Docs[0].Spans[0].Text)
			got := res.Docs[0].Spans[1].Text
			local, domain, _ := strings.Cut(got, "@")
			if !resources.ForLanguage("es").IsFreeMailDomain(domain) {
				t.Errorf("%s: %q: the domain is no public provider", c.mail, got)
			}
			switch c.mail {
			case "calleja.alicia@gmail.com":
				if want := asciiWord(words[1]) + "." + asciiWord(words[0]); local != want {
					t.Errorf("seed %d: %q for %q, want %s@...", seed, got, res.Docs[0].Spans[0].Text, want)
				}
			default:
				// An initial through the letter map, the surname's surrogate.
				rest, ok := strings.CutPrefix(local[1:], asciiWord(words[1]))
				if !ok || len(rest) != 3 {
					t.Fatalf("seed %d: %q for %q, want an initial, %s and three letters", seed, got, res.Docs[0].Spans[0].Text, asciiWord(words[1]))
				}
				prefix := false
				for s := range surnames {
					prefix = prefix || strings.HasPrefix(s, rest)
				}
				if !prefix {
					t.Errorf("seed %d: %q: %q starts no surname", seed, got, rest)
				}
			}
		}
	}
}

// A public provider becomes, mostly, one the corpus's addresses use.
func TestProvidersFollowTheCorpus(t *testing.T) {
	var docs []pipeline.Document
	for p := range 40 {
		mail := fmt.Sprintf("paciente%d@yahoo.es", p)
		text := "Correo: " + mail
		docs = append(docs, pipeline.Document{ID: fmt.Sprint(p), Patient: fmt.Sprint(p), Text: text,
			Spans: []pipeline.Span{{Start: 8, End: 8 + len(mail), Text: mail, Category: "CONTACT", Type: "EMAIL"}}})
	}
	pol := DefaultPolicy()
	pol.Language = "es"
	res, err := New(pol, nil, 5).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for _, d := range res.Docs {
		_, domain, _ := strings.Cut(d.Spans[0].Text, "@")
		if domain == "yahoo.es" {
			same++
		}
	}
	if same < len(docs)/2 {
		t.Errorf("%d of %d addresses at yahoo.es stay there: the provider does not follow the corpus", same, len(docs))
	}
}

// A collegiate number keeps its provinces though a value of the corpus is
// the province's number (an age of 28, Madrid's number).
func TestCollegiateProvinceBesideAnEqualValue(t *testing.T) {
	var docs []pipeline.Document
	for p := range 10 {
		lic := fmt.Sprintf("28 28 %d", 17100+p)
		text := "Edad: 28. Colegiado: " + lic
		docs = append(docs, pipeline.Document{ID: fmt.Sprint(p), Patient: fmt.Sprint(p), Text: text, Spans: []pipeline.Span{
			{Start: 6, End: 8, Text: "28", Category: "AGE", Type: "AGE"},
			{Start: 21, End: 21 + len(lic), Text: lic, Category: "ID_TITULACION_PERSONAL_SANITARIO", Type: "ID_TITULACION_PERSONAL_SANITARIO"}}})
	}
	pol := DefaultPolicy()
	pol.Language = "es"
	res, err := New(pol, nil, 2).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range res.Docs {
		if got := d.Spans[1].Text; !strings.HasPrefix(got, "28 28 ") || got == docs[i].Spans[1].Text {
			t.Errorf("%q became %q", docs[i].Spans[1].Text, got)
		}
	}
	if rep := Check(docs, res, pol); !rep.OK() {
		t.Error("the check fails")
	}
}

// A rule's keep list leaves those values as they are (the home country),
// replaces the others, and the check counts the kept ones as kept, not as
// leaks; "home" is the home country of the notes' language in every form.
func TestRuleKeepsTheHomeCountry(t *testing.T) {
	var docs []pipeline.Document
	for i, c := range []string{"España", "ESPAÑA", "Marruecos", "Colombia", "española"} {
		text := "Natural de " + c + "."
		docs = append(docs, pipeline.Document{ID: fmt.Sprint(i), Patient: fmt.Sprint(i), Text: text,
			Spans: []pipeline.Span{{Start: 11, End: 11 + len([]rune(c)), Text: c, Category: "PAIS", Type: "PAIS"}}})
	}
	for _, c := range []struct {
		keep []string
		home map[string]bool
	}{
		{[]string{"España"}, map[string]bool{"España": true, "ESPAÑA": true}},
		{[]string{KeepHome}, map[string]bool{"España": true, "ESPAÑA": true, "española": true}},
	} {
		pol := DefaultPolicy()
		pol.Language = "es"
		pol.Types["COUNTRY"] = Rule{Strategy: CountryS, Scope: ScopePatient, Keep: c.keep}
		res, err := New(pol, nil, 1).Run(docs, Store{})
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range res.Docs {
			orig, got := docs[i].Spans[0].Text, d.Spans[0].Text
			if c.home[orig] != (got == orig) {
				t.Errorf("keep %v: %q became %q", c.keep, orig, got)
			}
		}
		if rep := Check(docs, res, pol); !rep.OK() {
			t.Errorf("keep %v: the check fails: %d leaks", c.keep, len(rep.Leaks))
		}
	}
}

// Address numbers start as Benford's law says (1 about six times as often as
// 9); Spanish postal codes end as Correos numbers them: a capital's district
// from 01 to 40, a town's code mostly in 0.
func TestAddressNumbersRunAsRealOnes(t *testing.T) {
	g := &gen{rng: rand.New(rand.NewPCG(3, 4))}
	lead := map[byte]int{}
	for range 20000 {
		n := g.houseNumber("23")
		if len(n) != 2 || n[0] < '1' || n[0] > '9' {
			t.Fatalf("23 became %q", n)
		}
		lead[n[0]]++
	}
	for d := byte('1'); d <= '9'; d++ {
		want := 20000 * math.Log10(1+1/float64(d-'0'))
		if got := float64(lead[d]); math.Abs(got-want) > 5*math.Sqrt(want) {
			t.Errorf("first digit %c: %v of 20000, Benford's law says %.0f", d, got, want)
		}
	}
	endsInZero := 0
	for range 1000 {
		c := g.postalDigits("280")
		if n := atoi(c[3:]); len(c) != 5 || n < 1 || n > 40 {
			t.Fatalf("a district of Madrid: %q", c)
		}
		town := g.postalDigits("284")
		if len(town) != 5 || !strings.HasPrefix(town, "284") {
			t.Fatalf("a town of Madrid: %q", town)
		}
		if town[4] == '0' {
			endsInZero++
		}
	}
	if endsInZero < 650 || endsInZero > 850 {
		t.Errorf("%d of 1000 town codes end in 0, want about 750", endsInZero)
	}
	if us := g.postalDigits("02139"); us != "02139" {
		t.Errorf("a listed US ZIP code became %q", us)
	}
}

// Big cities follow the corpus too: most surrogates are big cities the
// corpus names, by its own counts, never the patient's own.
func TestBigCitiesFollowTheCorpus(t *testing.T) {
	pol := DefaultPolicy()
	pol.Language = "es"
	followsTheCorpus(t, pol, "Vive en ", "CITY", "big cities",
		[]string{"Madrid", "Madrid", "Madrid", "Madrid", "Madrid", "Madrid", "Sevilla", "Bilbao", "Sevilla", "Bilbao"})
}

// A listed name is replaced near its frequency: the pack's commonest
// surname by common ones, a rare one by rare ones, with the mapped initial.
func TestNamesDrawnNearTheirFrequency(t *testing.T) {
	pool := newNamePool(resources.ForLanguage("es").SurrogateSurnames())
	rng := rand.New(rand.NewPCG(7, 8))
	for _, orig := range []string{"García", "Pastor", "Arruti"} {
		f, ok := pool.freq[fold(orig)]
		if !ok {
			t.Fatalf("%s is not listed", orig)
		}
		for range 200 {
			c, ok := pool.drawNear(rng, 0, f)
			if !ok {
				t.Fatalf("%s: nothing near %g", orig, f)
			}
			if g := pool.freq[fold(c)]; g < f/nearBand || g > f*nearBand {
				t.Fatalf("%s (%g%%) became %s (%g%%)", orig, f, c, g)
			}
		}
		if c, ok := pool.drawNear(rng, 'M', f); ok && firstLetter(c) != 'M' {
			t.Errorf("%s with the initial M became %s", orig, c)
		}
	}
}

// An institution's address becomes another institution's of Spain, not
// place words ("mijas.avila.es"); one under another country's domain keeps
// that country's labels.
func TestInstitutionDomains(t *testing.T) {
	es := resources.ForLanguage("es")
	inst := map[string]bool{}
	for _, d := range es.InstitutionDomains() {
		inst[d] = true
	}
	g := &gen{rng: rand.New(rand.NewPCG(5, 6)), e: &engine{res: es, pools: poolsFor(es)}}
	for range 50 {
		if d := g.domain("sescam.jccm.es", false); !inst[d] || d == "sescam.jccm.es" {
			t.Fatalf("sescam.jccm.es became %q", d)
		}
		if d := g.domain("odon.edu.uy", false); !strings.HasSuffix(d, ".edu.uy") || d == "odon.edu.uy" {
			t.Fatalf("odon.edu.uy became %q", d)
		}
	}
}
