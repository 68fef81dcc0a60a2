package formats

import (
	"fmt"

	"deidcorpus/pipeline"
)

// PatientNames returns what renames the documents of one export (a
// researcher's: see store.ExportTo), in turn,
// so that a format that names a note by its id alone (a file per note:
// i2b2, brat) keeps its patient: a document whose id does not say its
// patient and record order as DocumentID reads them ("100-02": record 2 of
// patient 100) is named PATIENT-RR, RR its record order (or the next that
// patient has free), so that a re-import groups the notes as they were. A
// format that carries the patient beside the id (Format.Patients) keeps
// its ids: nil.
func (f *Format) PatientNames() func(*pipeline.Document) {
	if f.Patients {
		return nil
	}
	used := map[string]bool{} // ids given so far
	return func(d *pipeline.Document) {
		if _, patient, order := DocumentID(d.ID); patient == d.Patient && (order == d.RecordOrder || d.RecordOrder == 0) && !used[d.ID] {
			used[d.ID] = true
			return
		}
		n := max(d.RecordOrder, 1)
		id := fmt.Sprintf("%s-%02d", d.Patient, n)
		for used[id] {
			n++
			id = fmt.Sprintf("%s-%02d", d.Patient, n)
		}
		used[id] = true
		d.ID, d.RecordOrder = id, n
	}
}
