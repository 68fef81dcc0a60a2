package surrogate

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
)

// TestExhaustedCodeSpace gives 600 of the 900 three-digit numbers as pagers,
// each of its own patient. A corpus-scope surrogate of the same shape must be
// no original and no other value's surrogate: 1,200 numbers are too many for
// the 900, as a million notes' 87,968 pagers "d-dddd" were for the 90,000.
// The numbers that no longer fit took the last candidate drawn, often an
// original of their own records (a leak); now they get a digit more.
func TestExhaustedCodeSpace(t *testing.T) {
	var docs []pipeline.Document
	origs := map[string]bool{}
	for p := 0; p < 300; p++ {
		n := &noteBuilder{}
		n.text("Seen with Dr. Bates, pager ")
		a, b := fmt.Sprint(100+2*p), fmt.Sprint(101+2*p)
		n.phi("CONTACT", "PHONE", a)
		n.text(", or the ward, pager ")
		n.phi("CONTACT", "PHONE", b)
		n.text(".\n")
		origs[a], origs[b] = true, true
		id := fmt.Sprint(1000 + p)
		docs = append(docs, pipeline.Document{ID: id + "-01", Patient: id, Text: n.b.String(), Spans: n.spans})
	}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 7).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, docs, res, pol)
	of := map[string]string{} // surrogate -> original
	for i, d := range res.Docs {
		for j, sp := range d.Spans {
			o := docs[i].Spans[j].Text
			if origs[sp.Text] {
				t.Errorf("%s: %q became %q, an original", d.ID, o, sp.Text)
			}
			if prev, ok := of[sp.Text]; ok && prev != o {
				t.Errorf("%q is the surrogate of %q and %q", sp.Text, prev, o)
			}
			of[sp.Text] = o
		}
	}
	for _, r := range res.Review {
		if strings.HasPrefix(r.Reason, "no surrogate met") {
			t.Errorf("review: %+v", r)
		}
	}
	again, err := New(pol, nil, 7).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Docs {
		if res.Docs[i].Text != again.Docs[i].Text {
			t.Fatalf("two runs with one seed differ: %q, %q", res.Docs[i].Text, again.Docs[i].Text)
		}
	}
}

// TestExhaustedHospitalShape shares a clinic "Saint Francis Medical
// Associates" among patients whose names hold the saint of every listed
// hospital that starts with "Saint", the hospitals a surrogate of its shape
// is drawn from: as among 300,000 patients, where the surrogate used was the
// last candidate, which held a name of the patient ("Thomas") or was their own
// hospital. A surrogate is now any listed hospital that fits.
func TestExhaustedHospitalShape(t *testing.T) {
	const clinic = "Saint Francis Medical Associates"
	var saints []string
	for _, h := range resources.Default().Hospitals() {
		if w := strings.Fields(h.Name); len(w) > 1 && w[0] == "Saint" {
			saints = append(saints, w[1])
		}
	}
	if len(saints) < minShapePool {
		t.Fatalf("%d hospitals start with Saint", len(saints))
	}
	var docs []pipeline.Document
	words := map[string]bool{}
	for p := 0; p < len(saints); p += 2 {
		name := saints[p] + " " + saints[min(p+1, len(saints)-1)]
		n := &noteBuilder{}
		n.phi("NAME", "PATIENT", name)
		n.text(" was seen at ")
		n.phi("LOCATION", "HOSPITAL", clinic)
		n.text(" today.\n")
		for _, w := range strings.Fields(name) {
			words[fold(w)] = true
		}
		id := fmt.Sprint(1000 + p)
		docs = append(docs, pipeline.Document{ID: id + "-01", Patient: id, Text: n.b.String(), Spans: n.spans})
	}
	pol := DefaultPolicy()
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		res, err := New(pol, nil, seed).Run(docs, Store{})
		if err != nil {
			t.Fatal(err)
		}
		assertClean(t, docs, res, pol)
		sur := res.Docs[0].Spans[1].Text
		for _, w := range tokens(sur) {
			if words[w] {
				t.Errorf("seed %d: the surrogate %q of %q holds %q, a name of the patients", seed, sur, clinic, w)
			}
		}
		for _, r := range res.Review {
			if strings.HasPrefix(r.Reason, "no surrogate met") {
				t.Errorf("seed %d: review: %+v", seed, r)
			}
		}
	}
}

