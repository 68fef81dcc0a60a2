// Command gen assembles the compact surrogate lists under pipeline/resources/data
// from the public sources in ../shared/data (Census 1990 names, SSA baby-name
// counts, US ZIP codes, CMS hospitals, faker-js en_US and es) and INE's Spanish
// surnames kept beside it (gen/es_surnames.json). Run it with
// `go generate ./pipeline/resources` from the module root; its output is
// committed so that builds and CI never need ../shared/data. The hand-written
// lists in data/ (countries, professions, organizations, departments) are not
// touched.
package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"deidcorpus/internal/shared"
)

// Thresholds keep the embedded data to a few hundred kilobytes per list while
// covering the names a clinical note is likely to hold.
const (
	minSurnameFreq = 0.001 // percent: 18,839 of the 88,799 Census surnames
	minSSABirths   = 500   // 17,722 of the 116,550 SSA (name, sex) names
)

func main() {
	dataDir := flag.String("data", "", "the shared data directory (default: $DEIDCORPUS_DATA or the nearest shared/data)")
	out := flag.String("out", "data", "output directory")
	flag.Parse()
	if *dataDir == "" {
		d, ok := shared.Dir()
		if !ok {
			log.Fatal("shared/data not found: pass -data or set DEIDCORPUS_DATA")
		}
		*dataDir = d
	}
	g := gen{src: *dataDir, out: *out}
	g.census("dist.female.first", "first_female.tsv", 0)
	g.census("dist.male.first", "first_male.tsv", 0)
	g.census("dist.all.last", "surnames.tsv", minSurnameFreq)
	g.ssa()
	g.zipcodes()
	g.hospitals()
	g.faker()
	g.spanish()
	if g.err != nil {
		log.Fatal(g.err)
	}
}

type gen struct {
	src, out string
	err      error
	suffixes map[string]bool // street suffixes, filled by faker() before hospitals() needs them
}

func (g *gen) write(name string, lines []string) {
	if g.err != nil {
		return
	}
	body := strings.Join(lines, "\n") + "\n"
	g.err = os.WriteFile(filepath.Join(g.out, name), []byte(body), 0o644)
}

func (g *gen) open(rel string) io.ReadCloser {
	f, err := os.Open(filepath.Join(g.src, rel))
	if err != nil && g.err == nil {
		g.err = err
	}
	return f
}

// census converts a Census 1990 list (NAME freq cum rank) to "Name\tfreq".
func (g *gen) census(file, out string, minFreq float64) {
	if g.err != nil {
		return
	}
	f := g.open("census1990-names/" + file)
	if g.err != nil {
		return
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		freq, err := strconv.ParseFloat(fs[1], 64)
		if err != nil {
			g.err = fmt.Errorf("%s: %v", file, err)
			return
		}
		if freq < minFreq {
			continue
		}
		lines = append(lines, title(fs[0])+"\t"+fs[1])
	}
	g.err = sc.Err()
	g.write(out, lines)
}

// ssa writes "name\tF|M|U": the sex a first name is given to, from SSA birth
// counts. A name is F or M when at least 95% of its births are of that sex,
// U (either) otherwise, as Deleger et al. tell female, male and either names.
func (g *gen) ssa() {
	if g.err != nil {
		return
	}
	f := g.open("ssa-babynames/ssa_national_firstnames_by_sex.csv")
	if g.err != nil {
		return
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		g.err = err
		return
	}
	type counts struct{ f, m int }
	byName := map[string]*counts{}
	for _, r := range rows[1:] {
		n, err := strconv.Atoi(r[2])
		if err != nil {
			g.err = fmt.Errorf("ssa: %v", err)
			return
		}
		c := byName[r[0]]
		if c == nil {
			c = &counts{}
			byName[r[0]] = c
		}
		if r[1] == "F" {
			c.f += n
		} else {
			c.m += n
		}
	}
	var lines []string
	for _, name := range sortedKeys(byName) {
		c := byName[name]
		total := c.f + c.m
		if total < minSSABirths {
			continue
		}
		sex := "U"
		switch {
		case float64(c.f) >= 0.95*float64(total):
			sex = "F"
		case float64(c.m) >= 0.95*float64(total):
			sex = "M"
		}
		lines = append(lines, name+"\t"+sex)
	}
	g.write("sex.tsv", lines)
}

// zipcodes writes "City\tST\tzip zip ...", one line per city and state.
func (g *gen) zipcodes() {
	if g.err != nil {
		return
	}
	f := g.open("us-zipcodes/zipcodes_us.csv")
	if g.err != nil {
		return
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		g.err = err
		return
	}
	byPlace := map[string][]string{}
	for _, r := range rows[1:] {
		key := r[1] + "\t" + r[2]
		byPlace[key] = append(byPlace[key], r[0])
	}
	var lines []string
	for _, k := range sortedKeys(byPlace) {
		zips := byPlace[k]
		sort.Strings(zips)
		lines = append(lines, k+"\t"+strings.Join(zips, " "))
	}
	g.write("zipcodes.tsv", lines)
}

// hospitals writes "Name\tCity\tST" and adds the street names of the hospitals'
// addresses to streets.tsv (written by faker, which runs after).
func (g *gen) hospitals() {
	if g.err != nil {
		return
	}
	f := g.open("cms-hospitals/hospitals_min.csv")
	if g.err != nil {
		return
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		g.err = err
		return
	}
	seen := map[string]bool{}
	var lines []string
	for _, r := range rows[1:] {
		name := strings.Join(strings.Fields(html.UnescapeString(r[1])), " ")
		line := title(name) + "\t" + title(r[3]) + "\t" + r[4]
		if !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
		if s, ok := streetOf(r[2]); ok {
			hospitalStreets[s] = true
		}
	}
	sort.Strings(lines)
	g.write("hospitals.tsv", lines)
}

