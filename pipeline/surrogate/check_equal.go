package surrogate

import "deidcorpus/pipeline"

// equalToOriginal finds the surrogates equal to a replaced original value
// of their patient (replaced), writing each to its document's findings.
func equalToOriginal(ps patientSpans, out []pipeline.Document, replaced *valueSet, docs []docCheck, pol *Policy) {
	for _, pr := range ps.pairs {
		if _, _, code := pol.maskCode(pr.s); code {
			continue // a mask's letters are its label, a code ("[DATE]" for a patient Date)
		}
		if pr.o.Text != pr.s.Text && replaced.has(pr.s.Text) {
			docs[pr.doc].equal = append(docs[pr.doc].equal, SurrogateProblem{ps.patient, out[pr.doc].ID, pr.o.Type, pr.o.Text, pr.s.Text, ""})
		}
	}
}
