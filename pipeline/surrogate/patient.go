package surrogate

import (
	"strings"

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
				if d, ok := parseDate(s.Text, g.e.dmy); ok {
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
	for k := 0; k < tries; k++ {
		days := lo + g.rng.IntN(hi-lo+1)
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
			break
		}
	}
	g.shift.Days = best
}

// date replaces a date: shifted by the patient's shift in its own format, or
// (date-shuffle) replaced by a date of the same pattern from another document.
// A date no pattern reads has its digits drawn at random, or, without digits
// ("Christmas"), is kept; both are listed for review.
func (g *gen) date(s pipeline.Span, strategy string) string {
	if m, ok := g.tab.get(s.Type, s.Text); ok {
		return m.Surrogate
	}
	d, ok := g.dates[s.Text]
	if !ok {
		if !strings.ContainsAny(s.Text, "0123456789") {
			g.flag(s.Text, "a date without digits that no pattern reads: kept", true)
			return s.Text
		}
		var c string
		for k := 0; k < tries; k++ {
			if c = g.shape(s.Text); !g.excl.within(c) {
				break
			}
		}
		g.flag(c, "a date no pattern reads: digits drawn at random", false)
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
		if g.e.dmy {
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
