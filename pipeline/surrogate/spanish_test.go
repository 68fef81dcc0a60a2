package surrogate

import (
	"math/rand/v2"
	"os"
	"path/filepath"
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

// TestSitePack: a policy's resources directory replaces the pack's lists.
func TestSitePack(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "zipcodes.tsv"), []byte("Villarriba\tMadrid\t28\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol := DefaultPolicy()
	pol.Resources = dir
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
	pol.Resources = filepath.Join(dir, "missing")
	if err := pol.Validate(); err == nil {
		t.Error("a missing resources directory passes validation")
	}
}
