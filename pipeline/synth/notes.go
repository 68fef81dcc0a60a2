package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"deidcorpus/pipeline/english"
)

// Clinical vocabulary: not PHI, only there so that notes read like notes.
var (
	complaints = []string{"chest pain", "shortness of breath", "abdominal pain", "syncope", "fever and productive cough",
		"dizziness", "a fall at home", "palpitations", "lower extremity swelling", "confusion"}
	diagnoses = map[string]string{
		"chest pain":                 "non-ST elevation myocardial infarction",
		"shortness of breath":        "acute on chronic heart failure exacerbation",
		"abdominal pain":             "acute cholecystitis",
		"syncope":                    "orthostatic hypotension",
		"fever and productive cough": "community-acquired pneumonia",
		"dizziness":                  "benign paroxysmal positional vertigo",
		"a fall at home":             "mechanical fall with left wrist fracture",
		"palpitations":               "atrial fibrillation with rapid ventricular response",
		"lower extremity swelling":   "left lower extremity deep vein thrombosis",
		"confusion":                  "urinary tract infection with delirium",
	}
	medications = []string{"aspirin 81 mg daily", "metoprolol succinate 50 mg daily", "lisinopril 10 mg daily",
		"atorvastatin 40 mg nightly", "metformin 1000 mg twice daily", "furosemide 40 mg daily", "apixaban 5 mg twice daily",
		"levothyroxine 75 mcg daily", "omeprazole 20 mg daily", "albuterol inhaler 2 puffs every 4 hours as needed",
		"sertraline 50 mg daily", "amlodipine 5 mg daily"}
	exams = []struct{ name, indication, findings, impression string }{
		{"CHEST, PA AND LATERAL", "Cough and fever.",
			"The lungs are clear without focal consolidation. No pleural effusion or pneumothorax. The cardiomediastinal silhouette is normal.",
			"No acute cardiopulmonary process."},
		{"CT HEAD WITHOUT CONTRAST", "Fall, evaluate for hemorrhage.",
			"No intracranial hemorrhage, mass effect or midline shift. Mild periventricular white matter changes. The ventricles are normal in size.",
			"No acute intracranial abnormality."},
		{"CT ABDOMEN AND PELVIS WITH CONTRAST", "Right upper quadrant pain.",
			"The gallbladder is distended with wall thickening and pericholecystic fluid. The liver, pancreas and kidneys are unremarkable.",
			"Findings consistent with acute cholecystitis."},
		{"ULTRASOUND, LEFT LOWER EXTREMITY VENOUS", "Leg swelling.",
			"Noncompressible left popliteal and posterior tibial veins with echogenic thrombus. The common femoral vein is patent.",
			"Acute deep vein thrombosis of the left popliteal vein."},
		{"MRI LUMBAR SPINE WITHOUT CONTRAST", "Low back pain radiating to the left leg.",
			"Disc desiccation at L4-L5 with a left paracentral protrusion contacting the traversing left L5 nerve root. No fracture.",
			"L4-L5 disc protrusion with left L5 nerve root contact."},
	}
)

func (p *persona) conditionList() string {
	if len(p.conditions) == 1 {
		return p.conditions[0]
	}
	return strings.Join(p.conditions[:len(p.conditions)-1], ", ") + " and " + p.conditions[len(p.conditions)-1]
}

