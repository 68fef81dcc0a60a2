package surrogate

import (
	"strings"
	"testing"

	"deidcorpus/pipeline/phi"
)

// A policy may name i2b2 2014 types and categories, "*", and the corpus's
// own labels; anything else is refused, with the name it was likely meant to
// be.
func TestPolicyCheckNames(t *testing.T) {
	labels := [][2]string{{"PERSON", "PERSON"}, {"LOCATION", "CALLE"}}
	for _, c := range []struct {
		declared *phi.TagSet
		types    string
		want     string // "" for accepted
	}{
		{nil, `"PATIENT": {"strategy": "name", "scope": "patient"}, "NAME": {"strategy": "name", "scope": "patient"}`, ""},
		{nil, `"PERSON": {"strategy": "name", "scope": "patient"}, "CALLE": {"strategy": "street", "scope": "patient"}, "*": {"strategy": "shape", "scope": "patient"}`, ""},
		{nil, `"PERSN": {"strategy": "name", "scope": "patient"}`, `"PERSN" is no label of the corpus, no type of its tag set and no i2b2 2014 type; did you mean PERSON?`},
		{nil, `"XYZZY": {"strategy": "keep", "scope": "patient"}`, `"XYZZY" is no label`},
		{nil, `"X": {"strategy": "keep", "scope": "patient"}`, `"X" is no label`}, // and not "did you mean *?"
		// A type of the corpus's tag set that its spans do not hold.
		{phi.MEDDOCAN(), `"NUMERO_FAX": {"strategy": "phone", "scope": "corpus"}`, ""},
		{nil, `"NUMERO_FAX": {"strategy": "phone", "scope": "corpus"}`, `"NUMERO_FAX" is no label`},
	} {
		p, err := ParsePolicy([]byte(`{"types": {` + c.types + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		err = p.CheckNames(labels, c.declared)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.types, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "*")):
			t.Errorf("%s: error %v, want %q", c.types, err, c.want)
		}
	}
}
