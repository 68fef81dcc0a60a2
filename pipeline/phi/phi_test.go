package phi

import "testing"

func TestNormalize(t *testing.T) {
	ts := I2B2()
	cases := []struct {
		cat, typ, wantCat string
		ok                bool
	}{
		{"NAME", "DOCTOR", "NAME", true},
		{"", "CITY", "LOCATION", true},
		{"LOCATION", "DOCTOR", "", false},
		{"", "NOMBRE", "", false},
		{"NAME", "", "", false},
	}
	for _, c := range cases {
		cat, _, err := Normalize(ts, c.cat, c.typ)
		if (err == nil) != c.ok || cat != c.wantCat {
			t.Errorf("Normalize(%q,%q) = %q, %v", c.cat, c.typ, cat, err)
		}
	}
	if cat, typ, err := Normalize(nil, "", "FECHAS"); err != nil || cat != "FECHAS" || typ != "FECHAS" {
		t.Errorf("open tag set: %q %q %v", cat, typ, err)
	}
}

func TestHIPAA(t *testing.T) {
	script, paper := HIPAATypes(false), HIPAATypes(true)
	if script["IDNUM"] || !paper["IDNUM"] || len(paper) != len(script)+1 {
		t.Fatalf("IDNUM handling wrong: script %v paper %v", script["IDNUM"], paper["IDNUM"])
	}
	for typ := range paper {
		if _, ok := I2B2().CategoryOf(typ); !ok {
			t.Errorf("HIPAA type %s is not an i2b2 type", typ)
		}
	}
	if script["DOCTOR"] || script["HOSPITAL"] {
		t.Error("DOCTOR and HOSPITAL are not HIPAA types")
	}
}
