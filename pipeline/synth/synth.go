// Package synth generates a synthetic longitudinal corpus of English clinical
// notes with gold PHI spans in the i2b2 2014 tag set: several note types with
// section headings, each patient with the same name, doctors, hospital, MRN
// and address in every record and dates that move forward, PHI written in the
// varied surface forms real notes use (the date, age, ID, phone and name
// patterns of Yang & Garibaldi 2015 Table 2 and Yeniterzi et al. 2010
// Table 7). It is for demos, tests and scale benchmarks, never for accuracy
// claims: its notes are templates, far more regular than real ones.
//
// Output is deterministic for a seed, and each patient depends only on the
// seed and its own index, so patients stream out one at a time.
package synth

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"deidcorpus/pipeline"
)

// Options sizes a corpus.
type Options struct {
	Patients int
	Seed     uint64
	// NotesMin and NotesMax bound each patient's number of notes; zero
	// values mean 2 and 5.
	NotesMin, NotesMax int
}

// Patient is one generated patient's record set, in record order.
type Patient struct {
	ID   string
	Docs []pipeline.Document
}

// FirstPatientID is the id of the first patient; ids count up from it, so
// that files are named like the i2b2 2014 corpus's (100-01.xml).
const FirstPatientID = 100

// Note types the generator writes.
const (
	DischargeSummary = "discharge summary"
	EDNote           = "emergency department note"
	ClinicNote       = "clinic note"
	RadiologyReport  = "radiology report"
)

// Generate makes opt.Patients patients and hands each to fn, in order; an
// error from fn stops the generation and is returned. Every document passes
// Document.Validate(false).
func Generate(opt Options, fn func(Patient) error) error {
	if opt.NotesMin == 0 && opt.NotesMax == 0 {
		opt.NotesMin, opt.NotesMax = 2, 5
	}
	switch {
	case opt.Patients < 0:
		return errors.New("synth: negative number of patients")
	case opt.NotesMin < 1 || opt.NotesMax < opt.NotesMin:
		return fmt.Errorf("synth: notes per patient %d-%d: want 1 <= min <= max", opt.NotesMin, opt.NotesMax)
	case opt.NotesMax > 99:
		return errors.New("synth: at most 99 notes per patient (record numbers have two digits)")
	}
	for i := range opt.Patients {
		if err := fn(generatePatient(opt, i)); err != nil {
			return err
		}
	}
	return nil
}

func generatePatient(opt Options, i int) Patient {
	// One stream per patient: a patient depends on the seed and its index only.
	r := rand.New(rand.NewPCG(opt.Seed, uint64(i)))
	p := newPersona(r, fmt.Sprint(FirstPatientID+i))
	n := opt.NotesMin + r.IntN(opt.NotesMax-opt.NotesMin+1)
	out := Patient{ID: p.id, Docs: make([]pipeline.Document, 0, n)}
	date := p.firstVisit
	for k := 1; k <= n; k++ {
		typ := noteType(r, k)
		var w writer
		w.b.Grow(3000)
		notes[typ](&w, r, p, date)
		d := pipeline.Document{
			ID:          fmt.Sprintf("%s-%02d", p.id, k),
			Patient:     p.id,
			RecordOrder: k,
			NoteType:    typ,
			Created:     date,
			Text:        w.b.String(),
			Spans:       w.spans,
		}
		ix := pipeline.NewIndex(d.Text)
		for j := range d.Spans {
			s := &d.Spans[j]
			s.ID = fmt.Sprintf("P%d", j)
			s.Start, s.End = ix.CodePoint(s.Start), ix.CodePoint(s.End)
		}
		out.Docs = append(out.Docs, d)
		p.lastVisit = date
		date = date.AddDate(0, 0, 5+r.IntN(240)) // records move forward in time
	}
	return out
}

// noteType picks the type of record k: a first record is often the ED visit
// that led to an admission.
func noteType(r *rand.Rand, k int) string {
	x := r.IntN(100)
	switch {
	case k == 1 && x < 45:
		return EDNote
	case x < 30:
		return DischargeSummary
	case x < 60:
		return ClinicNote
	case x < 80:
		return RadiologyReport
	default:
		return EDNote
	}
}

var notes = map[string]func(*writer, *rand.Rand, *persona, time.Time){
	DischargeSummary: dischargeSummary,
	EDNote:           edNote,
	ClinicNote:       clinicNote,
	RadiologyReport:  radiologyReport,
}

// writer builds a note's text and its spans (byte offsets until the note is
// done; the text is ASCII but the conversion goes through pipeline.Index all
// the same).
type writer struct {
	b     strings.Builder
	spans []pipeline.Span
}

func (w *writer) s(parts ...string) {
	for _, p := range parts {
		w.b.WriteString(p)
	}
}

func (w *writer) f(format string, args ...any) { fmt.Fprintf(&w.b, format, args...) }

// phi writes text as one span of the given i2b2 2014 category and type.
func (w *writer) phi(cat, typ, text string) {
	start := w.b.Len()
	w.b.WriteString(text)
	w.spans = append(w.spans, pipeline.Span{Start: start, End: w.b.Len(), Text: text, Category: cat, Type: typ})
}