func dischargeSummary(w *writer, r *rand.Rand, p *persona, date time.Time) {
	admit := date.AddDate(0, 0, -(2 + r.IntN(6)))
	complaint := pick(r, complaints)
	w.phi("LOCATION", "HOSPITAL", strings.ToUpper(p.hospital))
	w.s("\nDISCHARGE SUMMARY\n\nPatient: ")
	w.name(r, "PATIENT", p.person, nameUpperComma, nameLastCommaFirM, nameLastCommaFirst)
	w.s("        MRN: ")
	w.mrn(r, p.mrn)
	w.s("\nAdmission Date: ")
	w.date(r, admit, dateMDY4, dateMDY2, dateISO)
	w.s("        Discharge Date: ")
	w.date(r, date, dateMDY4, dateMDY2, dateISO)
	w.s("\nAttending: ")
	w.doctor(r, p.attending)
	w.s("\n\nHISTORY OF PRESENT ILLNESS:\n")
	w.s(p.title(), " ")
	w.phi("NAME", "PATIENT", p.last)
	age := p.ageAt(date)
	w.s(" is ", english.Article(fmt.Sprint(age)), " ")
	w.age(r, age, p.female, false)
	w.f(" %s with a history of %s who presented to the ", p.sexWord(), p.conditionList())
	w.phi("LOCATION", "HOSPITAL", p.hospital)
	w.s(" emergency department on ")
	w.date(r, admit, dateMonthOrd, dateMonDY, dateWeekday)
	w.f(" with %s. ", complaint)
	if !p.lastVisit.IsZero() {
		w.s(p.pronoun(), " was last seen here on ")
		w.date(r, p.lastVisit, dateMDY2, dateMDY4, dateMonDY)
		w.s(". ")
	}
	w.f("%s lives in ", p.pronoun())
	w.phi("LOCATION", "CITY", p.home.city)
	w.s(" with ", p.possessive(), " ", p.relation, ", ")
	w.name(r, "PATIENT", p.relative, nameFirstLast, nameFirstLast, nameFirstMLast)
	w.s(".\n\nHOSPITAL COURSE:\n")
	w.f("The patient was admitted for %s and treated per protocol. ", diagnoses[complaint])
	w.s("Cardiology was consulted and ")
	w.doctor(r, p.pcp)
	w.s(" was updated by phone on ")
	w.date(r, admit.AddDate(0, 0, 1), dateMD, dateMonthOrd)
	w.s(". Symptoms improved steadily and the patient was ambulating independently at discharge.\n\n")
	w.s("DISCHARGE MEDICATIONS:\n")
	for i, k := range r.Perm(len(medications))[:3+r.IntN(3)] {
		w.f("%d. %s\n", i+1, medications[k])
	}
	w.s("\nFOLLOW-UP:\nWith ")
	w.doctor(r, p.pcp)
	w.s(" at ")
	w.phi("LOCATION", "HOSPITAL", p.clinic)
	w.s(" on ")
	w.date(r, date.AddDate(0, 0, 7+r.IntN(14)), dateMonthOrd, dateMonDY, dateMDY4)
	w.s(", phone ")
	w.phone(r, "PHONE", p.areaCode, p.clinicPhone)
	w.s(".\n\n")
	w.signature(r, p.attending)
	w.s("D: ")
	w.date(r, date, dateMDY2)
	w.s("  T: ")
	w.date(r, date.AddDate(0, 0, 1), dateMDY2)
	w.s("\n")
}

func edNote(w *writer, r *rand.Rand, p *persona, date time.Time) {
	complaint := pick(r, complaints)
	w.s("EMERGENCY DEPARTMENT NOTE\n")
	w.phi("LOCATION", "HOSPITAL", p.hospital)
	w.s("    ")
	w.date(r, date, dateISO, dateMDY4, dateDMonY)
	w.s("\n\nName: ")
	w.name(r, "PATIENT", p.person, nameFirstMLastUpper, nameUpperComma)
	w.s("    DOB: ")
	w.date(r, p.birth, dateMDY2, dateMDY4, dateDMonY2)
	w.s("    MR# ")
	w.mrn(r, p.mrn)
	w.s("\n\nCHIEF COMPLAINT: ", strings.ToUpper(complaint[:1]), complaint[1:], ".\n\n")
	w.s("HPI: ")
	w.age(r, p.ageAt(date), p.female, true)
	w.f(" with %s presents with %s since ", p.conditionList(), complaint)
	w.date(r, date.AddDate(0, 0, -(1+r.IntN(3))), dateWeekday, dateMonthOrd)
	w.s(". History obtained from the patient and ", p.possessive(), " ", p.relation, " ")
	w.name(r, "PATIENT", p.relative, nameFirstLast, nameFirstLast)
	w.s(", who can be reached at ")
	w.phone(r, "PHONE", p.areaCode, p.phone)
	w.s(".\n\nSOCIAL HISTORY: Works as ", english.Article(p.profession), " ")
	w.phi("PROFESSION", "PROFESSION", p.profession)
	if r.IntN(2) == 0 {
		w.s(" at ")
		w.phi("LOCATION", "ORGANIZATION", p.employer)
	}
	w.s(". Lives in ")
	w.phi("LOCATION", "CITY", p.home.city)
	w.s(", ")
	w.phi("LOCATION", "STATE", p.home.state)
	w.s(". Former smoker, quit in ")
	w.date(r, date.AddDate(-1-r.IntN(15), -r.IntN(12), 0), dateYear, dateMonthY)
	w.s(".\n\nPHYSICAL EXAM: T 37.8 HR 96 BP 142/84 RR 18 SpO2 95% on room air. Alert and oriented. ")
	w.s("Regular rate, no murmurs. Lungs with scattered crackles at the bases. Abdomen soft, nontender.\n\n")
	w.f("ASSESSMENT AND PLAN: Presentation concerning for %s. Labs, ECG and imaging ordered. Admit to medicine under ", diagnoses[complaint])
	w.doctor(r, p.attending)
	w.s(".\n\nSeen and examined with ")
	w.doctor(r, p.edDoctor)
	w.s(", pager ")
	w.phi("CONTACT", "PHONE", fmt.Sprintf("%d-%04d", 1+r.IntN(9), r.IntN(10000)))
	w.s(".\n")
}

