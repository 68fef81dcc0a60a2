// Package resources holds the word lists that surrogates are drawn from and
// that the tagger's dictionary features look words up in: Census first names by
// sex and surnames with their frequencies, the sex SSA counts give each first
// name, US ZIP codes with their cities and states, hospitals, streets, states,
// area codes, countries with their nationality forms, professions,
// organizations and the generic hospital departments of Stubbs & Uzuner 2015.
//
// A Set is one language's pack: English (the US lists above) or Spanish
// (INE's surnames by frequency, first names weighted by the ranks of
// Spain's commonest, and faker's es locale: names by sex, cities
// with their populations and their provinces' postal-code numbers,
// provinces, regions, street types, and streets, towns, hospitals and health
// centres and organizations composed from them). Countries, professions and departments are bilingual and shared
// by both packs.
//
// The lists are embedded in the binary (data/ and data/es/, assembled from
// ../shared/data by gen/, provenance and licenses in data/NOTICE). Default
// returns the English pack and ForLanguage any; LoadText lets a site replace
// any list by a text of its own (ReadDir reads them from a directory).
// A Set is read-only after loading and safe for concurrent use.
package resources

//go:generate go run ./gen -out data

import (
	"bufio"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

//go:embed data
var embedded embed.FS

// Sex is the sex a first name is given to.
type Sex uint8

// Sexes of first names; Either is a name given to both (at least 5% each).
const (
	Either Sex = iota
	Female
	Male
)

func (s Sex) String() string {
	switch s {
	case Female:
		return "female"
	case Male:
		return "male"
	}
	return "either"
}

// Name is a name with its frequency in percent of the population (0 where the
// source gives none).
type Name struct {
	Text string
	Freq float64
}

// Place is a city with its state (a US state's abbreviation, a Spanish
// province's name) and postal codes. A code shorter than five digits is a
// prefix that surrogates complete with random digits (a Spanish province's
// number). Population, in thousands, is 0 where the list gives none (an
// optional fourth field).
type Place struct {
	City       string
	State      string
	ZIPs       []string
	Population float64
}

// State is a US state with its abbreviation, or a Spanish province with its
// number.
type State struct{ Name, Abbr string }

// Hospital is a hospital's name and location.
type Hospital struct{ Name, City, State string }

// Street is a street name and its suffix ("Med Center", "Drive").
type Street struct{ Name, Suffix string }

// Country is a country's names and nationality adjectives in English and
// Spanish (Spanish adjectives masculine and feminine).
type Country struct {
	EN, ES               string
	NationalityEN        string
	NationalityES, FemES string
}

// Department is a generic hospital department and the keywords (folded, see
// Fold) that send a specific department's name to it.
type Department struct {
	Name     string
	Keywords []string // empty for the fallback department
}

// SurrogateMinFreq is the frequency (percent) a Census name needs to be drawn
// as a surrogate: Deleger et al. 2014's IRB threshold (0.002%).
const SurrogateMinFreq = 0.002

// Set is one loaded collection of lists.
type Set struct {
	lang        string
	first       [3][]Name // surrogate pools by Sex
	sex         map[string]Sex
	firstNames  map[string]bool
	surnames    []Name // all, by descending frequency
	surnamePool []Name
	isSurname   map[string]bool

	places     []Place
	byZIP      map[string]int
	cities     map[string][]int // folded city -> its places, the most populous first
	inState    map[string][]int // folded state name -> its places, in list order
	states     []State
	stateIndex map[string]int // folded name or abbreviation -> index

	hospitals  []Hospital
	isHospital map[string]bool
	streets    []Street
	isStreet   map[string]bool
	suffixes   []string
	isSuffix   map[string]bool

	countries    []Country
	countryIndex map[string]int // any folded form -> index

	professions        map[string][]string // by language
	isProfession       map[string]bool
	organizations      []string
	departments        map[string][]Department // by language
	areaCodes          []string
	isAreaCode         map[string]bool
	regions            []string
	isRegion           map[string]bool
	institutionDomains []string
	freeMail           []string
	isFreeMail         map[string]bool
	domains            []string
}

// Languages are the languages with an embedded pack.
func Languages() []string { return []string{"en", "es"} }

var packs sync.Map // language -> func() (*Set, error)

// Default returns the embedded English pack. It panics if the lists do not
// parse, which a test of this package rules out.
func Default() *Set { return ForLanguage("en") }

// ForLanguage returns the embedded pack of a language of Languages; other
// languages get the English pack.
func ForLanguage(lang string) *Set {
	if lang != "es" {
		lang = "en"
	}
	f, _ := packs.LoadOrStore(lang, sync.OnceValues(func() (*Set, error) { return load(nil, lang) }))
	s, err := f.(func() (*Set, error))()
	if err != nil {
		panic("resources: embedded " + lang + " lists: " + err.Error())
	}
	return s
}

// LoadText returns a language's embedded pack with every list that files
// holds the text of (by file name, see Files and data/NOTICE for the names
// and formats) replaced by that text: a site draws surrogates from its own
// region's names and places. The lists travel as text, as a resynthesis
// policy carries them: nothing here reads a file.
func LoadText(files map[string]string, lang string) (*Set, error) {
	if !slices.Contains(Languages(), lang) {
		return nil, fmt.Errorf("resources: no pack for language %q (want one of %s)", lang, strings.Join(Languages(), ", "))
	}
	for name := range files {
		if !slices.Contains(Files(), name) {
			return nil, fmt.Errorf("resources: %q is no list's name (known: %s)", name, strings.Join(Files(), ", "))
		}
	}
	return load(files, lang)
}

// ReadDir reads the lists a directory holds a file of the same name for
// (see Files) into the text LoadText takes, for a command that reads a
// site's lists on the user's own machine.
func ReadDir(dir string) (map[string]string, error) {
	files := map[string]string{}
	for _, name := range Files() {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		files[name] = string(data)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no list of a pack (%s)", dir, strings.Join(Files(), ", "))
	}
	return files, nil
}

// Language returns the language of the pack ("en" or "es").
func (s *Set) Language() string { return s.lang }

// Files lists the names of the files a Set reads, for sites preparing
// overrides; regions.txt is optional.
func Files() []string {
	return []string{"first_female.tsv", "first_male.tsv", "surnames.tsv", "sex.tsv", "zipcodes.tsv", "states.tsv",
		"hospitals.tsv", "streets.tsv", "street_suffixes.txt", "countries.tsv", "professions_en.txt",
		"professions_es.txt", "organizations.txt", "departments_en.tsv", "departments_es.tsv", "area_codes.txt",
		"free_email.txt", "domain_suffixes.txt", "regions.txt", "institution_domains.txt"}
}

// perLanguage are the lists each pack has its own of; the others are shared.
var perLanguage = map[string]bool{"first_female.tsv": true, "first_male.tsv": true, "surnames.tsv": true, "sex.tsv": true,
	"zipcodes.tsv": true, "states.tsv": true, "hospitals.tsv": true, "streets.tsv": true, "street_suffixes.txt": true,
	"organizations.txt": true, "domain_suffixes.txt": true, "regions.txt": true, "free_email.txt": true,
	"institution_domains.txt": true}

type loader struct {
	site map[string]string // a site's lists by name, replacing the pack's
	lang string
	err  error
}

// rows returns a list's non-empty, non-comment lines split on tabs, each with
// at least min fields.
func (l *loader) rows(name string, min int) [][]string {
	if l.err != nil {
		return nil
	}
	var data []byte
	var err error
	src := "embedded " + name
	if text, ok := l.site[name]; ok {
		data, src = []byte(text), name
	}
	if data == nil && err == nil {
		path := "data/" + name
		if l.lang != "en" && perLanguage[name] {
			path = "data/" + l.lang + "/" + name
		}
		data, err = embedded.ReadFile(path)
		src = "embedded " + strings.TrimPrefix(path, "data/")
		if optional[name] && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	if err != nil {
		l.err = err
		return nil
	}
	var out [][]string
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < min {
			l.err = fmt.Errorf("%s:%d: want %d tab-separated fields, got %d", src, n, min, len(f))
			return nil
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		l.err = fmt.Errorf("%s: empty list", src)
	}
	return out
}

// optional lists may be absent from a pack (English has no regions list).
var optional = map[string]bool{"regions.txt": true, "domain_suffixes.txt": true, "institution_domains.txt": true}

func (l *loader) names(name string) []Name {
	var out []Name
	for _, r := range l.rows(name, 2) {
		f, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			l.err = fmt.Errorf("%s: %q: %v", name, r[0], err)
			return nil
		}
		out = append(out, Name{r[0], f})
	}
	return out
}

func load(site map[string]string, lang string) (*Set, error) {
	l := &loader{site: site, lang: lang}
	s := &Set{lang: lang, sex: map[string]Sex{}, firstNames: map[string]bool{}, isSurname: map[string]bool{}}

	for _, r := range l.rows("sex.tsv", 2) {
		k := Fold(r[0])
		s.firstNames[k] = true
		switch r[1] {
		case "F":
			s.sex[k] = Female
		case "M":
			s.sex[k] = Male
		default:
			s.sex[k] = Either
		}
	}
	// A Census first name takes its pool from SSA's counts when SSA knows it:
	// "Jordan" is on both Census lists and SSA calls it either. Names of either
	// sex are taken from the female list only, so that a name on both lists
	// enters the pool once.
	for i, list := range []string{"first_female.tsv", "first_male.tsv"} {
		listSex := Female
		if i == 1 {
			listSex = Male
		}
		for _, n := range l.names(list) {
			k := Fold(n.Text)
			s.firstNames[k] = true
			sex, ok := s.sex[k]
			if !ok {
				sex = listSex
				s.sex[k] = sex
			}
			if n.Freq >= SurrogateMinFreq && (sex == listSex || i == 0) {
				s.first[sex] = append(s.first[sex], n)
			}
		}
	}
	s.surnames = l.names("surnames.tsv")
	for _, n := range s.surnames {
		s.isSurname[Fold(n.Text)] = true
		if n.Freq >= SurrogateMinFreq {
			s.surnamePool = append(s.surnamePool, n)
		}
	}

	s.byZIP, s.cities = map[string]int{}, map[string][]int{}
	for _, r := range l.rows("zipcodes.tsv", 3) {
		// Skip the post-office names that are not towns ("115 Crm Firms").
		if !isPlaceName(r[0]) {
			continue
		}
		p := Place{City: r[0], State: r[1], ZIPs: strings.Fields(r[2])}
		if len(r) > 3 {
			n, err := strconv.ParseFloat(r[3], 64)
			if err != nil || n < 0 {
				l.err = fmt.Errorf("zipcodes.tsv: %q: population %q is not a number of thousands", r[0], r[3])
				break
			}
			p.Population = n
		}
		for _, z := range p.ZIPs {
			s.byZIP[z] = len(s.places)
		}
		f, i := Fold(p.City), len(s.places)
		if same := s.cities[f]; len(same) > 0 && s.places[same[0]].Population < p.Population {
			s.cities[f] = append([]int{i}, same...)
		} else {
			s.cities[f] = append(same, i)
		}
		s.places = append(s.places, p)
	}
	s.inState = map[string][]int{}
	for i, p := range s.places {
		s.inState[Fold(p.State)] = append(s.inState[Fold(p.State)], i)
	}
	s.stateIndex = map[string]int{}
	for _, r := range l.rows("states.tsv", 2) {
		for _, name := range r { // the name, its abbreviation, then any other names it goes by
			s.stateIndex[Fold(name)] = len(s.states)
		}
		s.states = append(s.states, State{r[0], r[1]})
	}
	s.isHospital = map[string]bool{}
	for _, r := range l.rows("hospitals.tsv", 3) {
		s.hospitals = append(s.hospitals, Hospital{r[0], r[1], r[2]})
		s.isHospital[Fold(r[0])] = true
	}
	s.isStreet = map[string]bool{}
	for _, r := range l.rows("streets.tsv", 2) {
		s.streets = append(s.streets, Street{r[0], r[1]})
		s.isStreet[Fold(r[0])] = true
	}
	s.isSuffix = map[string]bool{}
	for _, r := range l.rows("street_suffixes.txt", 1) {
		s.suffixes = append(s.suffixes, r[0])
		s.isSuffix[Fold(r[0])] = true
	}
	s.countryIndex = map[string]int{}
	for _, r := range l.rows("countries.tsv", 5) {
		c := Country{r[0], r[1], r[2], r[3], r[4]}
		for _, form := range r[:5] {
			s.countryIndex[Fold(form)] = len(s.countries)
		}
		s.countries = append(s.countries, c)
	}
	s.professions, s.isProfession = map[string][]string{}, map[string]bool{}
	s.departments = map[string][]Department{}
	for _, lang := range []string{"en", "es"} {
		for _, r := range l.rows("professions_"+lang+".txt", 1) {
			s.professions[lang] = append(s.professions[lang], r[0])
			s.isProfession[Fold(r[0])] = true
		}
		for _, r := range l.rows("departments_"+lang+".tsv", 2) {
			d := Department{Name: r[0]}
			if r[1] != "*" {
				for _, k := range strings.Split(r[1], ",") {
					d.Keywords = append(d.Keywords, Fold(k))
				}
			}
			s.departments[lang] = append(s.departments[lang], d)
		}
	}
	for _, r := range l.rows("organizations.txt", 1) {
		s.organizations = append(s.organizations, r[0])
	}
	s.isAreaCode = map[string]bool{}
	for _, r := range l.rows("area_codes.txt", 1) {
		s.areaCodes = append(s.areaCodes, r[0])
		s.isAreaCode[r[0]] = true
	}
	s.isRegion = map[string]bool{}
	for _, r := range l.rows("regions.txt", 1) {
		s.regions = append(s.regions, r[0])
		s.isRegion[Fold(r[0])] = true
	}
	s.isFreeMail = map[string]bool{}
	for _, r := range l.rows("free_email.txt", 1) {
		s.freeMail = append(s.freeMail, r[0])
		s.isFreeMail[Fold(r[0])] = true
	}
	for _, r := range l.rows("domain_suffixes.txt", 1) {
		s.domains = append(s.domains, r[0])
	}
	for _, r := range l.rows("institution_domains.txt", 1) {
		s.institutionDomains = append(s.institutionDomains, r[0])
	}
	if l.err != nil {
		return nil, l.err
	}
	if len(s.first[Either]) == 0 { // a pack whose lists share no name draws unsexed names from both
		s.first[Either] = append(append([]Name(nil), s.first[Female]...), s.first[Male]...)
	}
	for sex, pool := range s.first {
		if len(pool) == 0 {
			return nil, fmt.Errorf("no %s first names of frequency >= %g%%", Sex(sex), SurrogateMinFreq)
		}
	}
	if len(s.surnamePool) == 0 || len(s.places) == 0 {
		return nil, errors.New("no surnames or places to draw surrogates from")
	}
	return s, nil
}

func isPlaceName(s string) bool {
	letters := 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case r == ' ' || r == '-' || r == '.' || r == '\'':
		default:
			return false
		}
	}
	return letters >= 3
}

