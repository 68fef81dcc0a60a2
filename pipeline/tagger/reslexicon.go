package tagger

import (
	"strings"
	"sync"

	"deidcorpus/pipeline/resources"
)

// ResourcesLexicon is the name under which the project's embedded word lists
// (pipeline/resources) are registered as a Lexicon.
const ResourcesLexicon = "resources"

func init() {
	RegisterLexicon(ResourcesLexicon, &resourceLexicon{set: sync.OnceValue(resources.Default)})
}

// resourceLexicon answers dictionary features from pipeline/resources, plus
// the closed classes (months, weekdays, seasons; English and Spanish) that are
// too small to be a resource list of their own.
type resourceLexicon struct {
	set func() *resources.Set
}

// calendar maps folded month, weekday and season words and abbreviations to
// their list.
var calendar = func() map[string]string {
	m := map[string]string{}
	add := func(list, words string) {
		for _, w := range strings.Fields(words) {
			m[w] = list
		}
	}
	add("month", "january february march april may june july august september october november december "+
		"jan feb mar apr jun jul aug sep sept oct nov dec "+
		"enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre "+
		"ene abr ago dic")
	add("weekday", "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "+
		"lunes martes miercoles jueves viernes sabado domingo")
	add("season", "spring summer autumn fall winter primavera verano otono invierno")
	return m
}()

// MaxWords: hospital, city and profession names run to a few words.
func (l *resourceLexicon) MaxWords() int { return 4 }

func (l *resourceLexicon) Lookup(phrase string) []string {
	s := l.set()
	f := resources.Fold(phrase)
	var out []string
	if !strings.Contains(f, " ") {
		if c, ok := calendar[f]; ok {
			out = append(out, c)
		}
		if sex, ok := s.SexOf(f); ok {
			out = append(out, "first_"+sex.String())
		} else if s.IsFirstName(f) {
			out = append(out, "first")
		}
		if s.IsSurname(f) {
			out = append(out, "surname")
		}
		if _, ok := s.StateOf(f); ok && len(f) > 2 {
			out = append(out, "state")
		}
		if s.IsStreetSuffix(f) {
			out = append(out, "street_suffix")
		}
	}
	if s.IsCity(f) {
		out = append(out, "city")
	}
	if s.IsHospital(f) {
		out = append(out, "hospital")
	}
	if s.IsStreetName(f) {
		out = append(out, "street")
	}
	if _, ok := s.CountryOf(f); ok {
		out = append(out, "country")
	}
	if s.IsProfession(f) {
		out = append(out, "profession")
	}
	return out
}
