package surrogate

import "deidcorpus/pipeline"

// MetadataProblem is a field beside a surrogate note's text that gives its
// original away.
type MetadataProblem struct {
	Patient string `json:"patient"`
	Doc     string `json:"doc"`
	// Field is "created", "noteType", or one of a span's ("comment",
	// "spanID", "label"); Span is the index of the span in the note.
	Field   string `json:"field"`
	Span    int    `json:"span,omitempty"`
	Problem string `json:"problem"`
}

// checkMetadata checks the fields beside a surrogate note's text against
// its original's: the creation date moved by the patient's shift (days,
// when the run's result has it), a type kept only where it holds none of
// the patient's replaced values nor a word of their names (parts), comments only where the policy keeps them,
// and then holding none either. Every other string a span carries is read
// too, so that a field that copies an original fails here: its id must be
// one the run gave (surrogateSpanID), never the source's, and a label no
// rule of the policy names (free text of an open tag set) holds no replaced
// value. (A label the policy names is a tag set's code: "DATE" is no copy
// of the surname Date.)
func checkMetadata(patient string, orig, sur pipeline.Document, replaced, parts *valueSet, days int, shifted bool, pol *Policy) []MetadataProblem {
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
	if sur.NoteType != "" && sur.NoteType != pol.NoteTypes.Neutral && (replaced.within(sur.NoteType) || parts.within(sur.NoteType)) {
		problem("noteType", 0, "holds a replaced value of the patient, or a word of one of its names")
	}
	for i, s := range sur.Spans {
		if !isSurrogateSpanID(s.ID) {
			problem("spanID", i, "not an id the run gave (T1, T2, ...): a source's span id is free text that may name the patient")
		}
		if !pol.names(s.Category, s.Type) && (replaced.within(s.Category) || replaced.within(s.Type)) {
			problem("label", i, "a label no rule of the policy names, holding a replaced value of the patient")
		}
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
