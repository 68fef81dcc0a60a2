package surrogate

import "deidcorpus/pipeline"

// equalToOriginal finds the surrogates equal to a replaced original value
// of their patient (replaced), writing each to its document's findings.
func equalToOriginal(ps patientSpans, out []pipeline.Document, replaced *valueSet, docs []docCheck) {
	for _, pr := range ps.pairs {
		if pr.o.Text != pr.s.Text && replaced.has(pr.s.Text) {
			docs[pr.doc].equal = append(docs[pr.doc].equal, SurrogateProblem{ps.patient, out[pr.doc].ID, pr.o.Type, pr.o.Text, pr.s.Text, ""})
		}
	}
}
