package phi

import "testing"

func TestToI2B2(t *testing.T) {
	for _, c := range []struct {
		category, typ string
		want          [2]string // "" if not ok
	}{
		{"NAME", "PATIENT", [2]string{"NAME", "PATIENT"}},
		{"", "DOCTOR", [2]string{"NAME", "DOCTOR"}},
		{"LOCATION", "HOSPITAL", [2]string{"LOCATION", "HOSPITAL"}},
		// MEDDOCAN's XML files (category and type) and BRAT files read into
		// an open corpus (the category is the type).
		{"NAME", "NOMBRE_SUJETO_ASISTENCIA", [2]string{"NAME", "PATIENT"}},
		{"NOMBRE_PERSONAL_SANITARIO", "NOMBRE_PERSONAL_SANITARIO", [2]string{"NAME", "DOCTOR"}},
		{"CENTRO_SALUD", "CENTRO_SALUD", [2]string{"LOCATION", "HOSPITAL"}},
		{"", "FAMILIARES_SUJETO_ASISTENCIA", [2]string{"OTHER", "OTHER"}},
		{"PTName", "PTName", [2]string{"NAME", "PATIENT"}},
		{"HCPName", "HCPName", [2]string{"NAME", "DOCTOR"}},
		{"INITIALS", "INITIALS", [2]string{"NAME", "PATIENT"}},
		// MIMIC placeholders: a ward's name is a place, a dictator a doctor.
		{"HOSPITAL_WARD_NAME", "HOSPITAL_WARD_NAME", [2]string{"LOCATION", "DEPARTMENT"}},
		{"DICTATOR_INFO", "DICTATOR_INFO", [2]string{"NAME", "DOCTOR"}},
		{"NAME", "RELATIVE", [2]string{}},
		{"SURNAME", "SURNAME", [2]string{}},
	} {
		cat, typ, ok := ToI2B2(c.category, c.typ)
		if got := [2]string{cat, typ}; got != c.want || ok != (c.want[0] != "") {
			t.Errorf("ToI2B2(%q, %q) = %q, %v; want %q", c.category, c.typ, got, ok, c.want)
		}
	}
}

// The built-in mappings to i2b2 that ToI2B2 tries in turn never disagree on
// a label two of them name, so their order decides nothing.
func TestMappingsToI2B2Agree(t *testing.T) {
	maps := toI2B2Mappings()
	if len(maps) != 4 {
		t.Fatalf("%d mappings to i2b2, want cchmc, meddocan, mimic and physionet", len(maps))
	}
	seen := map[string][2]string{} // source type -> the i2b2 label it maps to, and the mapping
	for _, m := range maps {
		if len(m.exact) > 0 || len(m.cats) > 0 {
			t.Errorf("%s has CATEGORY/TYPE or CATEGORY/* rules: check them here too", m.Name)
		}
		for typ := range m.types {
			cat, newType, _, err := m.Map("", typ)
			if err != nil {
				t.Fatal(err)
			}
			got := cat + "/" + newType
			if prev, ok := seen[typ]; ok && prev[0] != got {
				t.Errorf("%s maps %s to %s, %s to %s", m.Name, typ, got, prev[1], prev[0])
			}
			seen[typ] = [2]string{got, m.Name}
		}
	}
}
