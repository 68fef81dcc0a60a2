package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// person is a named individual: a patient, a relative or a clinician.
type person struct {
	first, middle, last string
	female              bool
	username            string // clinicians: Partners-style initials and digits (arw4)
}

// persona is everything a patient's records share, so that PHI is consistent
// across them (Stubbs & Uzuner: the same patient, doctors and hospital
// recur, dates move forward).
type persona struct {
	id string
	person
	birth                 time.Time
	mrn, account, plan    string
	areaCode, phone       string // phone: 7 digits
	clinicPhone           string // 7 digits, same area code
	streetNo, street      string
	home                  place
	hospital, clinic      string
	pcp, attending        person
	radiologist, edDoctor person
	relative              person
	relation              string
	profession, employer  string
	conditions            []string
	firstVisit, lastVisit time.Time
}

func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

func newPerson(r *rand.Rand, female bool) person {
	p := person{female: female, last: pick(r, lastNames)}
	if female {
		p.first, p.middle = pick(r, femaleNames), pick(r, femaleNames)
	} else {
		p.first, p.middle = pick(r, maleNames), pick(r, maleNames)
	}
	return p
}

func newClinician(r *rand.Rand) person {
	p := newPerson(r, r.IntN(2) == 0)
	p.username = strings.ToLower(p.first[:1]+p.middle[:1]+p.last[:1]) + fmt.Sprint(1+r.IntN(99))
	return p
}

// Real US area codes, so that phone numbers look plausible.
var areaCodes = []string{"617", "508", "781", "978", "212", "718", "312", "415", "713", "404", "206", "303", "602", "215", "314", "412", "503", "612", "704", "813"}

var (
	professions = []string{"teacher", "electrician", "truck driver", "accountant", "carpenter", "nurse's aide", "software engineer",
		"firefighter", "retired machinist", "bus driver", "cashier", "plumber", "librarian", "lawyer", "farmer", "chef"}
	employers = []string{"Boston Public Schools", "United Parcel Service", "Home Depot", "Stop & Shop", "the Postal Service",
		"General Electric", "Raytheon", "Liberty Mutual", "Dunkin'", "Fidelity"}
	relations   = []string{"wife", "husband", "daughter", "son", "sister", "brother"}
	streetTypes = []string{"Street", "Avenue", "Road", "Lane", "Drive", "Court", "St.", "Ave.", "Rd.", "Terrace"}
	streetBases = []string{"Maple", "Oak", "Elm", "Pleasant", "Washington", "Park", "Highland", "Chestnut", "Prospect", "Summer", "Union", "Walnut"}
	conditions  = []string{"hypertension", "type 2 diabetes mellitus", "hyperlipidemia", "coronary artery disease", "atrial fibrillation",
		"congestive heart failure", "COPD", "asthma", "chronic kidney disease stage 3", "hypothyroidism", "GERD", "osteoarthritis",
		"depression", "obstructive sleep apnea", "peripheral vascular disease"}
	clinics = []string{"Internal Medicine Associates", "Primary Care Center", "Family Health Center", "Medical Associates"}
)

func newPersona(r *rand.Rand, id string) *persona {
	p := &persona{id: id, person: newPerson(r, r.IntN(2) == 0)}
	// Dates in the i2b2 2014 corpus are shifted into the 2060s-2090s; do the same.
	p.firstVisit = time.Date(2060+r.IntN(36), time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC)
	age := 18 + r.IntN(78) // some patients are 90 or over: HIPAA treats their ages as PHI
	p.birth = p.firstVisit.AddDate(-age, -r.IntN(12), -r.IntN(28))
	p.mrn = fmt.Sprintf("%07d", 1000000+r.IntN(9000000))
	p.account = fmt.Sprintf("%c%c%06d", 'A'+rune(r.IntN(26)), 'A'+rune(r.IntN(26)), r.IntN(1000000))
	p.plan = fmt.Sprintf("%d%08d", 1+r.IntN(9), r.IntN(100000000))
	p.areaCode = pick(r, areaCodes)
	p.phone = fmt.Sprintf("%d%04d", 200+r.IntN(800), r.IntN(10000))
	p.clinicPhone = fmt.Sprintf("%d%04d", 200+r.IntN(800), r.IntN(10000))
	p.streetNo = fmt.Sprint(1 + r.IntN(1999))
	if r.IntN(2) == 0 {
		p.street = pick(r, lastNames) + " " + pick(r, streetTypes)
	} else {
		p.street = pick(r, streetBases) + " " + pick(r, streetTypes)
	}
	p.home = pick(r, places)
	p.hospital = pick(r, hospitals)
	p.clinic = p.home.city + " " + pick(r, clinics)
	p.pcp, p.attending, p.radiologist, p.edDoctor = newClinician(r), newClinician(r), newClinician(r), newClinician(r)
	p.relation = pick(r, relations)
	femaleRelative := p.relation == "wife" || p.relation == "daughter" || p.relation == "sister"
	p.relative = newPerson(r, femaleRelative)
	if p.relation != "wife" && p.relation != "husband" {
		p.relative.last = p.last
	}
	p.profession, p.employer = pick(r, professions), pick(r, employers)
	n := 2 + r.IntN(3)
	for _, k := range r.Perm(len(conditions))[:n] {
		p.conditions = append(p.conditions, conditions[k])
	}
	return p
}

func (p *persona) ageAt(t time.Time) int {
	age := t.Year() - p.birth.Year()
	if t.YearDay() < p.birth.YearDay() {
		age--
	}
	return age
}

func (p *persona) pronoun() string {
	if p.female {
		return "She"
	}
	return "He"
}

func (p *persona) possessive() string {
	if p.female {
		return "her"
	}
	return "his"
}

func (p *persona) title() string {
	if p.female {
		return "Ms."
	}
	return "Mr."
}

func (p *persona) sexWord() string {
	if p.female {
		return "woman"
	}
	return "man"
}
