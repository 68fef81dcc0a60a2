package tagger

import (
	"context"
	"errors"
	"strings"
	"testing"

	"deidcorpus/pipeline"
)

// The privacy rule adds the runs of tokens outside the balanced spans whose
// probability of O is below the threshold, split by type, and a run that
// touches a span of its type extends it.
func TestPrivacySpans(t *testing.T) {
	pred := []tokSpan{{2, 3, 0}}
	pO := []float32{0.1, 0.1, 0.0, 0.2, 0.9, 0.3, 0.3, 0.99}
	pType := []int32{1, 1, 0, 0, 0, 0, 1, 0}
	got := privacySpans(pred, pO, pType, 0.5)
	want := []tokSpan{{0, 2, 1}, {2, 4, 0}, {5, 6, 0}, {6, 7, 1}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if got := privacySpans(pred, pO, pType, 0.05); len(got) != 1 || got[0] != pred[0] {
		t.Fatalf("below every probability: got %v, want the balanced spans alone", got)
	}
}

// A model without calibration cannot tag at the privacy point, and says how
// to calibrate it; a calibrated one serves its own target and any the curve
// reached, and refuses one beyond it.
func TestPrivacyThreshold(t *testing.T) {
	m := tinyModel(t)
	docs := []pipeline.Document{{ID: "a", Text: "Paciente Juan Perez, correo juan.perez@example.com."}}
	_, err := m.Tag(context.Background(), docs, TagOptions{Point: Privacy})
	if !errors.Is(err, ErrNotCalibrated) || !strings.Contains(err.Error(), "models calibrate --model") {
		t.Fatalf("uncalibrated privacy tagging: %v, want ErrNotCalibrated naming models calibrate", err)
	}
	m.Meta.Calibration = &Calibration{TargetRecall: 0.995, Threshold: 0.99, Curve: []RecallPoint{
		{Threshold: 0.5, CharRecall: 0.97}, {Threshold: 0.9, CharRecall: 0.99}, {Threshold: 0.99, CharRecall: 0.996}, {Threshold: 0.999, CharRecall: 0.998}}}
	for _, c := range []struct {
		target, want float64
	}{{0, 0.99}, {0.995, 0.99}, {0.98, 0.9}, {0.997, 0.999}} {
		got, err := m.PrivacyThreshold(c.target, "m")
		if err != nil || got != c.want {
			t.Errorf("target %g: threshold %g (%v), want %g", c.target, got, err, c.want)
		}
	}
	if _, err := m.PrivacyThreshold(0.9999, "m"); err == nil || !strings.Contains(err.Error(), "at most 0.9980") {
		t.Errorf("target beyond the curve: %v", err)
	}
	if _, err := m.PrivacyThreshold(0.4, "m"); err == nil {
		t.Error("target 0.4 accepted")
	}
	out, err := m.Tag(context.Background(), docs, TagOptions{Point: Privacy, Nets: &Nets{Patterns: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !covered(out[0], "juan.perez@example.com") {
		t.Errorf("the e-mail pattern net missed the address: %v", out[0].Spans)
	}
}

// covered says whether every character of s in d (ASCII) lies in a span.
func covered(d pipeline.Document, s string) bool {
	start := strings.Index(d.Text, s)
	for p := start; p < start+len(s); p++ {
		in := false
		for _, sp := range d.Spans {
			in = in || sp.Start <= p && p < sp.End
		}
		if !in {
			return false
		}
	}
	return true
}

// Each net adds what it is for, counted, and nothing when switched off:
// patterns the shapes, lists a pack's places, propagation the recurrences
// of a tagged string in the patient's other notes.
func TestNets(t *testing.T) {
	m := &Model{Types: []SpanType{{Category: "CONTACT", Type: "CORREO_ELECTRONICO"}, {Category: "DATE", Type: "FECHAS"},
		{Category: "CONTACT", Type: "NUMERO_TELEFONO"}, {Category: "LOCATION", Type: "TERRITORIO"}}}
	const email = 0
	text := "Correo: ana.gomez@hospital.es. Nacida el 3 de marzo de 2001 en Salamanca. Llamar al 612 345 678."
	docs := []pipeline.Document{{ID: "a", Patient: "p", Text: text}, {ID: "b", Patient: "p", Text: "Escribe a ana.gomez@hospital.es hoy."}}
	tagged := func() []*taggedDoc {
		out := make([]*taggedDoc, len(docs))
		for i := range docs {
			out[i] = &taggedDoc{doc: &docs[i], tk: Tokenize(docs[i].Text), ix: pipeline.NewIndex(docs[i].Text), model: m}
		}
		return out
	}
	td := tagged()
	if rep := m.applyNets(docs, td, Nets{}); rep != (NetReport{}) || len(td[0].pred)+len(td[1].pred) > 0 {
		t.Fatalf("no nets added %+v", rep)
	}
	td = tagged()
	rep := m.applyNets(docs, td[:1], Nets{Patterns: true})
	if rep.Patterns != 3 {
		t.Errorf("patterns added %d spans to %q, want the e-mail, the date and the phone", rep.Patterns, text)
	}
	if len(td[0].pred) == 0 || td[0].pred[0].typ != email {
		t.Errorf("the e-mail's span: %v", td[0].pred)
	}
	td = tagged()
	td[0].pred = []tokSpan{{2, 9, email}} // "ana.gomez@hospital.es" in tokens, as a model would tag it
	if got := td[0].tk.Text[td[0].tk.Tokens[2].Start:td[0].tk.Tokens[8].End]; got != "ana.gomez@hospital.es" {
		t.Fatalf("tokens 2 to 8 are %q", got)
	}
	rep = m.applyNets(docs, td, Nets{Propagation: true})
	if rep.Propagation != 1 || len(td[1].pred) != 1 {
		t.Errorf("propagation added %d, note b has %v; want the address in b", rep.Propagation, td[1].pred)
	}
	td = tagged()
	if rep := m.applyNets(docs, td, Nets{Lists: true}); rep.Lists != 1 || len(td[0].pred) != 1 || td[0].pred[0].typ != 3 {
		t.Errorf("lists added %d: %v, want Salamanca as TERRITORIO", rep.Lists, td[0].pred)
	}
}
