package tagger

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"deidcorpus/pipeline"
)

// spanOf is the span of the first occurrence of sub in text, in code points.
func spanOf(text, sub, typ string) pipeline.Span {
	b := strings.Index(text, sub)
	start := len([]rune(text[:b]))
	return pipeline.Span{Start: start, End: start + len([]rune(sub)), Text: sub, Category: typ, Type: typ}
}

// tokRange is the token range of the first occurrence of sub in tk's text.
func tokRange(tk *Tokens, sub string) (int, int) {
	b := strings.Index(tk.Text, sub)
	first, last := -1, -1
	markTokens(tk, b, b+len(sub), func(i int, begin bool) {
		if begin {
			first = i
		}
		last = i + 1
	})
	return first, last
}

func TestAttributionsFindMakerPlacesAndCountry(t *testing.T) {
	countries := []string{"usa", "españa", "suiza"}
	isCountry := func(key string) bool { return slices.Contains(countries, key) }
	for _, c := range []struct {
		text string
		want []string // role: text
	}{
		{"En la ecografía (Sonos 100 CF, Hewlett Packard, Massachusetts, USA) se vio",
			[]string{"MAKER Hewlett Packard", "PLACE Massachusetts", "COUNTRY USA"}},
		// The product outside the brackets: the first field is the maker.
		{"Nanoblast® (Galimplant, Sarria, España) de forma sumergida",
			[]string{"MAKER Galimplant", "PLACE Sarria", "COUNTRY España"}},
		// A corporate suffix is neither maker nor place.
		{"un cabezal de Mayfield (Ohio Medical Instrument Co, Inc., Cincinnati, Oh, USA). El",
			[]string{"MAKER Ohio Medical Instrument Co", "PLACE Cincinnati", "PLACE Oh", "COUNTRY USA"}},
		// Semicolons separate too; a trademark sign ends no maker's name.
		{"(MODUS ARS 1.5; Medartis®, Basel, Suiza)",
			[]string{"MAKER Medartis", "PLACE Basel", "COUNTRY Suiza"}},
		// A field in lower case is no place.
		{"(Zovirax®, Glaxo, vía oral, España)", []string{"MAKER Glaxo", "COUNTRY España"}},
		// No country last, two fields only, or no closing bracket: none.
		{"(Travatan®, Alcon, Fort Worth, Texas)", nil},
		{"(Cavit, España)", nil},
		{"(Sonos 100 CF, Hewlett Packard, Massachusetts, USA", nil},
		{"(padre, tío y tía paterna, abuela paterna)", nil},
	} {
		tk := Tokenize(c.text)
		var got []string
		for _, f := range attributions(tk, isCountry) {
			role := f.role[len("ATTRIBUTION_"):]
			got = append(got, role+" "+tk.Text[tk.Tokens[f.first].Start:tk.Tokens[f.last-1].End])
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
}

// Each role is bound to the type its training fields are gold spans of; the
// rule then marks unseen makers and towns, and replaces the CRF's spans only
// where its role was precise enough in training.
func TestAttributionsAreLearntAndApplied(t *testing.T) {
	types := []SpanType{{"INSTITUCION", "INSTITUCION"}, {"PAIS", "PAIS"}, {"TERRITORIO", "TERRITORIO"}}
	var docs []pipeline.Document
	var toks []*Tokens
	makers := []string{"Alcon", "Allergan", "Roche", "Geistlich", "Keramat", "Medartis"}
	towns := []string{"Madrid", "Basilea", "Coruña", "Wolhusen", "Sarria", "Lyon"}
	for i := range makers {
		text := fmt.Sprintf("Se pautó colirio (Acular®, %s, %s, España) cada 8 horas.", makers[i], towns[i])
		d := pipeline.Document{Text: text, Spans: []pipeline.Span{
			spanOf(text, makers[i], "INSTITUCION"), spanOf(text, towns[i], "TERRITORIO"), spanOf(text, "España", "PAIS"),
		}}
		docs, toks = append(docs, d), append(toks, Tokenize(text))
	}
	gaz := gazetteerOf(docs, toks, gazetteerMaxWords)
	bound := bindAttributions(toks, goldTokenSpans(docs, toks, types), types, gaz, DefaultPost())
	var got []string
	for _, b := range bound {
		got = append(got, fmt.Sprintf("%s %s %.2f", b.Kind, types[b.Type].Type, b.Precision))
	}
	want := []string{"ATTRIBUTION_MAKER INSTITUCION 1.00", "ATTRIBUTION_PLACE TERRITORIO 1.00", "ATTRIBUTION_COUNTRY PAIS 1.00"}
	if !slices.Equal(got, want) {
		t.Fatalf("bound %q, want %q", got, want)
	}
	m := &Model{Config: DefaultConfig(), Types: types}
	m.labels = newLabels(types)
	m.ext = &extractor{gaz: gaz}
	m.learnt.Rules = bound
	text := "Ecografía (Sonos 100 CF, Hewlett Packard, Massachusetts, España) normal."
	tk := Tokenize(text)
	td := &taggedDoc{tk: tk, ix: pipeline.NewIndex(text), model: m}
	f, l := tokRange(tk, "Hewlett Packard, Massachusetts")
	td.pred = []tokSpan{{f, l, 2}} // the CRF ran the maker into its town
	m.applyAttributions(td)
	got = nil
	for _, s := range td.spans() {
		got = append(got, s.Type+" "+s.Text)
	}
	if want := []string{"INSTITUCION Hewlett Packard", "TERRITORIO Massachusetts", "PAIS España"}; !slices.Equal(got, want) {
		t.Errorf("tagged %q, want %q", got, want)
	}
	// A phrase the gazetteer also holds as another type is no country.
	gaz.types["españa"] = []string{"PAIS", "TERRITORIO"}
	td.pred = nil
	m.applyAttributions(td)
	if len(td.pred) != 0 {
		t.Errorf("an ambiguous country made %d spans, want none", len(td.pred))
	}
}
