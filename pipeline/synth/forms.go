package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Surface forms of PHI. Names follow the structural patterns Yeniterzi et al.
// (2010, Table 7) counted in real notes (AAA, AAA AAA, AAA, AAA A., ...);
// dates, ages, phones and IDs the templates of Yang & Garibaldi (2015,
// Table 2). Titles ("Dr.", "Mr."), "M.D." and a possessive 's stay outside
// the spans, as the i2b2 2014 guidelines say.

const (
	nameFirstLast       = iota // John Smith
	nameLastCommaFirM          // Smith, John A.
	nameUpperComma             // SMITH, JOHN
	nameFirstMLast             // John A. Smith
	nameInitialLast            // J. Smith
	nameLast                   // Smith
	nameLastCommaFirst         // Smith, John
	nameFirstMLastUpper        // JOHN A SMITH
)

func (n person) form(f int) string {
	switch f {
	case nameLastCommaFirM:
		return n.last + ", " + n.first + " " + n.middle[:1] + "."
	case nameUpperComma:
		return strings.ToUpper(n.last + ", " + n.first)
	case nameFirstMLast:
		return n.first + " " + n.middle[:1] + ". " + n.last
	case nameInitialLast:
		return n.first[:1] + ". " + n.last
	case nameLast:
		return n.last
	case nameLastCommaFirst:
		return n.last + ", " + n.first
	case nameFirstMLastUpper:
		return strings.ToUpper(n.first + " " + n.middle[:1] + " " + n.last)
	}
	return n.first + " " + n.last
}

// name writes a person's name in one of the given forms.
func (w *writer) name(r *rand.Rand, typ string, n person, forms ...int) {
	w.phi("NAME", typ, n.form(pick(r, forms)))
}

// doctor writes "Dr. " and a clinician's name in a form that follows a title.
func (w *writer) doctor(r *rand.Rand, n person) {
	w.s("Dr. ")
	w.name(r, "DOCTOR", n, nameLast, nameInitialLast, nameFirstLast, nameLast)
}

// signature writes a clinician's closing line: name, degree, then sometimes
// the initials and username that Partners notes end with.
func (w *writer) signature(r *rand.Rand, n person) {
	w.name(r, "DOCTOR", n, nameFirstMLast, nameFirstLast, nameLastCommaFirM)
	w.s(", M.D.\n")
	if r.IntN(2) == 0 {
		w.s(strings.ToUpper(n.first[:1] + n.middle[:1] + n.last[:1]))
		w.s("/")
		w.phi("NAME", "USERNAME", n.username)
		w.s("\n")
	}
}

const (
	dateMDY4     = iota // 11/24/2067
	dateMDY2            // 11/24/67
	dateISO             // 2067-11-24
	dateMonthOrd        // November 5th
	dateMonDY           // Nov 5, 2067
	dateDMonY           // 5 Nov 2067
	dateMDYDash         // 11-24-67
	dateMonthY          // November 2067
	dateMonthOfY        // April of 2067
	dateMD              // 11/24
	dateWeekday         // Tuesday
	dateYear            // 2067
	dateDMonY2          // 30Aug67
)

func ordinal(d int) string {
	switch {
	case d >= 11 && d <= 13:
		return "th"
	case d%10 == 1:
		return "st"
	case d%10 == 2:
		return "nd"
	case d%10 == 3:
		return "rd"
	}
	return "th"
}

func formatDate(t time.Time, f int) string {
	switch f {
	case dateMDY2:
		return t.Format("1/2/06")
	case dateISO:
		return t.Format("2006-01-02")
	case dateMonthOrd:
		return t.Format("January 2") + ordinal(t.Day())
	case dateMonDY:
		return t.Format("Jan 2, 2006")
	case dateDMonY:
		return t.Format("2 Jan 2006")
	case dateMDYDash:
		return t.Format("01-02-06")
	case dateMonthY:
		return t.Format("January 2006")
	case dateMonthOfY:
		return t.Format("January") + " of " + t.Format("2006")
	case dateMD:
		return t.Format("1/2")
	case dateWeekday:
		return t.Format("Monday")
	case dateYear:
		return t.Format("2006")
	case dateDMonY2:
		return t.Format("2Jan06")
	}
	return t.Format("01/02/2006")
}

// date writes t as one DATE span in one of the given forms.
func (w *writer) date(r *rand.Rand, t time.Time, forms ...int) {
	w.phi("DATE", "DATE", formatDate(t, pick(r, forms)))
}

// age writes an age in one of the forms of Yang Table 2; only the number is
// the AGE span ("72-year-old", "72yoM"). A noun form names the sex itself
// ("72yoM", "72 y.o. male"); the others are adjectives for "man"/"woman".
func (w *writer) age(r *rand.Rand, age int, female, noun bool) {
	n := fmt.Sprint(age)
	if noun {
		sex, word := "M", "male"
		if female {
			sex, word = "F", "female"
		}
		switch r.IntN(3) {
		case 0:
			w.phi("AGE", "AGE", n)
			w.s("yo" + sex)
		case 1:
			w.phi("AGE", "AGE", n)
			w.s(" y.o. " + word)
		default:
			w.phi("AGE", "AGE", n)
			w.s(" year old " + word)
		}
		return
	}
	w.phi("AGE", "AGE", n)
	w.s(pick(r, []string{"-year-old", " yo", " y.o.", "-yr-old"}))
}

// phone writes a number in one of three layouts: (617) 555-0134,
// 617-555-0134, 617.555.0134.
func (w *writer) phone(r *rand.Rand, typ, area, number string) {
	local := number[:3] + "-" + number[3:]
	var s string
	switch r.IntN(3) {
	case 0:
		s = "(" + area + ") " + local
	case 1:
		s = area + "-" + local
	default:
		s = area + "." + number[:3] + "." + number[3:]
	}
	w.phi("CONTACT", typ, s)
}

// mrn writes the medical record number as 7 digits or in the dashed layout
// (981-40-48) some systems print.
func (w *writer) mrn(r *rand.Rand, mrn string) {
	if r.IntN(3) == 0 {
		mrn = mrn[:3] + "-" + mrn[3:5] + "-" + mrn[5:]
	}
	w.phi("ID", "MEDICALRECORD", mrn)
}
