package surrogate

import "deidcorpus/pipeline"

// checkIntervals checks that each shifted date of a patient is its original
// moved by the patient's shift (days), writing those that are not to their
// document's findings, and returns how many are.
func checkIntervals(ps patientSpans, out []pipeline.Document, days int, rd dateReading, docs []docCheck) int {
	checked := 0
	for _, pr := range ps.pairs {
		if pr.rule.Strategy != DateShift {
			continue
		}
		if od, ok := parseDate(pr.o.Text, rd); ok {
			if want := od.shifted(days); want != pr.s.Text {
				docs[pr.doc].interval = append(docs[pr.doc].interval, SurrogateProblem{ps.patient, out[pr.doc].ID, pr.o.Type, pr.o.Text, pr.s.Text, want})
			} else {
				checked++
			}
		}
	}
	return checked
}

// vague reports a date without day and year: a weekday, month or season alone.
func vague(text string, rd dateReading) bool {
	d, ok := parseDate(text, rd)
	return ok && !d.hasY && !d.hasD && !d.hasDecade
}
