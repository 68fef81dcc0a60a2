package surrogate

import (
	"strings"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/resources"
)

// The examples of issue 62, each built from its MEDDOCAN dev note: the
// surrogates of a note agree with each other.

// noteDoc builds a document of text whose spans are the given values (each
// at its first occurrence from the previous span on) with their types.
func noteDoc(t *testing.T, id, text string, spans ...[2]string) pipeline.Document {
	t.Helper()
	d := pipeline.Document{ID: id, Patient: id, Text: text}
	from := 0
	for _, sp := range spans {
		i := strings.Index(text[from:], sp[1])
		if i < 0 {
			t.Fatalf("%q not in the note after byte %d", sp[1], from)
		}
		i += from
		start := len([]rune(text[:i]))
		d.Spans = append(d.Spans, pipeline.Span{Start: start, End: start + len([]rune(sp[1])), Text: sp[1], Category: sp[0], Type: sp[0]})
		from = i + len(sp[1])
	}
	return d
}

func runNote(t *testing.T, seed uint64, docs ...pipeline.Document) *Result {
	t.Helper()
	pol := DefaultPolicy()
	pol.Language = "es"
	res, err := New(pol, nil, seed).Run(docs, Store{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// "Dra. M.a José Tapia Guerrero" (S0210-48062005000700013-1, with the title
// the dashboard showed) became "Dra. S.j Enrique Dueñas Araujo": the
// abbreviation of María became letters and a woman's title a man's name.
func TestAbbreviatedWomansNameUnderAWomansTitle(t *testing.T) {
	text := "Médico: Dra. M.a José Tapia Guerrero NºCol: 29 29 70367.\nCorrespondencia: Dra. M.a José Tapia Guerrero. mjtapiague@hotmail.com"
	doc := noteDoc(t, "S0210-48062005000700013-1", text,
		[2]string{"NOMBRE_PERSONAL_SANITARIO", "M.a José Tapia Guerrero"},
		[2]string{"NOMBRE_PERSONAL_SANITARIO", "M.a José Tapia Guerrero"},
		[2]string{"CORREO_ELECTRONICO", "mjtapiague@hotmail.com"})
	es := resources.ForLanguage("es")
	for seed := uint64(1); seed <= 20; seed++ {
		out := runNote(t, seed, doc).Docs[0]
		name := out.Spans[0].Text
		words := strings.Fields(name)
		if len(words) != 4 || words[0] != "M.a" {
			t.Fatalf("seed %d: %q: want the abbreviation as written and three words", seed, name)
		}
		if sex, ok := es.SexOf(words[1]); !ok || sex != resources.Female {
			t.Errorf("seed %d: %q under Dra.: %q is no woman's name", seed, name, words[1])
		}
		// The initials go through the letter map.
		mail := out.Spans[2].Text
		if len(mail) < 2 || !isASCIILetters(mail[:2]) || !strings.HasPrefix(mail[2:], asciiWord(words[2])) {
			t.Errorf("seed %d: %q beside %q, want two initials and %s...", seed, mail, name, asciiWord(words[2]))
		}
	}
}

// A title, or the agreement around a patient's name, decides the sex of a
// first name that does not tell its own.
func TestContextSexOfNames(t *testing.T) {
	for _, c := range []struct {
		text string
		sex  resources.Sex
	}{
		{"La paciente, nacida en 1950, vive sola.", resources.Female},
		{"Varón de 35 años. Sexo: H.", resources.Male},
		{"Paciente de 35 años.", resources.Either},
		{"Mujer de 40 años; su hijo, varón de 12.", resources.Either},
	} {
		if sex, _ := noteSex(c.text); sex != c.sex {
			t.Errorf("%q: sex %d, want %d", c.text, sex, c.sex)
		}
	}
	for _, c := range []struct {
		name string
		n    int
		full string
	}{{"M.a José", 3, "María"}, {"M.ª José", 4, "María"}, {"Mª José", 3, "María"}, {"Fco. Javier", 3, "Francisco"},
		{"Ma José", 0, ""}, {"M. José", 0, ""}, {"Marta", 0, ""}, {"Fcos", 0, ""}} {
		if n, full := abbrevAt(c.name); n != c.n || full != c.full {
			t.Errorf("abbrevAt(%q) = %d %q, want %d %q", c.name, n, full, c.n, c.full)
		}
	}
}

// "C/ Alfredo Navarro 3102, Apto. 116" (S1130-05582003000600004-3) became
// "C/ Morales Lazaro 6440, Fuster. 942": unit words stay words.
func TestUnitWordsStayWords(t *testing.T) {
	for _, street := range []string{"C/ Alfredo Navarro 3102, Apto. 116", "Calle Mayor 3, Esc. B, Piso 2, Pta. 4", "Avda. Sol 12, Bloque 3, Portal 2, Bajo Izq.",
		"Calle Luna 7, 3º Dcha.", "Plaza Real 1, Bajo Dpto. 3"} {
		doc := noteDoc(t, "S1130-05582003000600004-3", "Domicilio: "+street+".", [2]string{"CALLE", street})
		for seed := uint64(1); seed <= 5; seed++ {
			got := runNote(t, seed, doc).Docs[0].Spans[0].Text
			for _, w := range []string{"Apto.", "Esc.", "Piso", "Pta.", "Bloque", "Portal", "Bajo", "Izq.", "Dcha.", "Dpto."} {
				if strings.Contains(street, w) && !strings.Contains(got, w) {
					t.Errorf("seed %d: %q became %q: %q lost", seed, street, got, w)
				}
			}
		}
	}
}

// "Montevideo ..., Uruguay" (S1130-05582003000600004-3) became "Gerona
// 50008, Egipto", with codes of two provinces for one town and ".com.uy"
// kept: the town decides the postal codes, the country follows the town,
// the e-mail's country code the country.
func TestForeignAddressBecomesOnePlace(t *testing.T) {
	text := "Domicilio: Rambla Gran Bretaña, 473.\nLocalidad/ Provincia: Montevideo.\nCP: 11000.\nPaís: Uruguay.\n" +
		"Correspondencia: Dr. Juan Pascual Crestanello Nese. C/ Alfredo Navarro 3102, Apto. 116 Montevideo 11600, Uruguay. jpcresta@adinet.com.uy"
	doc := noteDoc(t, "S1130-05582003000600004-3", text,
		[2]string{"CALLE", "Rambla Gran Bretaña, 473"}, [2]string{"TERRITORIO", "Montevideo"}, [2]string{"TERRITORIO", "11000"},
		[2]string{"PAIS", "Uruguay"}, [2]string{"NOMBRE_PERSONAL_SANITARIO", "Juan Pascual Crestanello Nese"},
		[2]string{"CALLE", "C/ Alfredo Navarro 3102, Apto. 116"}, [2]string{"TERRITORIO", "Montevideo"}, [2]string{"TERRITORIO", "11600"},
		[2]string{"PAIS", "Uruguay"}, [2]string{"CORREO_ELECTRONICO", "jpcresta@adinet.com.uy"})
	es := resources.ForLanguage("es")
	for seed := uint64(1); seed <= 10; seed++ {
		res := runNote(t, seed, doc)
		out := res.Docs[0]
		town := out.Spans[1].Text
		place, ok := es.PlaceOfCity(town)
		if !ok {
			t.Fatalf("seed %d: Montevideo became %q, no listed town", seed, town)
		}
		for _, i := range []int{2, 7} {
			if z := out.Spans[i].Text; !es.CityProvinceHasZIP(place.City, z) {
				t.Errorf("seed %d: %q beside %q: a code of another province", seed, z, town)
			}
		}
		for _, i := range []int{3, 8} {
			if c := out.Spans[i].Text; c != "España" {
				t.Errorf("seed %d: %q beside the Spanish town %q", seed, c, town)
			}
		}
		if mail := out.Spans[9].Text; strings.HasSuffix(mail, ".uy") {
			t.Errorf("seed %d: %q kept Uruguay's code", seed, mail)
		}
		if st := out.Spans[5].Text; !strings.Contains(st, "Apto.") {
			t.Errorf("seed %d: %q lost its unit word", seed, st)
		}
		if rep := Check([]pipeline.Document{doc}, res, runPolicy()); len(rep.Incoherent) > 0 {
			t.Errorf("seed %d: the check finds %+v", seed, rep.Incoherent)
		}
	}
}

func runPolicy() *Policy {
	pol := DefaultPolicy()
	pol.Language = "es"
	return pol
}

// A doctor's name under CORREO_ELECTRONICO (S0365-66912006000900010-1)
// takes the name's surrogate, and no review item says it was kept.
func TestNameUnderAnEmailTypeIsNotKept(t *testing.T) {
	text := "Médico: Carmen Blanco-Rivera  NºCol:36 36 79436.\nCorrespondencia: Carmen Blanco-Rivera. mcarmenbr@wanadoo.es"
	doc := noteDoc(t, "S0365-66912006000900010-1", text,
		[2]string{"CORREO_ELECTRONICO", "Carmen Blanco-Rivera"}, [2]string{"NOMBRE_PERSONAL_SANITARIO", "Carmen Blanco-Rivera"},
		[2]string{"CORREO_ELECTRONICO", "mcarmenbr@wanadoo.es"})
	for seed := uint64(1); seed <= 5; seed++ {
		res := runNote(t, seed, doc)
		out := res.Docs[0]
		if out.Spans[0].Text == "Carmen Blanco-Rivera" || out.Spans[0].Text != out.Spans[1].Text {
			t.Errorf("seed %d: %q under CORREO_ELECTRONICO beside the name's %q", seed, out.Spans[0].Text, out.Spans[1].Text)
		}
		for _, r := range res.Review {
			if r.Kept && r.Original == "Carmen Blanco-Rivera" {
				t.Errorf("seed %d: listed as kept: %+v", seed, r)
			}
		}
	}
}

// The check finds a surrogate note whose parts disagree where the
// original's agreed, and nothing where they agree or the original's did not.
func TestCheckFindsIncoherence(t *testing.T) {
	c := newCoherence(runPolicy(), "es")
	note := func(text string, parts ...[2]string) pipeline.Document { return noteDoc(t, "n", text, parts...) }
	orig := note("Vive en Málaga 29009, España. Dra. Ana López Gil. NºCol: 29 29 70367. Dr. Nora Ruiz Gil.",
		[2]string{"TERRITORIO", "Málaga"}, [2]string{"TERRITORIO", "29009"}, [2]string{"PAIS", "España"}, [2]string{"NOMBRE_PERSONAL_SANITARIO", "Ana López Gil"},
		[2]string{"ID_TITULACION_PERSONAL_SANITARIO", "29 29 70367"}, [2]string{"NOMBRE_PERSONAL_SANITARIO", "Nora Ruiz Gil"})
	// "Dr. Nora": a woman's name (by the English lists) under a man's
	// title in the original, whose surrogate may keep her sex.
	doctor := func(first, col string) [][2]string {
		return [][2]string{{"NOMBRE_PERSONAL_SANITARIO", first + " Pérez Sanz"}, {"ID_TITULACION_PERSONAL_SANITARIO", col}, {"NOMBRE_PERSONAL_SANITARIO", "Marta Ruiz Gil"}}
	}
	for _, c2 := range []struct {
		text  string
		parts [][2]string
		kinds string
	}{
		{"Vive en Vigo 28001, Egipto. Dra. Juan Pérez Sanz. NºCol: 28 28 11111. Dr. Marta Ruiz Gil.",
			append([][2]string{{"TERRITORIO", "Vigo"}, {"TERRITORIO", "28001"}, {"PAIS", "Egipto"}}, doctor("Juan", "28 28 11111")...),
			"postal code,country,title,province digits"},
		{"Vive en Vigo 36201, España. Dra. Rosa Pérez Sanz. NºCol: 36 36 11111. Dr. Marta Ruiz Gil.",
			append([][2]string{{"TERRITORIO", "Vigo"}, {"TERRITORIO", "36201"}, {"PAIS", "España"}}, doctor("Rosa", "36 36 11111")...),
			""},
	} {
		var kinds []string
		for _, in := range c.incoherences(orig, note(c2.text, c2.parts...)) {
			kinds = append(kinds, in.Kind)
		}
		if got := strings.Join(kinds, ","); got != c2.kinds {
			t.Errorf("%q: found %q, want %q", c2.text, got, c2.kinds)
		}
	}
	// An original that disagreed itself is no finding.
	bad := note("Vive en Málaga 28001, Egipto.", [2]string{"TERRITORIO", "Málaga"}, [2]string{"TERRITORIO", "28001"}, [2]string{"PAIS", "Egipto"})
	out := note("Vive en Vigo 28001, Chile.", [2]string{"TERRITORIO", "Vigo"}, [2]string{"TERRITORIO", "28001"}, [2]string{"PAIS", "Chile"})
	if found := c.incoherences(bad, out); len(found) > 0 {
		t.Errorf("found %+v where the original disagreed", found)
	}
}

// "Localidad/ Provincia: Madrid. CP: 28822." and, for the doctor, "28822
// Coslada. Madrid (España)" (S0004-06142009000800010-1) became "Cádiz" with
// "11972" and "11972 Zaragoza. Cádiz": the code followed the patient's
// town, Coslada was drawn apart. Towns of one province stay of one; a town
// written with its province after a full stop ("31010 Barañain. Navarra",
// S1137-66272009000300015-1) is that province's.
func TestTownsOfOneProvinceStayOfOne(t *testing.T) {
	text := "Domicilio: Calle Estrella, 27.\nLocalidad/ Provincia: Madrid.\nCP: 28822.\nPaís: España.\n" +
		"Remitido por: Dr. Luís Miguel Herranz Fernández Servicio de Urología Hospital del Henares Avda. Marie Curie s/n 28822 Coslada. Madrid (España). luismiguel.her@terra.es"
	doc := noteDoc(t, "S0004-06142009000800010-1", text,
		[2]string{"CALLE", "Calle Estrella, 27"}, [2]string{"TERRITORIO", "Madrid"}, [2]string{"TERRITORIO", "28822"}, [2]string{"PAIS", "España"},
		[2]string{"NOMBRE_PERSONAL_SANITARIO", "Luís Miguel Herranz Fernández"}, [2]string{"HOSPITAL", "Hospital del Henares"},
		[2]string{"CALLE", "Avda. Marie Curie s/n"}, [2]string{"TERRITORIO", "28822"}, [2]string{"TERRITORIO", "Coslada"},
		[2]string{"TERRITORIO", "Madrid"}, [2]string{"PAIS", "España"}, [2]string{"CORREO_ELECTRONICO", "luismiguel.her@terra.es"})
	text2 := "Localidad/ Provincia: Pamplona.\nCP: 31010.\nRemitido por: Rocío Milena Pabón Meneses Servicio de Neurofisiología Clínica " +
		"Hospital Virgen del Camino Ronda Cendea de Zizur, 58-2ºC 31010 Barañain. Navarra Tfno.+34679802102"
	doc2 := noteDoc(t, "S1137-66272009000300015-1", text2,
		[2]string{"TERRITORIO", "Pamplona"}, [2]string{"TERRITORIO", "31010"}, [2]string{"NOMBRE_PERSONAL_SANITARIO", "Rocío Milena Pabón Meneses"},
		[2]string{"HOSPITAL", "Hospital Virgen del Camino"}, [2]string{"CALLE", "Ronda Cendea de Zizur, 58-2ºC"}, [2]string{"TERRITORIO", "31010"},
		[2]string{"TERRITORIO", "Barañain"}, [2]string{"TERRITORIO", "Navarra"})
	es := resources.ForLanguage("es")
	for seed := uint64(1); seed <= 20; seed++ {
		res := runNote(t, seed, doc)
		out, out2 := res.Docs[0], runNote(t, seed, doc2).Docs[0]
		town, code, coslada, province := out.Spans[1].Text, out.Spans[7].Text, out.Spans[8].Text, out.Spans[9].Text
		if out.Spans[2].Text != code || province != town {
			t.Errorf("seed %d: one patient's %q and %q became %q and %q, %q and %q", seed, "28822", "Madrid", out.Spans[2].Text, code, town, province)
		}
		if !es.CityProvinceHasZIP(coslada, code) {
			t.Errorf("seed %d: %q %q. %q: the code is of another province than its town", seed, code, coslada, province)
		}
		if rep := Check([]pipeline.Document{doc}, res, runPolicy()); len(rep.Incoherent) > 0 {
			t.Errorf("seed %d: the check finds %+v", seed, rep.Incoherent)
		}
		// The lists hold few towns of some provinces: the code may then be
		// of another (a finding), the town and its province agree.
		if nav := out2.Spans[7].Text; !es.CityIsIn(out2.Spans[6].Text, nav) {
			t.Errorf("seed %d: %q. %q: the town is not in the province after it", seed, out2.Spans[6].Text, nav)
		}
	}
}

// "jpcresta@adinet.com" (S1130-05582003000600004-3) holds no whole name
// word of its doctor, Juan Pascual Crestanello Nese, and became
// "adriana.lorenzo@uma.es" beside a doctor renamed otherwise: an address
// without name words is built from the new name of the doctor written
// before it, initials and first surname as the original's letters are.
func TestAddressFollowsTheDoctorBeforeIt(t *testing.T) {
	text := "Correspondencia: Dr. Juan Pascual Crestanello Nese. C/ Alfredo Navarro 3102, Apto. 116 Montevideo 11600, Uruguay. jpcresta@adinet.com"
	doc := noteDoc(t, "S1130-05582003000600004-3", text,
		[2]string{"NOMBRE_PERSONAL_SANITARIO", "Juan Pascual Crestanello Nese"}, [2]string{"CALLE", "C/ Alfredo Navarro 3102, Apto. 116"},
		[2]string{"TERRITORIO", "Montevideo"}, [2]string{"TERRITORIO", "11600"}, [2]string{"PAIS", "Uruguay"},
		[2]string{"CORREO_ELECTRONICO", "jpcresta@adinet.com"})
	for seed := uint64(1); seed <= 10; seed++ {
		out := runNote(t, seed, doc).Docs[0]
		words := strings.Fields(out.Spans[0].Text)
		if len(words) != 4 {
			t.Fatalf("seed %d: %q: want four words", seed, out.Spans[0].Text)
		}
		want := asciiWord(words[0])[:1] + asciiWord(words[1])[:1] + asciiWord(words[2])
		if mail := out.Spans[5].Text; !strings.HasPrefix(mail, want+"@") {
			t.Errorf("seed %d: %q beside %q, want %s@...", seed, mail, out.Spans[0].Text, want)
		}
	}
}

// "José Antonio Cánovas Ivorra" became "Benjamín Germán Lungu Díaz", "Karra
// Amillano Párraga" "Alba Gheorghe Rubio": INE's list holds the surnames of
// Spain's residents of every origin. A Spanish surname is replaced by one
// written as Spanish surnames are; a foreign one may be.
func TestSpanishSurnamesStaySpanish(t *testing.T) {
	for w, want := range map[string]bool{"Lungu": true, "Gheorghe": true, "Munteanu": true, "Mihai": true, "Wang": true, "Zhang": true,
		"Xu": true, "Craciun": true, "Malik": true, "García": false, "Azpiazu": false, "Verdu": false, "Aranburu": false, "Ivorra": false, "Bonache": false} {
		if got := foreignSurname(w); got != want {
			t.Errorf("foreignSurname(%q) = %v, want %v", w, got, want)
		}
	}
	// Drawn near its frequency, a rare Spanish surname met the Romanian and
	// Chinese ones of its rank: a note of doctors with such surnames.
	var b strings.Builder
	var parts [][2]string
	sur := resources.ForLanguage("es").Surnames()
	for k := 1500; k < 3500 && len(parts) < 150; k += 2 {
		a, c := sur[k].Text, sur[k+1].Text
		if foreignSurname(a) || foreignSurname(c) {
			continue
		}
		name := "Ana " + a + " " + c
		b.WriteString("Dra. " + name + ". ")
		parts = append(parts, [2]string{"NOMBRE_PERSONAL_SANITARIO", name})
	}
	doc := noteDoc(t, "S0365-66912007000300011-1", b.String(), parts...)
	for seed := uint64(1); seed <= 3; seed++ {
		for _, s := range runNote(t, seed, doc).Docs[0].Spans {
			for _, w := range strings.Fields(s.Text)[1:] {
				if foreignSurname(w) {
					t.Errorf("seed %d: %q", seed, s.Text)
				}
			}
		}
	}
}
