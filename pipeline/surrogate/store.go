package surrogate

import "sort"

// Mapping is one original value and the surrogate that replaced it. The job
// layer stores every mapping a run returns and hands them back to later runs,
// so that new notes of a patient get the same surrogates. Name mappings are
// per token ("Ferrerro" -> "Dollard"; single letters are the scope's letter
// map, "A" -> "G"), so that "Angie Ferrerro", "A. Ferrerro" and "FERRERRO,
// ANGIE" stay one person; other types map whole span texts.
type Mapping struct {
	Scope     string // "corpus", or "patient:" + the patient id
	Category  string
	Type      string
	Original  string // as first seen; lookups fold case and accents
	Surrogate string // canonical form; each mention gets the original's letter case
	Strategy  string
	New       bool // made by this run (false: reused from the store)
}

// PatientShift is the per-patient state a later run must reuse: the date
// shift, and how far the patient's ages were moved down (Stubbs & Uzuner: ages
// of 90 and over become 90 and the other ages move with them).
type PatientShift struct {
	Patient  string
	Days     int
	AgeShift int // years subtracted from every age of the patient; 0 if none reached 90
	New      bool
}

// Store is what earlier runs decided, as the job layer keeps it.
type Store struct {
	Mappings []Mapping
	Shifts   []PatientShift
}

// PatientScope is the scope name of a patient's mappings.
func PatientScope(patient string) string { return "patient:" + patient }

func sortMappings(ms []Mapping) {
	sort.Slice(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if a.Scope != b.Scope {
			return a.Scope < b.Scope
		}
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		if a.Original != b.Original {
			return a.Original < b.Original
		}
		return a.Surrogate < b.Surrogate
	})
}