// assertFitted fails on a surrogate that is an original of its type (of the
// patient's records when ownOnly, as closed lists allow, else of the corpus),
// on two originals of one scope that share a surrogate, and on a surrogate
// used unchecked. It looks at the spans of types, or of every type if none.
func assertFitted(t *testing.T, docs []pipeline.Document, res *Result, pol *Policy, ownOnly bool, types ...string) {
	t.Helper()
	origs := map[string]bool{} // patient if ownOnly, type and folded original
	owner := func(d pipeline.Document) string {
		if ownOnly {
			return d.Patient
		}
		return ""
	}
	for _, d := range docs {
		for _, s := range d.Spans {
			origs[owner(d)+"\x00"+s.Type+"\x00"+fold(s.Text)] = true
		}
	}
	of := map[string]string{} // scope, type and folded surrogate -> folded original
	for i, d := range res.Docs {
		for j, sp := range d.Spans {
			o := docs[i].Spans[j].Text
			if len(types) > 0 && !slices.Contains(types, sp.Type) {
				continue
			}
			if origs[owner(docs[i])+"\x00"+sp.Type+"\x00"+fold(sp.Text)] {
				t.Errorf("%s: %s %q became %q, an original", d.ID, sp.Type, o, sp.Text)
			}
			scope := ""
			if pol.Rule(sp.Category, sp.Type).Scope == ScopePatient {
				scope = docs[i].Patient
			}
			key := scope + "\x00" + sp.Type + "\x00" + fold(sp.Text)
			if prev, ok := of[key]; ok && prev != fold(o) {
				t.Errorf("%s: %q is the surrogate of %q and %q", d.ID, sp.Text, prev, o)
			}
			of[key] = fold(o)
		}
	}
	for _, r := range res.Review {
		if r.Reason == lastCandidate {
			t.Errorf("review: %+v", r)
		}
	}
}

// alone returns the entries of a list that no other entry holds as a run of
// its words ("Virginia" of "West Virginia" is not alone): a patient's own
// value excludes a surrogate that holds it, and only these leave every other
// entry free.
func alone(list []string) []string {
	var out []string
	for _, v := range list {
		in := false
		for _, w := range list {
			if w != v && strings.Contains(" "+strings.Join(tokens(w), " ")+" ", " "+strings.Join(tokens(v), " ")+" ") {
				in = true
				break
			}
		}
		if !in {
			out = append(out, v)
		}
	}
	return out
}

// TestExhaustedLists gives patients whose records name half of a closed list
// (states, countries, professions), as a travel or work history does: each
// value needs a surrogate none of the patient's values is and no other of
// them took, and the last values of a patient have one or two left, which
// sixty draws missed a third of the time and used the last candidate drawn,
// often one of the patient's own values. Every entry is now tried.
func TestExhaustedLists(t *testing.T) {
	res := resources.Default()
	var countries []string
	for _, c := range res.Countries() {
		countries = append(countries, c.EN)
	}
	var states []string
	for _, s := range res.States() {
		states = append(states, s.Name)
	}
	for _, c := range []struct {
		cat, typ string
		list     []string
	}{
		{"LOCATION", "STATE", states},
		{"LOCATION", "COUNTRY", countries},
		{"PROFESSION", "PROFESSION", res.Professions("en")},
	} {
		t.Run(c.typ, func(t *testing.T) {
			free := alone(c.list)
			rng := rand.New(rand.NewPCG(1, 2))
			var docs []pipeline.Document
			for p := 0; p < 20; p++ {
				n := &noteBuilder{}
				for _, i := range rng.Perm(len(free))[:len(c.list)/2] {
					n.text("Lived or worked as: ")
					n.phi(c.cat, c.typ, free[i])
					n.text(".\n")
				}
				id := fmt.Sprint(1000 + p)
				docs = append(docs, pipeline.Document{ID: id + "-01", Patient: id, Text: n.b.String(), Spans: n.spans})
			}
			pol := DefaultPolicy()
			pol.Types["COUNTRY"] = Rule{Strategy: CountryS, Scope: ScopePatient} // every country replaced, the home one too
			out, err := New(pol, nil, 3).Run(docs, Store{})
			if err != nil {
				t.Fatal(err)
			}
			assertClean(t, docs, out, pol)
			assertFitted(t, docs, out, pol, true)
		})
	}
}

