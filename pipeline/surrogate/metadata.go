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
// that holds no annotated value of the corpus, nor any word of four letters
// or more of an annotated name, institution or place: a type that five
// patients share may still name a doctor, or one patient of the five, or a
// doctor by their surname ("Okafor clinic" of "Ines Okafor"). Common words
// are not spared here, as they are in the text: a type is one short string
// whose loss costs little.
func (e *engine) keepsNoteType(t string) bool {
	return e.noteTypes[noteTypeKey(t)] >= e.r.Policy.NoteTypes.MinPatients && !e.orig.within(t) && !e.wide.holdsWord(t)
}
