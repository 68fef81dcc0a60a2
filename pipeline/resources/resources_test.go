package resources

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDefault(t *testing.T) {
	s := Default()
	for _, c := range []struct {
		name string
		want Sex
	}{{"Mary", Female}, {"JOHN", Male}, {"jordan", Either}} {
		if got, ok := s.SexOf(c.name); !ok || got != c.want {
			t.Errorf("SexOf(%q) = %v, %v; want %v", c.name, got, ok, c.want)
		}
	}
	for sex := Either; sex <= Male; sex++ {
		if n := len(s.FirstNames(sex)); n < 100 {
			t.Errorf("%v first names: %d, want at least 100", sex, n)
		}
	}
	if !s.IsSurname("Gómez") || !s.IsSurname("SMITH") || s.IsSurname("Xqzv") {
		t.Error("IsSurname: Gómez and SMITH are surnames, Xqzv is not")
	}
	// Deleger et al. drew from the 7,500 surnames of frequency >= 0.002%.
	if n := len(s.SurrogateSurnames()); n != 7500 {
		t.Errorf("surrogate surnames: %d, want 7500", n)
	}
	if p, ok := s.PlaceOfZIP("02142"); !ok || p.City != "Cambridge" || p.State != "MA" {
		t.Errorf("PlaceOfZIP(02142) = %+v, %v", p, ok)
	}
	if st, ok := s.StateOf("massachusetts"); !ok || st.Abbr != "MA" {
		t.Errorf("StateOf(massachusetts) = %+v, %v", st, ok)
	}
	if c, ok := s.CountryOf("ESPAÑA"); !ok || c.EN != "Spain" || c.NationalityES != "español" {
		t.Errorf("CountryOf(ESPAÑA) = %+v, %v", c, ok)
	}
	if c, ok := s.CountryOf("cambodian"); !ok || c.EN != "Cambodia" {
		t.Errorf("CountryOf(cambodian) = %+v, %v", c, ok)
	}
	if !s.IsAreaCode("617") || s.IsAreaCode("000") {
		t.Error("617 is a US area code, 000 is not")
	}
	if !s.IsCity("boston") || !s.IsStreetSuffix("avenue") {
		t.Error("boston is a city and avenue a street suffix")
	}
	if len(s.Hospitals()) < 4000 || len(s.Streets()) < 1000 || len(s.Organizations()) < 20 {
		t.Errorf("hospitals %d, streets %d, organizations %d", len(s.Hospitals()), len(s.Streets()), len(s.Organizations()))
	}
}

func TestGenericDepartment(t *testing.T) {
	s := Default()
	for _, c := range []struct{ name, lang, want string }{
		{"Department for radiology, imaging, and oncology", "en", "Radiology"}, // Stubbs & Uzuner's example
		{"Smith Cardiac Center", "en", "Cardiology"},
		{"Bigelow Wing", "en", "Internal medicine"},
		{"Servicio de Cirugía Maxilofacial", "es", "Cirugía"},
		{"Unidad del Dolor", "es", "Medicina interna"},
	} {
		if got := s.GenericDepartment(c.name, c.lang); got != c.want {
			t.Errorf("GenericDepartment(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestLoadOverrides(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "organizations.txt"), []byte("# ours\nHospital Foundation of Navarre\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Organizations(); len(got) != 1 || got[0] != "Hospital Foundation of Navarre" {
		t.Errorf("overridden organizations = %q", got)
	}
	if len(s.Surnames()) != len(Default().Surnames()) {
		t.Error("lists the site does not override must stay the embedded ones")
	}
	if err := os.WriteFile(filepath.Join(dir, "states.tsv"), []byte("Navarra\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Error("a state line without its abbreviation must be rejected")
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{"Gómez": "gomez", "NÚÑEZ": "nunez", "smith": "smith", "Ibañez-Çelik": "ibanez-celik"} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkIsSurname(b *testing.B) {
	s := Default()
	for b.Loop() {
		s.IsSurname("Ferrerro")
	}
}