// siteTowns are a site's towns: seven big ones, whose postal codes start with
// 021, and a small one whose code is the prefix, standing for 02100-02199.
const siteTowns = "Ashford\tMA\t02101\t900\nBrookfield\tMA\t02102\t800\nCarlisle\tMA\t02103\t700\n" +
	"Dunmore\tMA\t02104\t600\nEastbury\tMA\t02105\t500\nFairhaven\tMA\t02106\t400\nGlenwood\tMA\t02107\t300\n" +
	"Hollister\tMA\t021\t0.01\n"

// TestExhaustedPlaces names a site's big towns and their postal codes: cities
// and postal codes are drawn by population, so that a patient of the seven
// big towns left only the small one, which draws miss, and a corpus of the big
// towns' codes left only the small town's. The last candidate drawn was one of
// the patient's towns, or another patient's postal code. Every town and code
// of the site's list is now tried, then, for cities, the English lists.
func TestExhaustedPlaces(t *testing.T) {
	site := map[string]string{"zipcodes.tsv": siteTowns}
	big := []string{"Ashford", "Brookfield", "Carlisle", "Dunmore", "Eastbury", "Fairhaven", "Glenwood"}
	var docs []pipeline.Document
	for p, town := range big {
		n := &noteBuilder{}
		n.text("Moved here from ")
		for k := range big {
			n.phi("LOCATION", "CITY", big[(p+k)%len(big)])
			n.text(", ")
		}
		n.text("now lives at ")
		n.phi("LOCATION", "ZIP", fmt.Sprintf("0210%d", p+1))
		n.text(" in " + town + ".\n")
		id := fmt.Sprint(1000 + p)
		docs = append(docs, pipeline.Document{ID: id + "-01", Patient: id, Text: n.b.String(), Spans: n.spans})
	}
	pol := DefaultPolicy()
	pol.Language, pol.ResourceFiles = "en", site
	pack, err := resources.LoadText(site, "en")
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2, 3} {
		out, err := New(pol, nil, seed).Run(docs, Store{})
		if err != nil {
			t.Fatal(err)
		}
		assertFitted(t, docs, out, pol, true)
		zips := map[string]bool{}
		for _, d := range docs {
			zips[d.Spans[len(d.Spans)-1].Text] = true
		}
		for _, d := range out.Docs {
			for _, s := range d.Spans {
				switch {
				case s.Type == "CITY" && !pack.IsCity(s.Text) && !resources.Default().IsCity(s.Text):
					t.Errorf("seed %d: city %q is no listed city", seed, s.Text)
				case s.Type == "ZIP" && (zips[s.Text] || !strings.HasPrefix(s.Text, "021") || len(s.Text) != 5):
					t.Errorf("seed %d: postal code %q is another patient's or not the site's", seed, s.Text)
				}
			}
		}
	}
}

// TestExhaustedOrganizations shares a site's five organizations among
// patients whose names hold every surname of the site's list: the listed
// organizations are originals, and the companies made of surnames ("Ames
// Group") hold a name of the records they go to. The last candidate drawn,
// used, named a patient. A town of the site with a company's ending
// ("Ashford Group") now fits.
func TestExhaustedOrganizations(t *testing.T) {
	orgs := []string{"Acme Corporation", "Allied Logistics", "Apex Manufacturing", "Atlas Insurance Group", "Bayview Credit Union"}
	surnames := []string{"Ames", "Baird", "Clovis", "Dorsey", "Eaton", "Finch", "Garber", "Hale", "Irwin", "Judd"}
	var list strings.Builder
	for _, s := range surnames {
		fmt.Fprintf(&list, "%s\t0.5\n", s)
	}
	site := map[string]string{"zipcodes.tsv": siteTowns, "organizations.txt": strings.Join(orgs, "\n") + "\n",
		"surnames.tsv": list.String()}
	var docs []pipeline.Document
	for p := 0; p < len(surnames); p += 2 {
		n := &noteBuilder{}
		n.phi("NAME", "PATIENT", "John "+surnames[p]+" "+surnames[p+1])
		n.text(" works for ")
		for _, o := range orgs {
			n.phi("ORGANIZATION", "ORGANIZATION", o)
			n.text(" and ")
		}
		n.text("no other.\n")
		id := fmt.Sprint(1000 + p)
		docs = append(docs, pipeline.Document{ID: id + "-01", Patient: id, Text: n.b.String(), Spans: n.spans})
	}
	pol := DefaultPolicy()
	pol.Language, pol.ResourceFiles = "en", site
	for _, seed := range []uint64{1, 2} {
		out, err := New(pol, nil, seed).Run(docs, Store{})
		if err != nil {
			t.Fatal(err)
		}
		assertClean(t, docs, out, pol)
		assertFitted(t, docs, out, pol, false)
		for i, c := range tokenClashes(docs, out, pol) {
			if i < 10 {
				t.Errorf("seed %d: %s", seed, c)
			}
		}
	}
}

