package surrogate

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"deidcorpus/pipeline"
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

// A policy carries its mapping as text or names a built-in one. A path is
// refused without being read: a file whose first line is a secret and that
// nobody may read stays unread and unquoted. Errors in a mapping's text name
// the field and line, never the line's content.
func TestPolicyMappingIsData(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(secret, []byte("s3cr3t-admin-token extra fields\n"), 0o000); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		policy, want string
	}{
		{`{"mapping": "` + secret + `"}`, "mapping is a server path"},
		{`{"mapping": "../tokens"}`, "mapping is a server path"},
		{`{"resources": "` + filepath.Dir(secret) + `"}`, "resources is a server path"},
		{`{"mapping": "meddocan-i2b3"}`, `no built-in mapping "meddocan-i2b3" (known: cchmc-i2b2,`},
		{`{"mapping": "none", "mappingText": "@default keep\n"}`, "or mappingText, not both"},
		{`{"mappingText": "@to i2b2-2014\n\nNOMBRE NAME/PATIENT\ns3cr3t-line extra fields\n"}`, "policy: mappingText line 4: want 2 fields"},
		{`{"mappingText": "@to i2b2-2014\n"}`, "policy: mappingText: no rules and no @default"},
	} {
		_, err := ParsePolicy([]byte(c.policy))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.policy, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error quotes the content or the path: %v", c.policy, err)
		}
	}
	p, err := ParsePolicy([]byte(`{"mappingText": "@to i2b2-2014\nNOMBRE_SUJETO_ASISTENCIA NAME/PATIENT\n@default drop\n"}`))
	if err == nil {
		t.Fatal("a directive after the first rule was accepted")
	}
	p, err = ParsePolicy([]byte(`{"mappingText": "@to i2b2-2014\n@default drop\nNOMBRE_SUJETO_ASISTENCIA NAME/PATIENT\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Rule("", "NOMBRE_SUJETO_ASISTENCIA"); r.Strategy != Name || r.Scope != ScopePatient {
		t.Errorf("a label the mapping's text maps to NAME/PATIENT: %+v", r)
	}
	if r := p.Rule("", "EDAD_SUJETO_ASISTENCIA"); !reflect.DeepEqual(r, p.Types["*"]) {
		t.Errorf("only the text's mapping applies, not the built-in ones: %+v", r)
	}
	p, err = ParsePolicy([]byte(`{"mapping": "meddocan-i2b2", "resources": "es"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Rule("", "EDAD_SUJETO_ASISTENCIA"); r.Strategy != Age {
		t.Errorf("a built-in mapping by name: %+v", r)
	}
}

// With dateShift.either the shifts go back as often as forward, each by as
// many days as the bounds allow, and the check still passes; bounds that
// are not positive are refused.
func TestDateShiftEitherWay(t *testing.T) {
	var docs []pipeline.Document
	for p := range 60 {
		text := "Ingreso el 12/03/2015, alta el 20/03/2015."
		docs = append(docs, pipeline.Document{ID: fmt.Sprint(p), Patient: fmt.Sprint(p), Text: text, Spans: []pipeline.Span{
			{Start: 11, End: 21, Text: "12/03/2015", Category: "DATE", Type: "DATE"},
			{Start: 31, End: 41, Text: "20/03/2015", Category: "DATE", Type: "DATE"}}})
	}
	pol := DefaultPolicy()
	pol.Language = "es"
	pol.DateShift.Either = true
	res, err := New(pol, nil, 4).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	var back, forward int
	for _, s := range res.Shifts {
		d := s.Days
		if d < 0 {
			back++
			d = -d
		} else {
			forward++
		}
		if d < pol.DateShift.MinDays || d > pol.DateShift.MaxDays {
			t.Errorf("patient %s shifted by %d days, outside [%d, %d] either way", s.Patient, s.Days, pol.DateShift.MinDays, pol.DateShift.MaxDays)
		}
	}
	if back < 10 || forward < 10 {
		t.Errorf("%d shifts back, %d forward", back, forward)
	}
	if rep := Check(docs, res, pol); !rep.OK() {
		t.Error("the check fails")
	}
	bad := DefaultPolicy()
	bad.DateShift.MinDays, bad.DateShift.MaxDays, bad.DateShift.Either = -30, 30, true
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "either") {
		t.Errorf("either with bounds around 0: %v", err)
	}
}

// A rule may leave its scope out, as a newcomer writes one: it takes the
// default policy's scope for its type, else one per patient.
func TestPolicyRuleWithoutScope(t *testing.T) {
	p, err := ParsePolicy([]byte(`{"types": {"AGE": {"strategy": "placeholder"}, "DOCTOR": {"strategy": "hash"}, "MY_OWN_TYPE": {"strategy": "redact"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	def := DefaultPolicy()
	for typ, want := range map[string]string{"AGE": def.Types["AGE"].Scope, "DOCTOR": def.Types["DOCTOR"].Scope, "MY_OWN_TYPE": ScopePatient} {
		if got := p.Types[typ].Scope; got != want || got == "" {
			t.Errorf("%s: scope %q, want %q", typ, got, want)
		}
	}
	if def.Types["DOCTOR"].Scope != ScopeCorpus {
		t.Errorf("the default policy's DOCTOR scope is %q: this test meant one that is not the patient's", def.Types["DOCTOR"].Scope)
	}
}
