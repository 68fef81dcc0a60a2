package tagger

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"deidcorpus/pipeline/resources"
)

// ResourcesLexicon is the name under which the project's embedded English
// word lists (pipeline/resources) are registered as a Lexicon; PacksLexicon
// joins the lists of every language's pack (a Spanish corpus's surnames,
// cities, provinces and regions are in the Spanish one). PacksLexicon is not
// the default: a tagger trained on surrogates drawn from those very lists
// learns list membership as the sign of PHI (see the package README).
const (
	ResourcesLexicon = "resources"
	PacksLexicon     = "packs"
)

func init() {
	RegisterLexicon(ResourcesLexicon, newResourceLexicon(func() []*resources.Set {
		return []*resources.Set{resources.Default()}
	}, false))
	RegisterLexicon(PacksLexicon, newResourceLexicon(func() []*resources.Set {
		var sets []*resources.Set
		for _, lang := range resources.Languages() {
			sets = append(sets, resources.ForLanguage(lang))
		}
		return sets
	}, true))
}

func newResourceLexicon(sets func() []*resources.Set, regions bool) *resourceLexicon {
	l := &resourceLexicon{sets: sync.OnceValue(sets), regions: regions}
	l.index = sync.OnceValue(l.buildIndex)
	return l
}

// resourceLexicon answers dictionary features from pipeline/resources, plus
// the closed classes (months, weekdays, seasons; English and Spanish) that are
// too small to be a resource list of their own. A phrase in the same list of
// several packs gets that list once.
type resourceLexicon struct {
	sets    func() []*resources.Set
	regions bool // the "region" list (kept out of the older English lexicon)
	// index maps every folded phrase some list holds to its lists, built on
	// first use: a lookup is then one fold and one map access instead of a
	// fold and an access per list and pack (a sixth of tagging's time).
	index func() lexiconIndex
}

// lexiconIndex is every folded phrase of a resourceLexicon's lists with its
// lists, and the phrases sorted.
type lexiconIndex struct {
	lists map[string][]string
	keys  []string
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
	return l.index().lists[resources.Fold(phrase)]
}

func (l *resourceLexicon) find(phrase string) ([]string, bool) {
	ix, f := l.index(), resources.Fold(phrase)
	return ix.lists[f], continued(ix.keys, f)
}

func (l *resourceLexicon) buildIndex() lexiconIndex {
	index := map[string][]string{}
	add := func(f string) {
		if _, done := index[f]; !done {
			index[f] = l.lists(f)
		}
	}
	for f := range calendar {
		add(f)
	}
	for _, s := range l.sets() {
		for f := range s.Keys {
			add(f)
		}
	}
	for f, lists := range index {
		if len(lists) == 0 { // a state abbreviation of two letters, say
			delete(index, f)
		}
	}
	return lexiconIndex{index, slices.Sorted(maps.Keys(index))}
}

// lists returns the lists holding a folded phrase, asking each list of each
// pack: what the index holds for it.
func (l *resourceLexicon) lists(f string) []string {
	var out []string
	add := func(list string) {
		if !slices.Contains(out, list) {
			out = append(out, list)
		}
	}
	word := !strings.Contains(f, " ")
	if c, ok := calendar[f]; ok && word {
		add(c)
	}
	for _, s := range l.sets() {
		if word {
			if sex, ok := s.SexOf(f); ok {
				add("first_" + sex.String())
			} else if s.IsFirstName(f) {
				add("first")
			}
			if s.IsSurname(f) {
				add("surname")
			}
			if _, ok := s.StateOf(f); ok && len(f) > 2 {
				add("state")
			}
			if s.IsStreetSuffix(f) {
				add("street_suffix")
			}
		}
		if s.IsCity(f) {
			add("city")
		}
		if l.regions && s.IsRegion(f) {
			add("region")
		}
		if s.IsHospital(f) {
			add("hospital")
		}
		if s.IsStreetName(f) {
			add("street")
		}
		if _, ok := s.CountryOf(f); ok {
			add("country")
		}
		if s.IsProfession(f) {
			add("profession")
		}
	}
	return out
}