// TestExhaustedSSN gives every three-digit number an SSN could start with
// (100-899) as a patient's SSN "ddd": no number of that shape is free, and the
// last candidate, used, was another patient's. Now it gets a digit more.
func TestExhaustedSSN(t *testing.T) {
	var docs []pipeline.Document
	for p := 0; p < 400; p++ {
		n := &noteBuilder{}
		n.text("SSN ")
		n.phi("ID", "SSN", fmt.Sprint(100+2*p))
		n.text(", formerly ")
		n.phi("ID", "SSN", fmt.Sprint(101+2*p))
		n.text(".\n")
		id := fmt.Sprint(1000 + p)
		docs = append(docs, pipeline.Document{ID: id + "-01", Patient: id, Text: n.b.String(), Spans: n.spans})
	}
	pol := DefaultPolicy()
	out, err := New(pol, nil, 5).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, docs, out, pol)
	assertFitted(t, docs, out, pol, false)
}

// TestExhaustedStreet: an address keeps its street type, directions and
// function words, and a surrogate must hold no word of the patient: Mr. South
// of South Ponderosa Drive and a Fernandez De la Puebla of Camino de Heros
// (both met in the corpora the tests run) had every candidate rejected, and
// the last used. Where every short number is an original of the corpus (a
// bed, a room), so was a house number "3". The direction is now swapped, the
// function word dropped, and the number gets a digit more.
func TestExhaustedStreet(t *testing.T) {
	for _, c := range []struct {
		lang, name, street string
		rooms              bool
	}{
		{"en", "Roy South", "983 South Ponderosa Drive", false},
		{"es", "Tania Fernandez De la Puebla", "Camino de Heros, 4", false},
		{"es", "Tania Fernandez", "Calle Mayor, 3", true},
	} {
		t.Run(c.street, func(t *testing.T) {
			var docs []pipeline.Document
			for p := 0; p < 3; p++ {
				n := &noteBuilder{}
				n.phi("NAME", "PATIENT", c.name)
				n.text(", ")
				n.phi("LOCATION", "STREET", c.street)
				if c.rooms {
					for r := 1; r <= 9; r++ {
						n.text(", ")
						n.phi("LOCATION", "ROOM", fmt.Sprint(r))
					}
				}
				n.text(".\n")
				id := fmt.Sprint(1000 + p)
				docs = append(docs, pipeline.Document{ID: id + "-01", Patient: id, Text: n.b.String(), Spans: n.spans})
			}
			pol := DefaultPolicy()
			pol.Language = c.lang
			out, err := New(pol, nil, 1).Run(docs, Store{})
			if err != nil {
				t.Fatal(err)
			}
			assertClean(t, docs, out, pol)
			assertFitted(t, docs, out, pol, false, "STREET", "ROOM")
			for _, d := range out.Docs {
				for _, w := range tokens(d.Spans[1].Text) {
					if slices.Contains(tokens(c.name), w) && !particles[w] { // "de": a word of the name's "De la", not a name
						t.Errorf("%s: the address %q holds %q, a name of the patient", d.ID, d.Spans[1].Text, w)
					}
				}
			}
			t.Log(out.Docs[0].Text)
		})
	}
}

