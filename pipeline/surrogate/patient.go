package surrogate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

// chooseShifts settles a patient's date shift and age shift before any of the
// patient's notes is rewritten: stored ones are reused; otherwise the age
// shift brings the patient's oldest age to 90, and the date shift is drawn so
// that no shifted date contains one of the patient's original values (a
// year shifted onto another year the patient's notes mention would leak it).
func (g *gen) chooseShifts(docs []pipeline.Document, p patientGroup) {
	pol := g.e.r.Policy
	g.dates = map[string]*date{}
	maxAge := 0
	for _, i := range p.docs {
		for _, s := range docs[i].Spans {
			switch pol.Rule(s.Category, s.Type).Strategy {
			case DateShift, DateShuffle:
				if d, ok := parseDate(s.Text, g.e.reading); ok {
					g.dates[s.Text] = d
				}
			case Age:
				if n, _, _, ok := ageYears(s.Text); ok && n > maxAge {
					maxAge = n
				}
			}
		}
	}
	if st, ok := g.e.shifts[p.id]; ok {
		g.shift = st
		return
	}
	g.shift = PatientShift{Patient: p.id, New: true}
	if maxAge > 90 {
		g.shift.AgeShift = maxAge - 90
	}
	texts := make([]string, 0, len(g.dates))
	for t := range g.dates {
		texts = append(texts, t)
	}
	sortStrings(texts)
	lo, hi := pol.DateShift.MinDays, pol.DateShift.MaxDays
	best, bestBad := 0, -1
	// A patient with many years in their notes may have no shift within the
	// policy's bounds that moves none onto another: then shifts up to four
	// times as far are tried, and the one taken is listed for review.
	for k := 0; k < 4*tries; k++ {
		days := lo + g.rng.IntN(hi-lo+1)
		if k >= tries {
			days = hi + g.rng.IntN(3*max(hi, 1)) + 1
			if hi < 0 {
				days = hi - g.rng.IntN(-3*hi) - 1
			}
		}
		if pol.DateShift.Either && g.rng.IntN(2) == 0 {
			days = -days
		}
		bad := 0
		for _, t := range texts {
			if g.excl.within(g.dates[t].shifted(days)) {
				bad++
			}
		}
		if bestBad < 0 || bad < bestBad {
			best, bestBad = days, bad
		}
		if bad == 0 {
			if k >= tries {
				g.review = append(g.review, ReviewItem{Doc: g.patient, Reason: fmt.Sprintf(
					"no date shift within [%d, %d] days keeps every date off the patient's other dates: shifted by %d", lo, hi, days)})
			}
			break
		}
	}
	g.shift.Days = best
}

// date replaces a date: shifted by the patient's shift in its own format, or
// (date-shuffle) replaced by a date of the same pattern from another document.
// Each mention keeps its own letter case ("septiembre" and "Septiembre"). A
// date no pattern reads keeps its words, its years move by the patient's
// shift in years and its other numbers are drawn; without digits
// ("Christmas") it is kept; both are listed for review.
func (g *gen) date(s pipeline.Span, strategy string) string {
	d, parsed := g.dates[s.Text]
	if m, ok := g.tab.get(s.Type, s.Text); ok {
		if parsed && m.Strategy == DateShift {
			return d.shifted(g.shift.Days)
		}
		return matchCase(s.Text, m.Surrogate)
	}
	if !parsed {
		if !strings.ContainsAny(s.Text, "0123456789") {
			g.flag(s.Text, "a date without digits that no pattern reads: kept", true)
			return s.Text
		}
		var c string
		for k := 0; k < tries; k++ {
			if c = g.unreadDate(s.Text); !g.excluded(c) && fold(c) != fold(s.Text) {
				break
			}
		}
		g.flag(c, "a date no pattern reads: words kept, years shifted, other numbers drawn", false)
		g.tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: c, Strategy: Shape})
		return c
	}
	var sur string
	if strategy == DateShuffle {
		sur = g.shuffled(s, d)
	}
	if sur == "" {
		if strategy == DateShuffle {
			g.flag("", "no date of the same pattern in another document: shifted instead", false)
		}
		sur, strategy = d.shifted(g.shift.Days), DateShift
	}
	if d.ambiguous {
		order := "month/day"
		if g.e.reading.dmy {
			order = "day/month"
		}
		g.flag(sur, "ambiguous date read as "+order, false)
	}
	g.tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: sur, Strategy: strategy})
	return sur
}

// shuffled draws a date of the same pattern from another document, different
// from every original value of the patient (Deleger et al.).
func (g *gen) shuffled(s pipeline.Span, d *date) string {
	refs := g.e.dates[d.pattern()]
	if len(refs) == 0 {
		return ""
	}
	for k := 0; k < tries; k++ {
		r := refs[g.rng.IntN(len(refs))]
		if r.doc == g.doc.ID || fold(r.text) == fold(s.Text) || g.excl.within(r.text) || g.tab.isTaken(s.Type, r.text) {
			continue
		}
		return r.text
	}
	return ""
}

// unreadDate rewrites a date no pattern reads ("16/018/1961", "Navidad de
// 2002"): words stay, a four-digit year moves by the patient's shift in
// whole years, other numbers are drawn with their width and leading zero.
func (g *gen) unreadDate(s string) string {
	years := int(math.Round(float64(g.shift.Days) / 365.2425))
	var b strings.Builder
	for _, t := range codeTokens(s) {
		switch {
		case isDigits(t.text) && len(t.text) == 4 && t.text >= "1800" && t.text <= "2200":
			y, _ := strconv.Atoi(t.text)
			b.WriteString(strconv.Itoa(y + years))
		case isDigits(t.text):
			for i := range t.text {
				switch {
				case i == 0 && t.text[0] == '0':
					b.WriteByte('0')
				case i == 0:
					b.WriteByte(byte('1' + g.rng.IntN(9)))
				default:
					b.WriteByte(byte('0' + g.rng.IntN(10)))
				}
			}
		default:
			b.WriteString(t.text)
		}
	}
	return b.String()
}

// matchCase writes sur in the case of orig: all lower or upper case as it
// is, else with orig's first letter's case.
func matchCase(orig, sur string) string {
	switch caseOf(orig) {
	case caseUpper:
		return strings.ToUpper(sur)
	case caseLower:
		return strings.ToLower(sur)
	}
	r, size := utf8.DecodeRuneInString(sur)
	o, _ := utf8.DecodeRuneInString(orig)
	if unicode.IsUpper(o) {
		return string(unicode.ToUpper(r)) + sur[size:]
	}
	return string(unicode.ToLower(r)) + sur[size:]
}
