package surrogate

import (
	"strings"

	"deidcorpus/pipeline"
)

// A note's fields beside its text are PHI too: a creation date unshifted
// beside shifted text gives the patient's shift away (and with it every
// shifted date), a note type is free text from the source ("Alta de Amparo
// Ybarrondo"), and span comments restate what their spans mark. The
// surrogate of a note gets them through the pipeline like its text.

// noteTypeKey is how note types are counted: folded, so that "Alta" and
// "ALTA" are one category.
func noteTypeKey(t string) string { return fold(strings.TrimSpace(t)) }

// countNoteTypes adds each note type a patient's records use once to the
// number of patients that use it.
func (e *engine) countNoteTypes(all []pipeline.Document, idx []int) {
	var seen map[string]bool
	for _, i := range idx {
		k := noteTypeKey(all[i].NoteType)
		if k == "" || seen[k] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[k] = true
		e.noteTypes[k]++
	}
}

// metadata gives a rewritten note the fields beside its text: its creation
// date moved by its patient's shift, its type where that is a category
// (Policy.NoteTypes) and a neutral type otherwise, and its spans' comments
// only where the policy keeps them.
func (g *gen) metadata(nd *pipeline.Document) {
	pol := g.e.r.Policy
	if !nd.Created.IsZero() {
		nd.Created = nd.Created.AddDate(0, 0, g.shift.Days)
	}
	if nd.NoteType != "" && !g.e.keepsNoteType(nd.NoteType) {
		nd.NoteType = pol.NoteTypes.Neutral
	}
	if pol.Comments != CommentsKeep {
		for i := range nd.Spans {
			nd.Spans[i].Comment = ""
		}
	}
}

// keepsNoteType reports whether a note type is a category of the corpus
// that holds no annotated value of the corpus: a type that five patients
// share may still name a doctor, or one patient of the five.
func (e *engine) keepsNoteType(t string) bool {
	return e.noteTypes[noteTypeKey(t)] >= e.r.Policy.NoteTypes.MinPatients && !e.orig.within(t)
}

// MetadataProblem is a field beside a surrogate note's text that gives its
// original away.
type MetadataProblem struct {
	Patient string `json:"patient"`
	Doc     string `json:"doc"`
	// Field is "created", "noteType" or "comment"; Span is the index of a
	// comment's span in the note.
	Field   string `json:"field"`
	Span    int    `json:"span,omitempty"`
	Problem string `json:"problem"`
}

// checkMetadata checks the fields beside a surrogate note's text against
// its original's: the creation date moved by the patient's shift (days,
// when the run's result has it), a type kept only where it holds none of
// the patient's replaced values, comments only where the policy keeps them,
// and then holding none either.
func checkMetadata(patient string, orig, sur pipeline.Document, replaced *valueSet, days int, shifted bool, pol *Policy) []MetadataProblem {
	var out []MetadataProblem
	problem := func(field string, span int, msg string) {
		out = append(out, MetadataProblem{Patient: patient, Doc: sur.ID, Field: field, Span: span, Problem: msg})
	}
	if !orig.Created.IsZero() {
		switch {
		case shifted && !sur.Created.Equal(orig.Created.AddDate(0, 0, days)):
			problem("created", 0, "not the original's date moved by the patient's shift")
		case !shifted && sur.Created.Equal(orig.Created):
			problem("created", 0, "the original's date, unshifted")
		}
	}
	if sur.NoteType != "" && sur.NoteType != pol.NoteTypes.Neutral && replaced.within(sur.NoteType) {
		problem("noteType", 0, "holds a replaced value of the patient")
	}
	for i, s := range sur.Spans {
		switch {
		case s.Comment == "":
		case pol.Comments != CommentsKeep:
			problem("comment", i, "a comment the policy drops")
		case replaced.within(s.Comment):
			problem("comment", i, "holds a replaced value of the patient")
		}
	}
	return out
}