// TestExhaustedWordsOfAddresses gives, as a large corpus does, every first
// name, surname and city of the Spanish pack as a value of its own: an e-mail
// address or a link made of single listed words then always held an original,
// and the last candidate was used. Their words are now joined ("aacosta",
// "lugozamora.es").
func TestExhaustedWordsOfAddresses(t *testing.T) {
	res := resources.ForLanguage("es")
	first, last, places := res.FirstNames(resources.Either), res.SurrogateSurnames(), res.Places()
	addresses := []struct{ typ, text string }{
		{"EMAIL", "ana.lopez@gmail.com"}, {"EMAIL", "jgarcia@hospital.es"},
		{"URL", "https://www.clinica.es/citas"}, {"URL", "http://portal.sanidad.es/acceso"},
	}
	var docs []pipeline.Document
	for p := 0; p < max(len(first), len(last), len(places)); p++ {
		n := &noteBuilder{}
		n.text("Paciente ")
		n.phi("NAME", "PATIENT", first[p%len(first)].Text)
		n.text(" ")
		n.phi("NAME", "PATIENT", last[p%len(last)].Text)
		n.text(", de ")
		n.phi("LOCATION", "CITY", places[p%len(places)].City)
		if a := addresses[p%len(addresses)]; p < 4*len(addresses) {
			n.text(", contacto ")
			n.phi("CONTACT", a.typ, a.text)
		}
		n.text(".\n")
		id := fmt.Sprint(1000 + p)
		docs = append(docs, pipeline.Document{ID: id + "-01", Patient: id, Text: n.b.String(), Spans: n.spans})
	}
	pol := DefaultPolicy()
	pol.Language = "es"
	out, err := New(pol, nil, 4).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, docs, out, pol)
	assertFitted(t, docs, out, pol, false, "EMAIL", "URL")
	for _, d := range out.Docs[:len(addresses)] {
		t.Log(d.Text)
	}
}

// TestExhaustedUsernames gives every two-letter username "aa"-"zz": a
// username's letters go through the scope's letter map, so that each has one
// surrogate of its shape, always another's original, and the last candidate
// was used unchecked and unflagged (in englishCorpus(400) with seed 1, "tno1"
// and "tno7" both became "msp0", and "tno9" "msp5", an original). Now it gets
// digits.
func TestExhaustedUsernames(t *testing.T) {
	var docs []pipeline.Document
	for a := 'a'; a <= 'z'; a++ {
		n := &noteBuilder{}
		for b := 'a'; b <= 'z'; b++ {
			n.text("Signed ")
			n.phi("NAME", "USERNAME", string(a)+string(b))
			n.text(".\n")
		}
		id := fmt.Sprint(1000 + a)
		docs = append(docs, pipeline.Document{ID: id + "-01", Patient: id, Text: n.b.String(), Spans: n.spans})
	}
	pol := DefaultPolicy()
	out, err := New(pol, nil, 6).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, docs, out, pol)
	assertFitted(t, docs, out, pol, false)
}

// TestExhaustedNames gives every English first name given to both sexes as a
// patient's but the five rarest: apart, the surrogate of such a name is one
// of them that no record of the corpus holds as a value, which draws by frequency
// miss, and the last drawn, used unchecked and unflagged, was another
// patient's name. Every name of the pool is now tried.
func TestExhaustedNames(t *testing.T) {
	both := slices.Clone(newNamePool(resources.Default().FirstNames(resources.Either)).all)
	slices.SortStableFunc(both, func(a, b resources.Name) int { return cmp.Compare(b.Freq, a.Freq) })
	inPool := map[string]bool{}
	for _, n := range both {
		inPool[n.Text] = true
	}
	var docs []pipeline.Document
	origs := map[string]bool{}
	for p, name := range both[:len(both)-5] {
		n := &noteBuilder{}
		n.text("Seen: ")
		n.phi("NAME", "PATIENT", name.Text)
		n.text(" today.\n")
		origs[fold(name.Text)] = true
		id := fmt.Sprint(1000 + p)
		docs = append(docs, pipeline.Document{ID: id + "-01", Patient: id, Text: n.b.String(), Spans: n.spans})
	}
	pol := DefaultPolicy()
	pol.Language = "en"
	pol.Surnames = SurnamesApart // no surrogate is another patient's name
	out, err := New(pol, nil, 8).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, docs, out, pol)
	for i, d := range out.Docs {
		if sur := d.Spans[0].Text; origs[fold(sur)] || !inPool[sur] {
			t.Errorf("%s: %q became %q: an original, or a name not given to both sexes", d.ID, docs[i].Spans[0].Text, sur)
		}
	}
	for _, r := range out.Review {
		if r.Reason == lastCandidate {
			t.Errorf("review: %+v", r)
		}
	}
}
