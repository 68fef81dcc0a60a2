package tagger

import (
	"fmt"
	"testing"

	"deidcorpus/pipeline"
)

// A relative's age takes the relative's type when the training gold gives
// it so, and only after a span of that type in the same sentence.
func TestRetypeGivesARelativesAgeTheRelativesType(t *testing.T) {
	types := []SpanType{{"EDAD", "EDAD"}, {"FAMILIARES", "FAMILIARES"}}
	var docs []pipeline.Document
	var toks []*Tokens
	for i := range 12 {
		text := fmt.Sprintf("Paciente de %d años. Padre fallecido a los %d años de edad.", 30+i, 60+i)
		d := pipeline.Document{Text: text, Spans: []pipeline.Span{
			spanOf(text, fmt.Sprintf("%d años", 30+i), "EDAD"),
			spanOf(text, "Padre", "FAMILIARES"),
			spanOf(text, fmt.Sprintf("%d años", 60+i), "FAMILIARES"),
		}}
		docs, toks = append(docs, d), append(toks, Tokenize(text))
	}
	m := &Model{Config: DefaultConfig(), Types: types}
	m.labels = newLabels(types)
	m.learnt.Retypes = learnRetypes(toks, goldTokenSpans(docs, toks, types), types)
	if len(m.learnt.Retypes) != 1 || m.learnt.Retypes[0].Kind != "AGE" || m.learnt.Retypes[0].Type != 1 {
		t.Fatalf("learnt %+v, want AGE after FAMILIARES", m.learnt.Retypes)
	}
	for _, c := range []struct {
		text, before, age, want string
	}{
		{"Abuelo materno operado a los 40 años por catarata.", "Abuelo materno", "40 años", "FAMILIARES"},
		// Another sentence: the age is the patient's.
		{"Abuelo materno operado. A los 40 años consulta.", "Abuelo materno", "40 años", "EDAD"},
		// Too far after the relative.
		{"Abuelo materno, que vive en el pueblo con su familia desde hace mucho, de 40 años.", "Abuelo materno", "40 años", "EDAD"},
	} {
		tk := Tokenize(c.text)
		td := &taggedDoc{tk: tk, ix: pipeline.NewIndex(c.text), model: m, matches: matchTemplates(tk)}
		f0, l0 := tokRange(tk, c.before)
		f1, l1 := tokRange(tk, c.age)
		td.pred = []tokSpan{{f1, l1, 0}, {f0, l0, 1}}
		m.retype(td)
		for _, s := range td.spans() {
			if s.Text == c.age && s.Type != c.want {
				t.Errorf("%q: %q is %s, want %s", c.text, c.age, s.Type, c.want)
			}
		}
	}
}
