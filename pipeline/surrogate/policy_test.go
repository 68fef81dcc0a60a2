package surrogate

import (
	"strings"
	"testing"
)

// A policy may name i2b2 2014 types and categories, "*", and the corpus's
// own labels; anything else is refused, with the name it was likely meant to
// be.
func TestPolicyCheckNames(t *testing.T) {
	labels := [][2]string{{"PERSON", "PERSON"}, {"LOCATION", "CALLE"}}
	for _, c := range []struct {
		types string
		want  string // "" for accepted
	}{
		{`"PATIENT": {"strategy": "name", "scope": "patient"}, "NAME": {"strategy": "name", "scope": "patient"}`, ""},
		{`"PERSON": {"strategy": "name", "scope": "patient"}, "CALLE": {"strategy": "street", "scope": "patient"}, "*": {"strategy": "shape", "scope": "patient"}`, ""},
		{`"PERSN": {"strategy": "name", "scope": "patient"}`, `"PERSN" is no label of the corpus nor an i2b2 2014 type; did you mean PERSON?`},
		{`"XYZZY": {"strategy": "keep", "scope": "patient"}`, `"XYZZY" is no label`},
	} {
		p, err := ParsePolicy([]byte(`{"types": {` + c.types + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		err = p.CheckNames(labels)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.types, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.types, err, c.want)
		}
	}
}