// Keys calls yield with every folded word or phrase that one of the set's
// membership tests (SexOf, IsFirstName, IsSurname, IsCity, StateOf,
// IsHospital, IsStreetName, IsStreetSuffix, CountryOf, IsProfession,
// IsRegion) answers yes to, possibly more than once: what a caller needs to
// answer those tests from one table of its own.
func (s *Set) Keys(yield func(string) bool) {
	for _, m := range []map[string]bool{s.firstNames, s.isSurname, s.isHospital, s.isStreet, s.isSuffix,
		s.isProfession, s.isRegion} {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
	for _, m := range []map[string]int{s.stateIndex, s.countryIndex} {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
	for k := range s.cities {
		if !yield(k) {
			return
		}
	}
	for k := range s.sex {
		if !yield(k) {
			return
		}
	}
}

// FirstNames returns the first names of a sex that surrogates are drawn from
// (Census 1990, frequency >= SurrogateMinFreq), by descending frequency.
func (s *Set) FirstNames(sex Sex) []Name { return s.first[sex] }

// SexOf returns the sex a first name is given to, and whether the name is known.
func (s *Set) SexOf(first string) (Sex, bool) {
	sex, ok := s.sex[Fold(first)]
	return sex, ok
}

// IsFirstName reports whether a word is a known first name (Census or SSA).
func (s *Set) IsFirstName(w string) bool { return s.firstNames[Fold(w)] }

// Surnames returns every listed surname by descending frequency.
func (s *Set) Surnames() []Name { return s.surnames }

// SurrogateSurnames returns the surnames surrogates are drawn from.
func (s *Set) SurrogateSurnames() []Name { return s.surnamePool }

// IsSurname reports whether a word is a listed surname.
func (s *Set) IsSurname(w string) bool { return s.isSurname[Fold(w)] }

// Places returns the cities with their state, postal codes and population.
func (s *Set) Places() []Place { return s.places }

// PlaceOfZIP returns the place a five-digit ZIP code belongs to.
func (s *Set) PlaceOfZIP(zip string) (Place, bool) {
	i, ok := s.byZIP[zip]
	if !ok {
		return Place{}, false
	}
	return s.places[i], true
}

// IsCity reports whether a word or phrase is a listed city.
func (s *Set) IsCity(w string) bool { return len(s.cities[Fold(w)]) > 0 }

// PlaceOfCity returns the place a city's name names: the most populous of
// those of that name (the first listed where the list has no populations).
func (s *Set) PlaceOfCity(name string) (Place, bool) {
	same := s.cities[Fold(name)]
	if len(same) == 0 {
		return Place{}, false
	}
	return s.places[same[0]], true
}

// PlacesIn returns the indexes in Places of the places of a state or
// province, named as a Place names it.
func (s *Set) PlacesIn(state string) []int { return s.inState[Fold(state)] }

// CityHasZIP reports whether a place of a city's name has the postal code.
func (s *Set) CityHasZIP(name, zip string) bool {
	for _, i := range s.cities[Fold(name)] {
		if s.places[i].HasZIP(zip) {
			return true
		}
	}
	return false
}

// CityProvinceHasZIP reports whether a Spanish postal code is of the
// province of a city of that name (its first two digits, the province's
// number); US places have no such prefix.
func (s *Set) CityProvinceHasZIP(name, zip string) bool {
	for _, i := range s.cities[Fold(name)] {
		for _, z := range s.places[i].ZIPs {
			if len(z) == 3 && strings.HasPrefix(zip, z[:2]) {
				return true
			}
		}
	}
	return false
}

// CityIsIn reports whether a place of a city's name lies in a state
// (province), named as StateOf takes it.
func (s *Set) CityIsIn(name, state string) bool {
	st, ok := s.stateIndex[Fold(state)]
	if !ok {
		return false
	}
	for _, i := range s.cities[Fold(name)] {
		if j, ok := s.stateIndex[Fold(s.places[i].State)]; ok && j == st {
			return true
		}
	}
	return false
}

// HasZIP reports whether a postal code is one of the place's: a US ZIP code
// listed with it, or a Spanish code under one of its three-digit prefixes.
func (p Place) HasZIP(zip string) bool {
	for _, z := range p.ZIPs {
		if strings.HasPrefix(zip, z) {
			return true
		}
	}
	return false
}

// States returns the US states.
func (s *Set) States() []State { return s.states }

// StateOf returns the state a name or abbreviation ("MA", "massachusetts") names,
// or another name a pack lists for it (a Spanish province's island, "Tenerife").
func (s *Set) StateOf(w string) (State, bool) {
	i, ok := s.stateIndex[Fold(w)]
	if !ok {
		return State{}, false
	}
	return s.states[i], true
}

// Hospitals returns the listed hospitals.
func (s *Set) Hospitals() []Hospital { return s.hospitals }

// IsHospital reports whether a phrase is a listed hospital's name.
func (s *Set) IsHospital(w string) bool { return s.isHospital[Fold(w)] }

// Streets returns the listed street names with their suffixes.
func (s *Set) Streets() []Street { return s.streets }

// IsStreetName reports whether a phrase is a listed street name (without suffix).
func (s *Set) IsStreetName(w string) bool { return s.isStreet[Fold(w)] }

// StreetSuffixes returns the street suffixes ("Avenue", "Court", ...).
func (s *Set) StreetSuffixes() []string { return s.suffixes }

// IsStreetSuffix reports whether a word is a street suffix.
func (s *Set) IsStreetSuffix(w string) bool { return s.isSuffix[Fold(w)] }

// Countries returns the listed countries.
func (s *Set) Countries() []Country { return s.countries }

// CountryOf returns the country a name or nationality adjective (English or
// Spanish, any case or accents) names.
func (s *Set) CountryOf(w string) (Country, bool) {
	i, ok := s.countryIndex[Fold(w)]
	if !ok {
		return Country{}, false
	}
	return s.countries[i], true
}

// Professions returns the professions of a language ("en" or "es"; others get English).
func (s *Set) Professions(lang string) []string {
	if p, ok := s.professions[lang]; ok {
		return p
	}
	return s.professions["en"]
}

// IsProfession reports whether a phrase is a listed profession.
func (s *Set) IsProfession(w string) bool { return s.isProfession[Fold(w)] }

// Organizations returns the organization names surrogates are drawn from.
func (s *Set) Organizations() []string { return s.organizations }

// Departments returns the generic departments of a language, the fallback last.
func (s *Set) Departments(lang string) []Department {
	if d, ok := s.departments[lang]; ok {
		return d
	}
	return s.departments["en"]
}

// GenericDepartment returns the generic department a specific department's
// name becomes (Stubbs & Uzuner 2015 section 5.2): the one whose keyword starts
// the earliest word of the name ("Department for radiology, imaging, and
// oncology" -> "Radiology"), the list's order breaking ties, else the fallback
// ("Internal medicine").
func (s *Set) GenericDepartment(name, lang string) string {
	deps := s.Departments(lang)
	padded := " " + Fold(name) + " "
	best, at := len(deps)-1, len(padded)
	for i, d := range deps {
		for _, k := range d.Keywords {
			if j := strings.Index(padded, " "+k); j >= 0 && j < at {
				best, at = i, j
			}
		}
	}
	return deps[best].Name
}

// AreaCodes returns the US telephone area codes.
func (s *Set) AreaCodes() []string { return s.areaCodes }

// IsAreaCode reports whether three digits are a US area code.
func (s *Set) IsAreaCode(code string) bool { return s.isAreaCode[code] }

// Regions returns the pack's regions (Spain's autonomous communities; none in English).
func (s *Set) Regions() []string { return s.regions }

// IsRegion reports whether a phrase is a listed region.
func (s *Set) IsRegion(w string) bool { return s.isRegion[Fold(w)] }

// FreeMailDomains returns public e-mail providers ("gmail.com"): a domain that
// identifies no one, replaced by another of them.
func (s *Set) FreeMailDomains() []string { return s.freeMail }

// IsFreeMailDomain reports whether a domain is a listed public e-mail provider.
func (s *Set) IsFreeMailDomain(d string) bool { return s.isFreeMail[Fold(d)] }

// InstitutionDomains returns the mail domains of the pack's public health
// services, universities and medical colleges ("sergas.es"); none in English.
func (s *Set) InstitutionDomains() []string { return s.institutionDomains }

// DomainSuffixes returns the pack's usual top-level domains ("es", "com"); none in English.
func (s *Set) DomainSuffixes() []string { return s.domains }