var hospitalStreets = map[string]bool{}

// streetOf takes "200 MED CENTER DRIVE" to "Med Center\tDrive": a house number,
// then name words, then a known suffix. Addresses of other shapes (PO boxes,
// highways, routes) are skipped: they do not make street surrogates.
func streetOf(addr string) (string, bool) {
	fs := strings.Fields(addr)
	if len(fs) < 3 || !isDigits(fs[0]) {
		return "", false
	}
	suffix := fs[len(fs)-1]
	full, ok := suffixAbbrev[strings.ToUpper(suffix)]
	if !ok {
		return "", false
	}
	name := fs[1 : len(fs)-1]
	for _, w := range name {
		for _, r := range w {
			if !(r >= 'A' && r <= 'Z') {
				return "", false
			}
		}
		switch w {
		case "HWY", "HIGHWAY", "ROUTE", "RT", "US", "PO", "BOX", "SUITE", "STE":
			return "", false
		}
	}
	return title(strings.Join(name, " ")) + "\t" + full, true
}

// suffixAbbrev maps the suffixes (and USPS abbreviations) that end hospital
// addresses to their full form.
var suffixAbbrev = map[string]string{
	"STREET": "Street", "ST": "Street", "AVENUE": "Avenue", "AVE": "Avenue", "ROAD": "Road", "RD": "Road",
	"DRIVE": "Drive", "DR": "Drive", "BOULEVARD": "Boulevard", "BLVD": "Boulevard", "LANE": "Lane", "LN": "Lane",
	"WAY": "Way", "COURT": "Court", "CT": "Court", "PLACE": "Place", "PL": "Place", "PARKWAY": "Parkway",
	"PKWY": "Parkway", "CIRCLE": "Circle", "CIR": "Circle", "TERRACE": "Terrace", "TRAIL": "Trail",
}

type fakerDefs struct {
	Location struct {
		State        []string `json:"state"`
		StateAbbr    []string `json:"state_abbr"`
		StreetSuffix []string `json:"street_suffix"`
		CityName     []string `json:"city_name"`
	} `json:"location"`
	Person struct {
		LastName struct {
			Generic []string `json:"generic"`
		} `json:"last_name"`
	} `json:"person"`
	PhoneNumber struct {
		AreaCode []string `json:"area_code"`
	} `json:"phone_number"`
}

// faker writes states, area codes, street suffixes and the street names: the
// hospital streets plus faker's "{{lastName}} {{suffix}}" pattern over its own
// last names with the commonest suffixes.
func (g *gen) faker() {
	if g.err != nil {
		return
	}
	f := g.open("faker-en/faker_en_us_names_locations.json")
	if g.err != nil {
		return
	}
	defer f.Close()
	var d fakerDefs
	if err := json.NewDecoder(f).Decode(&d); err != nil {
		g.err = err
		return
	}
	if len(d.Location.State) != len(d.Location.StateAbbr) {
		g.err = fmt.Errorf("faker: %d states but %d abbreviations", len(d.Location.State), len(d.Location.StateAbbr))
		return
	}
	var states []string
	for i, s := range d.Location.State {
		states = append(states, s+"\t"+d.Location.StateAbbr[i])
	}
	g.write("states.tsv", states)
	g.write("area_codes.txt", d.PhoneNumber.AreaCode)
	g.write("street_suffixes.txt", d.Location.StreetSuffix)
	common := []string{"Street", "Avenue", "Road", "Drive", "Lane", "Way", "Court", "Place", "Boulevard"}
	for i, ln := range d.Person.LastName.Generic {
		hospitalStreets[ln+"\t"+common[i%len(common)]] = true
	}
	g.write("streets.tsv", sortedKeys(hospitalStreets))
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// title turns "MARY" or "MED CENTER" into "Mary", "Med Center"; "MC" prefixes
// and an apostrophe after one letter keep the letter after them upper case
// ("McDonald", "O'Brien"), a possessive does not ("Children's").
func title(s string) string {
	b := []rune(strings.ToLower(s))
	up, word := true, 0 // word: letters of the current word so far
	for i, r := range b {
		if up && r >= 'a' && r <= 'z' {
			b[i] = r - 'a' + 'A'
		}
		up = r == ' ' || r == '-' || r == '/' || r == '\'' && word == 1
		if r == ' ' && i > 0 {
			if w := lastWord(b[:i]); smallWords[w] && strings.ContainsRune(string(b[:i-len(w)]), ' ') {
				copy(b[i-len(w):i], []rune(w))
			}
		}
		if r == ' ' || r == '-' || r == '/' {
			word = 0
		} else {
			word++
		}
	}
	return string(b)
}

// smallWords stay lower case inside a title ("University of Iowa").
var smallWords = map[string]bool{"of": true, "and": true, "the": true, "for": true, "at": true, "in": true, "on": true}

// lastWord returns the lower-cased letters of the word that ends b.
func lastWord(b []rune) string {
	i := len(b)
	for i > 0 && b[i-1] != ' ' {
		i--
	}
	return strings.ToLower(string(b[i:]))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
