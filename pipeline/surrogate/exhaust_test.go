package surrogate

import (
	"fmt"
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