func clinicNote(w *writer, r *rand.Rand, p *persona, date time.Time) {
	w.phi("LOCATION", "HOSPITAL", p.clinic)
	w.s("\nClinic Note, ")
	w.date(r, date, dateMonDY, dateMonthOrd, dateMDY4)
	w.s("\n\n")
	w.name(r, "PATIENT", p.person, nameFirstLast, nameFirstMLast, nameInitialLast)
	w.s(" (")
	w.age(r, p.ageAt(date), p.female, true)
	w.f(") returns for follow-up of %s. ", p.conditions[0])
	if !p.lastVisit.IsZero() {
		w.s("Last seen ")
		w.date(r, p.lastVisit, dateMDY2, dateMonDY, dateMonthOrd)
		w.s(". ")
	}
	w.phi("NAME", "PATIENT", p.last)
	w.s("'s home readings have been stable. No chest pain, dyspnea or edema.\n\n")
	w.s("PROBLEMS:\n")
	for i, c := range p.conditions {
		w.f("%d. %s\n", i+1, strings.ToUpper(c[:1])+c[1:])
	}
	w.s("\nMEDICATIONS: ")
	meds := r.Perm(len(medications))[:2+r.IntN(3)]
	for i, k := range meds {
		if i > 0 {
			w.s("; ")
		}
		w.s(medications[k])
	}
	w.s(".\n\nSOCIAL: ")
	w.phi("PROFESSION", "PROFESSION", strings.ToUpper(p.profession[:1])+p.profession[1:])
	w.s(". Lives at ")
	w.phi("LOCATION", "STREET", p.streetNo+" "+p.street)
	w.s(", ")
	w.phi("LOCATION", "CITY", p.home.city)
	w.s(", ")
	w.phi("LOCATION", "STATE", p.home.state)
	w.s(" ")
	zip := p.home.zip
	if r.IntN(4) == 0 {
		zip += fmt.Sprintf("-%04d", r.IntN(10000))
	}
	w.phi("LOCATION", "ZIP", zip)
	w.s(". Phone ")
	w.phone(r, "PHONE", p.areaCode, p.phone)
	w.s(". Insurance ID ")
	w.phi("ID", "HEALTHPLAN", p.plan)
	w.s(".\n\nPLAN: Continue current regimen. Labs today. Return in ")
	months := 3 + r.IntN(4)
	w.f("%d months, around ", months)
	w.date(r, date.AddDate(0, months, 0), dateMonthY, dateMonthOfY)
	w.s(".\n\n")
	w.signature(r, p.pcp)
	w.s("cc: ")
	w.doctor(r, p.attending)
	w.s(", fax ")
	w.phone(r, "FAX", p.areaCode, fmt.Sprintf("%03d%04d", 200+r.IntN(800), r.IntN(10000)))
	w.s("\n")
}

func radiologyReport(w *writer, r *rand.Rand, p *persona, date time.Time) {
	e := pick(r, exams)
	w.s("RADIOLOGY REPORT\n")
	w.phi("LOCATION", "HOSPITAL", p.hospital)
	w.s(" Department of Radiology\n\nExam: ", e.name, "    Date: ")
	w.date(r, date, dateDMonY, dateMDY4, dateISO)
	w.s("\nPatient: ")
	w.name(r, "PATIENT", p.person, nameUpperComma, nameLastCommaFirst)
	w.s("    MRN: ")
	w.mrn(r, p.mrn)
	w.s("    Acc#: ")
	w.phi("ID", "ACCOUNT", p.account)
	w.s("\nOrdering physician: ")
	w.doctor(r, p.attending)
	w.s("\n\nCLINICAL INDICATION: ", e.indication, "\n\nCOMPARISON: ")
	if p.lastVisit.IsZero() {
		w.s("None.")
	} else {
		w.date(r, p.lastVisit, dateMDY4, dateMDY2)
		w.s(".")
	}
	w.s("\n\nFINDINGS: ", e.findings, "\n\nIMPRESSION: ", e.impression, "\n\nDictated by: ")
	w.name(r, "DOCTOR", p.radiologist, nameFirstMLast, nameLastCommaFirM)
	w.s(", M.D.    Signed ")
	w.date(r, date, dateMDY2, dateMonDY)
	w.s("\n")
}
