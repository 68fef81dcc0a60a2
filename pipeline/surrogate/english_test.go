package surrogate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
)

// englishCorpus builds a longitudinal English corpus: nPatients patients with
// three notes each, written from templates over the embedded lists, with the
// name shapes, date formats, ages, addresses and contacts of US notes. It
// stands in for pipeline/synth, which had not landed when this was written.
type noteBuilder struct {
	b     strings.Builder
	spans []pipeline.Span
}

func (n *noteBuilder) text(s string) { n.b.WriteString(s) }

func (n *noteBuilder) phi(cat, typ, s string) {
	start := len([]rune(n.b.String()))
	n.b.WriteString(s)
	n.spans = append(n.spans, pipeline.Span{Start: start, End: start + len([]rune(s)), Text: s, Category: cat, Type: typ})
}

func englishCorpus(nPatients int) []pipeline.Document {
	res := resources.Default()
	rng := rand.New(rand.NewPCG(7, 7))
	pick := func(ns []resources.Name) string { return ns[rng.IntN(len(ns))].Text }
	doctors := make([][2]string, 40)
	for i := range doctors {
		doctors[i] = [2]string{pick(res.FirstNames(resources.Male)), pick(res.SurrogateSurnames())}
	}
	var docs []pipeline.Document
	for p := 0; p < nPatients; p++ {
		sex := resources.Female
		if p%2 == 1 {
			sex = resources.Male
		}
		first, last := pick(res.FirstNames(sex)), pick(res.SurrogateSurnames())
		if p%7 == 0 {
			last += "-" + pick(res.SurrogateSurnames())
		}
		mi := string(rune('A' + rng.IntN(26)))
		doc := doctors[rng.IntN(len(doctors))]
		age := 30 + rng.IntN(70)
		admit := time.Date(2060+rng.IntN(10), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
		place := res.Places()[rng.IntN(len(res.Places()))]
		hosp := res.Hospitals()[rng.IntN(len(res.Hospitals()))].Name
		street := res.Streets()[rng.IntN(len(res.Streets()))]
		mrn := fmt.Sprintf("%07d", 1000000+rng.IntN(8999999))
		phone := fmt.Sprintf("(%s) %03d-%04d", res.AreaCodes()[rng.IntN(len(res.AreaCodes()))], 200+rng.IntN(799), rng.IntN(10000))
		for note := 1; note <= 3; note++ {
			d := admit.AddDate(0, 0, 30*(note-1)+rng.IntN(20))
			n := &noteBuilder{}
			n.text("Record date: ")
			n.phi("DATE", "DATE", d.Format("2006-01-02"))
			n.text("\nPatient: ")
			n.phi("NAME", "PATIENT", strings.ToUpper(last)+", "+strings.ToUpper(first)+" "+mi+".")
			n.text("   MRN: ")
			n.phi("ID", "MEDICALRECORD", mrn)
			n.text("\n")
			n.phi("LOCATION", "HOSPITAL", hosp)
			n.text("\n\n")
			n.phi("NAME", "PATIENT", first+" "+last)
			n.text(" is a ")
			n.phi("AGE", "AGE", fmt.Sprint(age+note/3))
			n.text(" year old ")
			n.phi("PROFESSION", "PROFESSION", res.Professions("en")[p%len(res.Professions("en"))])
			n.text(" seen on ")
			n.phi("DATE", "DATE", d.Format("Monday, January 2"))
			n.text(" for follow up. Last visit ")
			n.phi("DATE", "DATE", d.AddDate(0, 0, -14).Format("1/2/06"))
			n.text(", symptoms since ")
			n.phi("DATE", "DATE", []string{"the 90's", "Fall '02", "2051", "November 5th"}[p%4])
			n.text(". ")
			n.phi("NAME", "PATIENT", "Mr"[:2]+"s "+last)
			n.text(" lives at ")
			n.phi("LOCATION", "STREET", fmt.Sprintf("%d %s %s", 10+rng.IntN(990), street.Name, street.Suffix))
			n.text(", ")
			n.phi("LOCATION", "CITY", place.City)
			n.text(", ")
			n.phi("LOCATION", "STATE", place.State)
			n.text(" ")
			n.phi("LOCATION", "ZIP", place.ZIPs[0])
			n.text(". Phone ")
			n.phi("CONTACT", "PHONE", phone)
			n.text(", e-mail ")
			n.phi("CONTACT", "EMAIL", strings.ToLower(first)+"."+strings.ToLower(strings.ReplaceAll(last, "-", ""))+"@example.org")
			n.text(". Born in ")
			n.phi("LOCATION", "COUNTRY", res.Countries()[p%len(res.Countries())].EN)
			n.text(". Seen in the ")
			n.phi("LOCATION", "DEPARTMENT", "Bigelow Cardiac Unit")
			n.text(" by Dr. ")
			n.phi("NAME", "DOCTOR", doc[1])
			n.text(". ")
			n.phi("NAME", "PATIENT", first)
			n.text("'s SSN ")
			n.phi("ID", "SSN", fmt.Sprintf("%03d-%02d-%04d", 100+rng.IntN(500), 10+rng.IntN(89), 1000+rng.IntN(8999)))
			n.text(", portal ")
			n.phi("CONTACT", "URL", "https://www.portal"+mrn+".com/login")
			n.text(" from ")
			n.phi("CONTACT", "IPADDR", fmt.Sprintf("10.%d.%d.%d", rng.IntN(255), rng.IntN(255), 1+rng.IntN(254)))
			n.text(".\n\n")
			n.phi("NAME", "DOCTOR", doc[0]+" "+string(doc[1][0])+". "+doc[1]+", M.D.")
			n.text(" / ")
			n.phi("NAME", "USERNAME", strings.ToLower(doc[0][:1]+doc[1][:2])+fmt.Sprint(rng.IntN(9)+1))
			n.text("\n")
			id := fmt.Sprintf("%d-%02d", 100+p, note)
			docs = append(docs, pipeline.Document{ID: id, Patient: fmt.Sprint(100 + p), RecordOrder: note, Text: n.b.String(), Spans: n.spans})
		}
	}
	return docs
}

func TestEnglishLongitudinal(t *testing.T) {
	shared.NotUnderRace(t, "single-threaded tests")
	docs := englishCorpus(500)
	pol := DefaultPolicy()
	res, err := New(pol, nil, 11).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Language != "en" {
		t.Errorf("language %q, want en", res.Language)
	}
	rep := assertClean(t, docs, res, pol)
	if len(rep.Unannotated) > 0 {
		t.Errorf("%d unannotated finds in a corpus whose every PHI is annotated, e.g. %+v", len(rep.Unannotated), rep.Unannotated[0])
	}
	t.Logf("%s\n%s", docs[0].Text, res.Docs[0].Text)
	for i, it := range res.Review {
		if i < 5 {
			t.Logf("review: %+v", it)
		}
	}
	again, _ := New(pol, nil, 11).Run(docs, Store{})
	other, _ := New(pol, nil, 12).Run(docs, Store{})
	for i := range docs {
		if res.Docs[i].Text != again.Docs[i].Text {
			t.Fatalf("%s differs between two runs with one seed", docs[i].ID)
		}
		if res.Docs[i].Text == other.Docs[i].Text {
			t.Fatalf("%s is the same under another seed", docs[i].ID)
		}
	}
}

// TestNewNotesReuseMappings resynthesizes the first two notes of every
// patient, then the third with the first run's mappings: the third note must
// get the same names and date shift as if all three had been run together.
func TestNewNotesReuseMappings(t *testing.T) {
	docs := englishCorpus(60)
	var early, late []pipeline.Document
	for _, d := range docs {
		if d.RecordOrder < 3 {
			early = append(early, d)
		} else {
			late = append(late, d)
		}
	}
	pol := DefaultPolicy()
	first, err := New(pol, nil, 5).Run(early, Store{})
	if err != nil {
		t.Fatal(err)
	}
	r := New(pol, nil, 99) // another seed: reuse must not depend on it
	r.Context = early
	second, err := r.Run(late, Store{Mappings: first.Mappings, Shifts: first.Shifts})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range second.Shifts {
		if s.New {
			t.Errorf("patient %s got a new date shift", s.Patient)
		}
	}
	shift := map[string]int{}
	for _, s := range first.Shifts {
		shift[s.Patient] = s.Days
	}
	// The full patient name of note 3 must equal the surrogate of note 1.
	sur := map[string]string{}
	for _, d := range first.Docs {
		sur[d.Patient+d.Spans[1].Text] = d.Spans[4].Text // "First Last"
	}
	for i, d := range second.Docs {
		if want := sur[d.Patient+d.Spans[1].Text]; want == "" {
			// note 1's "LAST, FIRST M." surrogate is keyed by its own text
			continue
		} else if d.Spans[4].Text != want {
			t.Errorf("%s: patient named %q, earlier notes %q", d.ID, d.Spans[4].Text, want)
		}
		od, _ := parseDate(late[i].Spans[0].Text, dateReading{lang: "en"})
		if got := od.shifted(shift[d.Patient]); got != d.Spans[0].Text {
			t.Errorf("%s: date %q, want %q with the stored shift", d.ID, d.Spans[0].Text, got)
		}
	}
	all := append(append([]pipeline.Document(nil), first.Docs...), second.Docs...)
	combined := &Result{Docs: all, Mappings: append(append([]Mapping(nil), first.Mappings...), second.Mappings...), Shifts: first.Shifts, Language: "en"}
	assertClean(t, docs, combined, pol)
}

// TestDrawLikeKeepsKindsNotNames: a hospital's surrogate starts as the
// original when its first words name a kind ("Hospital Universitario"),
// and no more often than any name does when they are a name ("West ...").
func TestDrawLikeKeepsKindsNotNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for _, c := range []struct {
		lang, orig, prefix string
		kind               bool
	}{
		{"en", "West Suburban Medical Center", "West ", false},
		{"en", "St Luke's Hospital", "St ", true},
		{"es", "Hospital Universitario La Paz", "Hospital Universitario ", true},
	} {
		res := resources.ForLanguage(c.lang)
		p := poolsFor(res)
		same := 0
		for range 200 {
			if h := res.Hospitals()[drawLike(rng, p.hospitals, len(res.Hospitals()), c.orig)].Name; strings.HasPrefix(h, c.prefix) {
				same++
			}
		}
		if c.kind && same != 200 || !c.kind && same > 10 {
			t.Errorf("%q: %d of 200 surrogates start with %q", c.orig, same, c.prefix)
		}
	}
}
