package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The Spanish pack (data/es) is derived from faker's es locale: its first
// names by sex, surnames, cities, provinces, regions, street types, company
// patterns and free e-mail providers. Faker gives no frequencies, so first
// names are weighted by the ranks of Spain's commonest (femaleRankES,
// maleRankES) and surnames by INE's list (spanishSurnames); and no postal
// codes: a Spanish postal
// code is the province's two-digit number and three more digits, so each
// city is written with its province's number (the table below, public
// knowledge) and the third digit (see postalPrefixes), and surrogates add
// the other two; and no populations, which
// the table below also gives, so that surrogates name big cities as often
// as notes do. Streets, hospitals, institutions and small towns are
// composed from those names (Spain's commonest surnames) and places and a
// few hand-written words, as real Spanish ones are built.

type fakerES struct {
	Person struct {
		FirstName struct {
			Female []string `json:"female"`
			Male   []string `json:"male"`
		} `json:"first_name"`
		LastName struct {
			Generic []string `json:"generic"`
		} `json:"last_name"`
	} `json:"person"`
	Location struct {
		CityName     []string `json:"city_name"`
		County       []string `json:"county"`
		State        []string `json:"state"`
		StreetSuffix []string `json:"street_suffix"`
	} `json:"location"`
	Company struct {
		LegalEntityType []string `json:"legal_entity_type"`
	} `json:"company"`
	Date struct {
		Month struct {
			Wide []string `json:"wide"`
		} `json:"month"`
	} `json:"date"`
	Internet struct {
		FreeEmail    []string `json:"free_email"`
		DomainSuffix []string `json:"domain_suffix"`
	} `json:"internet"`
}

// provinceCodes are the INE numbers of Spain's provinces (the first two digits
// of their postal codes), keyed by the names faker's es locale uses.
var provinceCodes = map[string]string{
	"Álava": "01", "Albacete": "02", "Alicante": "03", "Almería": "04", "Ávila": "05", "Badajoz": "06",
	"Islas Baleares": "07", "Barcelona": "08", "Burgos": "09", "Cáceres": "10", "Cádiz": "11", "Castellón": "12",
	"Ciudad Real": "13", "Córdoba": "14", "La Coruña": "15", "Cuenca": "16", "Gerona": "17", "Granada": "18",
	"Guadalajara": "19", "Guipúzcoa": "20", "Huelva": "21", "Huesca": "22", "Jaén": "23", "León": "24",
	"Lérida": "25", "La Rioja": "26", "Lugo": "27", "Madrid": "28", "Málaga": "29", "Murcia": "30", "Navarra": "31",
	"Orense": "32", "Asturias": "33", "Palencia": "34", "Las Palmas": "35", "Pontevedra": "36", "Salamanca": "37",
	"Santa Cruz de Tenerife": "38", "Cantabria": "39", "Segovia": "40", "Sevilla": "41", "Soria": "42",
	"Tarragona": "43", "Teruel": "44", "Toledo": "45", "Valencia": "46", "Valladolid": "47", "Vizcaya": "48",
	"Zamora": "49", "Zaragoza": "50", "Ceuta": "51", "Melilla": "52",
}

// provinceOtherNamesES are the other names notes give a province: its name
// in the region's own language and, for the island provinces, their islands,
// which an address names in its place ("Los Llanos de Aridane, Tenerife").
// "Baleares" stays a region (regions.txt), as faker lists it.
var provinceOtherNamesES = map[string][]string{
	"Álava": {"Araba"}, "Alicante": {"Alacant"}, "Castellón": {"Castelló"}, "Gerona": {"Girona"},
	"Guipúzcoa": {"Gipuzkoa"}, "La Coruña": {"A Coruña"}, "Lérida": {"Lleida"}, "Orense": {"Ourense"},
	"Valencia": {"València"}, "Vizcaya": {"Bizkaia"},
	"Islas Baleares":         {"Illes Balears", "Mallorca", "Menorca", "Ibiza", "Eivissa", "Formentera"},
	"Las Palmas":             {"Gran Canaria", "Lanzarote", "Fuerteventura"},
	"Santa Cruz de Tenerife": {"Tenerife", "La Palma", "La Gomera", "El Hierro"},
}

// spellingES corrects the misspellings of faker's es lists ("" drops a name).
var spellingES = map[string]string{
	"lérida": "Lérida", "Cuenta": "Cuenca", "San Sebastían de los Reyes": "San Sebastián de los Reyes",
	"El Prat de LLobregat": "El Prat de Llobregat", "Hospitalet de LLobregat": "Hospitalet de Llobregat",
	"San Cristróbal de la Laguna": "San Cristóbal de La Laguna", "Aýna": "Ayna", "Ruíz": "Ruiz",
}

// cityProvince is the province of each city of faker's es list.
var cityProvince = map[string]string{
	"Parla": "Madrid", "Telde": "Las Palmas", "Baracaldo": "Vizcaya", "San Fernando": "Cádiz", "Torrevieja": "Alicante",
	"Lugo": "Lugo", "Santiago de Compostela": "La Coruña", "Gerona": "Gerona", "Cáceres": "Cáceres", "Lorca": "Murcia",
	"Coslada": "Madrid", "Talavera de la Reina": "Toledo", "El Puerto de Santa María": "Cádiz",
	"Cornellá de Llobregat": "Barcelona", "Avilés": "Asturias", "Palencia": "Palencia", "Gecho": "Vizcaya",
	"Orihuela": "Alicante", "Pontevedra": "Pontevedra", "Pozuelo de Alarcón": "Madrid", "Toledo": "Toledo",
	"El Ejido": "Almería", "Guadalajara": "Guadalajara", "Gandía": "Valencia", "Ceuta": "Ceuta", "Ferrol": "La Coruña",
	"Chiclana de la Frontera": "Cádiz", "Manresa": "Barcelona", "Roquetas de Mar": "Almería", "Ciudad Real": "Ciudad Real",
	"Rubí": "Barcelona", "Benidorm": "Alicante", "San Sebastián de los Reyes": "Madrid", "Ponferrada": "León",
	"Zamora": "Zamora", "Alcalá de Guadaira": "Sevilla", "Fuengirola": "Málaga", "Mijas": "Málaga",
	"Sanlúcar de Barrameda": "Cádiz", "La Línea de la Concepción": "Cádiz", "Majadahonda": "Madrid", "Sagunto": "Valencia",
	"El Prat de Llobregat": "Barcelona", "Viladecans": "Barcelona", "Linares": "Jaén", "Alcoy": "Alicante", "Irún": "Guipúzcoa",
	"Estepona": "Málaga", "Torremolinos": "Málaga", "Rivas-Vaciamadrid": "Madrid", "Molina de Segura": "Murcia",
	"Paterna": "Valencia", "Granollers": "Barcelona", "Santa Lucía de Tirajana": "Las Palmas", "Motril": "Granada",
	"Cerdañola del Vallés": "Barcelona", "Arrecife": "Las Palmas", "Segovia": "Segovia", "Torrelavega": "Cantabria",
	"Elda": "Alicante", "Mérida": "Badajoz", "Ávila": "Ávila", "Valdemoro": "Madrid", "Cuenca": "Cuenca",
	"Collado Villalba": "Madrid", "Benalmádena": "Málaga", "Mollet del Vallés": "Barcelona", "Puertollano": "Ciudad Real",
	"Madrid": "Madrid", "Barcelona": "Barcelona", "Valencia": "Valencia", "Sevilla": "Sevilla", "Zaragoza": "Zaragoza",
	"Málaga": "Málaga", "Murcia": "Murcia", "Palma de Mallorca": "Islas Baleares", "Las Palmas de Gran Canaria": "Las Palmas",
	"Bilbao": "Vizcaya", "Córdoba": "Córdoba", "Alicante": "Alicante", "Valladolid": "Valladolid", "Vigo": "Pontevedra",
	"Gijón": "Asturias", "Hospitalet de Llobregat": "Barcelona", "La Coruña": "La Coruña", "Granada": "Granada",
	"Vitoria": "Álava", "Elche": "Alicante", "Santa Cruz de Tenerife": "Santa Cruz de Tenerife", "Oviedo": "Asturias",
	"Badalona": "Barcelona", "Cartagena": "Murcia", "Móstoles": "Madrid", "Jerez de la Frontera": "Cádiz",
	"Tarrasa": "Barcelona", "Sabadell": "Barcelona", "Alcalá de Henares": "Madrid", "Pamplona": "Navarra",
	"Fuenlabrada": "Madrid", "Almería": "Almería", "San Sebastián": "Guipúzcoa", "Leganés": "Madrid",
	"Santander": "Cantabria", "Burgos": "Burgos", "Castellón de la Plana": "Castellón", "Alcorcón": "Madrid",
	"Albacete": "Albacete", "Getafe": "Madrid", "Salamanca": "Salamanca", "Huelva": "Huelva", "Logroño": "La Rioja",
	"Badajoz": "Badajoz", "San Cristóbal de La Laguna": "Santa Cruz de Tenerife", "León": "León", "Tarragona": "Tarragona",
	"Cádiz": "Cádiz", "Lérida": "Lérida", "Marbella": "Málaga", "Mataró": "Barcelona", "Dos Hermanas": "Sevilla",
	"Santa Coloma de Gramanet": "Barcelona", "Jaén": "Jaén", "Algeciras": "Cádiz", "Torrejón de Ardoz": "Madrid",
	"Orense": "Orense", "Alcobendas": "Madrid", "Reus": "Tarragona", "Calahorra": "La Rioja", "Inca": "Islas Baleares",
	"Ayna": "Albacete",
}

// officialES are the official names, in a region's own language, of cities
// faker names in Castilian only; notes use both ("A Coruña", "La Coruña").
var officialES = map[string]string{"La Coruña": "A Coruña", "Orense": "Ourense", "Gerona": "Girona", "Lérida": "Lleida",
	"Vitoria": "Vitoria-Gasteiz", "San Sebastián": "Donostia", "Gecho": "Getxo", "Baracaldo": "Barakaldo",
	"Tarrasa": "Terrassa", "Santa Coloma de Gramanet": "Santa Coloma de Gramenet", "Alcoy": "Alcoi", "Irún": "Irun"}

// capitalsES are the provincial capitals whose province has another name.
var capitalsES = map[string]bool{"Pamplona": true, "Bilbao": true, "San Sebastián": true, "Vitoria": true, "Oviedo": true,
	"Santander": true, "Logroño": true, "Palma de Mallorca": true, "Las Palmas de Gran Canaria": true,
	"Castellón de la Plana": true}

// postalPrefixes are the prefixes of a city's postal codes: the province's
// number, then 0 in its capital ("28029", Madrid) and another digit
// elsewhere ("28100", Alcobendas), as Correos numbers them.
func postalPrefixes(city, province string) string {
	code := provinceCodes[province]
	if city == province || capitalsES[city] {
		return code + "0"
	}
	var out []string
	for d := '1'; d <= '9'; d++ {
		out = append(out, code+string(d))
	}
	return strings.Join(out, " ")
}

// cityPopulation is each city's population in thousands (INE municipal
// register, about 2020, rounded; public knowledge): surrogates draw a city by
// it, as notes name a few big cities often and most others rarely.
var cityPopulation = map[string]float64{
	"Madrid": 3334, "Barcelona": 1664, "Valencia": 801, "Sevilla": 685, "Zaragoza": 675, "Málaga": 578, "Murcia": 460,
	"Palma de Mallorca": 422, "Las Palmas de Gran Canaria": 380, "Bilbao": 347, "Alicante": 338, "Córdoba": 326,
	"Valladolid": 299, "Vigo": 296, "Gijón": 271, "Hospitalet de Llobregat": 265, "Vitoria": 254, "La Coruña": 247,
	"Elche": 235, "Granada": 233, "Badalona": 224, "Tarrasa": 224, "Oviedo": 220, "Cartagena": 216, "Sabadell": 216,
	"Jerez de la Frontera": 213, "Móstoles": 210, "Santa Cruz de Tenerife": 209, "Pamplona": 203, "Almería": 201,
	"Alcalá de Henares": 197, "Fuenlabrada": 194, "Leganés": 191, "San Sebastián": 188, "Getafe": 185, "Burgos": 176,
	"Albacete": 174, "Castellón de la Plana": 174, "Santander": 173, "Alcorcón": 172, "San Cristóbal de La Laguna": 158,
	"Logroño": 152, "Badajoz": 151, "Marbella": 147, "Salamanca": 144, "Huelva": 144, "Lérida": 140, "Tarragona": 136,
	"Dos Hermanas": 135, "Torrejón de Ardoz": 132, "Parla": 131, "Mataró": 129, "León": 124, "Algeciras": 123,
	"Santa Coloma de Gramanet": 120, "Alcobendas": 118, "Cádiz": 116, "Jaén": 112, "Orense": 105, "Reus": 106,
	"Gerona": 103, "Telde": 102, "Baracaldo": 101, "Lugo": 98, "Roquetas de Mar": 98, "Santiago de Compostela": 97,
	"Cáceres": 96, "San Fernando": 95, "Lorca": 95, "San Sebastián de los Reyes": 90, "Rivas-Vaciamadrid": 90,
	"El Puerto de Santa María": 89, "Cornellá de Llobregat": 89, "Pozuelo de Alarcón": 87, "Guadalajara": 87,
	"Toledo": 85, "Chiclana de la Frontera": 85, "Mijas": 85, "El Ejido": 84, "Ceuta": 84, "Torrevieja": 83,
	"Talavera de la Reina": 83, "Pontevedra": 83, "Fuengirola": 83, "Coslada": 81, "Palencia": 78, "Avilés": 78,
	"Gecho": 78, "Orihuela": 78, "Manresa": 78, "Rubí": 78, "Valdemoro": 77, "Alcalá de Guadaira": 76, "Gandía": 75,
	"Ciudad Real": 75, "Santa Lucía de Tirajana": 74, "Majadahonda": 72, "Molina de Segura": 72, "Paterna": 71,
	"Benidorm": 70, "Estepona": 70, "Sanlúcar de Barrameda": 69, "Torremolinos": 69, "Benalmádena": 69, "Sagunto": 67,
	"Viladecans": 67, "Ferrol": 65, "El Prat de Llobregat": 65, "Ponferrada": 64, "Arrecife": 64, "Collado Villalba": 64,
	"La Línea de la Concepción": 63, "Irún": 62, "Granollers": 62, "Zamora": 61, "Mérida": 60, "Alcoy": 59,
	"Motril": 58, "Cerdañola del Vallés": 58, "Ávila": 58, "Linares": 57, "Cuenca": 54, "Elda": 52, "Segovia": 51,
	"Torrelavega": 51, "Mollet del Vallés": 51, "Puertollano": 47, "Inca": 34, "Calahorra": 24, "Ayna": 0.6,
}

// streetTypesES are the street types of faker's list that Spanish addresses
// commonly use, in the order streets are assigned them.
var streetTypesES = []string{"Calle", "Avenida", "Plaza", "Paseo", "Camino", "Ronda", "Travesía", "Carretera",
	"Glorieta", "Rambla", "Pasaje", "Urbanización", "Cuesta", "Bajada", "Subida", "Senda", "Barrio", "Polígono", "Parque", "Vía"}

func fixES(s string) string {
	if f, ok := spellingES[s]; ok {
		return f
	}
	return s
}

// spanish writes data/es and the shared free-mail list.
func (g *gen) spanish() {
	if g.err != nil {
		return
	}
	f := g.open("faker-es/faker_es.json")
	if g.err != nil {
		return
	}
	defer f.Close()
	var d fakerES
	if err := json.NewDecoder(f).Decode(&d); err != nil {
		g.err = fmt.Errorf("faker-es: %v", err)
		return
	}
	last := d.Person.LastName.Generic
	female, male := withRanked(d.Person.FirstName.Female, femaleRankES), withRanked(d.Person.FirstName.Male, maleRankES)
	g.write("es/first_female.tsv", byRank(female, femaleRankES))
	g.write("es/first_male.tsv", byRank(male, maleRankES))
	// A surname that is also a first name or a place is written with the
	// accents INE's other lists give it ("Andrés", "Cáceres", "María").
	accentedNames := slices.Concat(last, d.Person.FirstName.Female, d.Person.FirstName.Male, d.Location.State, d.Location.CityName)
	surnames := g.spanishSurnames(accentedNames)
	g.write("es/surnames.tsv", surnames)
	// Streets, towns, hospitals and companies are named after Spain's
	// commonest surnames, not faker's list (which leans Mexican-American:
	// "Abeyta", "Tafoya"): the first composedSurnames of INE's, in rank.
	composed := make([]string, 0, composedSurnames)
	for _, l := range surnames {
		if len(composed) == composedSurnames {
			break
		}
		if name, _, _ := strings.Cut(l, "\t"); utf8.RuneCountInString(name) > 2 {
			composed = append(composed, name)
		}
	}
	sex := map[string]string{}
	for _, n := range female {
		sex[n] = "F"
	}
	for _, n := range male {
		if sex[n] == "F" {
			sex[n] = "U"
		} else {
			sex[n] = "M"
		}
	}
	var sexLines []string
	for _, n := range sortedKeys(sex) {
		sexLines = append(sexLines, n+"\t"+sex[n])
	}
	g.write("es/sex.tsv", sexLines)

	provinces := append([]string{}, d.Location.County...)
	provinces = append(provinces, "Ceuta", "Melilla")
	var states []string
	for _, p := range provinces {
		p = fixES(p)
		code, ok := provinceCodes[p]
		if !ok {
			g.err = fmt.Errorf("faker-es: province %q has no number", p)
			return
		}
		states = append(states, strings.Join(append([]string{p, code}, provinceOtherNamesES[p]...), "\t"))
	}
	g.write("es/states.tsv", states)
	g.write("es/regions.txt", d.Location.State)

	cityNames := make([]string, len(d.Location.CityName))
	for i, c := range d.Location.CityName {
		cityNames[i] = fixES(c)
	}
	for i := range provinces {
		provinces[i] = fixES(provinces[i])
	}
	n := names{female: female, male: male, last: composed, cities: cityNames, provinces: provinces, regions: d.Location.State,
		rng: rand.New(rand.NewPCG(14, 2026))}
	for _, m := range d.Date.Month.Wide { // capitalized, as in a name
		n.months = append(n.months, strings.ToUpper(m[:1])+m[1:])
	}

	var cities []string
	for _, c := range d.Location.CityName {
		c = fixES(c)
		p, ok := cityProvince[c]
		if !ok {
			g.err = fmt.Errorf("faker-es: city %q has no province", c)
			return
		}
		pop, ok := cityPopulation[c]
		if !ok {
			g.err = fmt.Errorf("faker-es: city %q has no population", c)
			return
		}
		names := []string{c}
		if o, ok := officialES[c]; ok { // the city is named both ways: each for half its people
			names, pop = append(names, o), pop/2
		}
		for _, name := range names {
			cities = append(cities, name+"\t"+p+"\t"+postalPrefixes(c, p)+"\t"+strconv.FormatFloat(pop, 'f', -1, 64))
		}
	}
	g.write("es/zipcodes.tsv", append(cities, n.municipalities(d.Location.CityName)...))

	known := map[string]bool{}
	for _, t := range d.Location.StreetSuffix {
		known[t] = true
	}
	for _, t := range streetTypesES {
		if !known[t] {
			g.err = fmt.Errorf("faker-es: street type %q is not in faker's list", t)
			return
		}
	}
	g.write("es/street_suffixes.txt", streetTypesES)

	g.write("es/streets.tsv", n.streets())
	g.write("es/hospitals.tsv", n.hospitals())
	g.write("es/organizations.txt", n.organizations(d.Company.LegalEntityType))
	g.write("free_email.txt", d.Internet.FreeEmail)
	g.write("es/free_email.txt", append(slices.Clone(d.Internet.FreeEmail), publicProvidersES...))
	g.write("es/domain_suffixes.txt", d.Internet.DomainSuffix)
	g.write("es/institution_domains.txt", institutionDomainsES)
}

// femaleRankES and maleRankES are Spain's commonest women's and men's first
// names of one word, most frequent first, written by hand from INE's
// published tables of the names its residents bear (public knowledge; the
// order is approximate, the tables give counts). Faker gives its names no
// frequencies, and drawn with equal weight "Hermenegildo" is as common as
// "Antonio": a reader tells such surrogates from real names.
var (
	femaleRankES = []string{"María", "Carmen", "Ana", "Isabel", "Laura", "Josefa", "Cristina", "Marta", "Dolores", "Pilar",
		"Lucía", "Francisca", "Antonia", "Elena", "Teresa", "Sara", "Paula", "Raquel", "Rosa", "Manuela", "Mercedes",
		"Concepción", "Julia", "Beatriz", "Silvia", "Nuria", "Rosario", "Juana", "Alba", "Irene", "Patricia",
		"Montserrat", "Encarnación", "Andrea", "Rocío", "Mónica", "Alicia", "Sonia", "Sandra", "Ángela", "Marina",
		"Susana", "Natalia", "Yolanda", "Margarita", "Claudia", "Eva", "Inmaculada", "Sofía", "Esther", "Carla",
		"Noelia", "Verónica", "Nerea", "Carolina", "Inés", "Ángeles", "Miriam", "Daniela", "Lorena", "Victoria",
		"Amparo", "Catalina", "Martina", "Lidia", "Alejandra", "Celia", "Olga", "Consuelo", "Ainhoa", "Fátima",
		"Gloria", "Emilia", "Clara", "Vanesa", "Aurora", "Luisa", "Eugenia", "Milagros", "Adriana", "Lourdes",
		"Trinidad", "Nieves", "Asunción", "Remedios", "Soledad", "Esperanza", "Begoña", "Valeria"}
	maleRankES = []string{"Antonio", "José", "Manuel", "Francisco", "David", "Juan", "Javier", "Daniel", "Carlos", "Jesús",
		"Alejandro", "Miguel", "Rafael", "Pedro", "Pablo", "Ángel", "Sergio", "Fernando", "Jorge", "Luis", "Alberto",
		"Álvaro", "Adrián", "Diego", "Raúl", "Enrique", "Ramón", "Iván", "Rubén", "Vicente", "Óscar", "Andrés",
		"Joaquín", "Santiago", "Eduardo", "Víctor", "Roberto", "Jaime", "Mario", "Ignacio", "Marcos", "Alfonso",
		"Salvador", "Ricardo", "Jordi", "Emilio", "Hugo", "Guillermo", "Gabriel", "Julián", "Julio", "Marc", "Tomás",
		"Gonzalo", "Agustín", "Mohamed", "Félix", "Nicolás", "Joan", "Martín", "Ismael", "Cristian", "Samuel", "Aitor",
		"Lucas", "Josep", "Héctor", "Mariano", "Domingo", "Sebastián", "Alfredo", "Iker", "César", "Felipe", "Rodrigo",
		"Mateo", "Xavier", "Gregorio", "Lorenzo", "Esteban", "Arturo", "Borja", "Valentín", "Cristóbal", "Bruno"}
)

// withRanked adds to faker's names the ranked ones it lacks.
func withRanked(names, ranked []string) []string {
	out := slices.Clone(names)
	for _, n := range ranked {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// byRank writes "name\tpercent": a ranked name's share read off a power law
// (the first about 3% of the sex, the hundredth about 0.12%, as INE's
// tables run), every other name the share of a name just past the ranks.
func byRank(names, ranked []string) []string {
	const top, exp = 3.0, 0.7
	share := func(rank int) float64 { return top * math.Pow(float64(rank), -exp) }
	var out []string
	for _, n := range names {
		f := share(2 * len(ranked))
		if i := slices.Index(ranked, n); i >= 0 {
			f = share(i + 1)
		}
		out = append(out, n+"\t"+strconv.FormatFloat(f, 'f', 4, 64))
	}
	return out
}

// composedSurnames is how many of Spain's commonest surnames name the
// streets, towns, hospitals and companies of the Spanish pack.
const composedSurnames = 600

// Words of Spanish place, hospital and institution names that faker's lists
// lack, written by hand from public knowledge (no third-party rights).
var (
	// institutionDomainsES are mail domains of Spain's public health
	// services, universities and medical colleges: an institution's
	// address becomes another institution's, not place words
	// ("mijas.avila.es" for "sescam.jccm.es").
	institutionDomainsES = []string{"salud.madrid.org", "sergas.es", "juntadeandalucia.es", "gva.es", "osakidetza.eus",
		"saludcastillayleon.es", "sescam.jccm.es", "carm.es", "salud.aragon.es", "scsalud.es", "sespa.es", "ibsalut.es",
		"riojasalud.es", "gobiernodecanarias.org", "navarra.es", "gencat.cat", "salud-juntaex.es", "ucm.es", "uam.es",
		"ub.edu", "uab.cat", "uv.es", "usal.es", "unizar.es", "ugr.es", "us.es", "um.es", "uma.es", "uniovi.es",
		"unican.es", "usc.es", "unav.es", "uva.es", "ehu.eus", "comb.cat", "icomem.es", "cgcom.es", "isciii.es"}
	// publicProvidersES are public e-mail providers Spanish addresses use
	// beside faker's three: a surrogate address keeps a public provider
	// rather than being given an institution's domain.
	publicProvidersES = []string{"yahoo.es", "hotmail.es", "outlook.es", "outlook.com", "live.com", "msn.com",
		"telefonica.net", "terra.es", "mixmail.com", "ono.com", "wanadoo.es", "movistar.es", "orange.es", "icloud.com"}
	// streetWordsES are common names of Spanish streets that are no person or
	// place ("Calle Mayor", "Plaza de la Constitución").
	streetWordsES = []string{"Mayor", "Real", "Nueva", "Ancha", "Alta", "Constitución", "Libertad", "Iglesia", "Estación",
		"Castellana", "Alameda", "Sol", "Mar", "Rosales", "Olivos", "Pinos", "Almendros", "Huertas", "Molino", "Fuente",
		"Paz", "Industria", "Comercio", "Marina", "Hospital", "Cruz", "Puerto", "Río", "Sur", "Norte", "Estrella", "Prado",
		"Jardines", "Colegio", "Castillo", "Ermita", "Ribera", "Campo", "Ventas", "Sierra"}
	// toponymsES are surnames of faker's list that are Spanish place names
	// too, and qualifiersES what follows them in a municipality's name
	// ("Villanueva de la Serena", "Medina del Campo").
	toponymsES   = []string{"Villanueva", "Medina", "Torres", "Vega", "Valle", "Castillo", "Montes", "Fuentes", "Arroyo", "Villalobos", "Campos", "Robles", "Olmos", "Prado", "Soto"}
	qualifiersES = []string{"del Campo", "de la Sierra", "de la Vega", "del Río", "del Monte", "de Arriba", "de Abajo",
		"de los Caballeros", "de la Frontera", "del Puerto", "de la Reina", "del Rey", "del Valle", "de la Cruz"}
	// advocationsES are the Marian titles Spanish hospitals are named after
	// ("Hospital Universitario Virgen del Rocío").
	advocationsES = []string{"del Rocío", "de las Nieves", "del Camino", "del Carmen", "de la Salud", "de la Victoria",
		"del Puerto", "de la Luz", "del Mar", "de Guadalupe", "del Pilar", "de la Soledad", "de la Esperanza",
		"de los Dolores", "de la Concepción", "de las Mercedes", "de Lourdes", "del Rosario", "de la Paz", "del Castillo",
		"de la Macarena", "de la Arrixaca", "de Valme", "de Covadonga", "de Montserrat", "de la Montaña", "de la Cinta"}
	// hospitalKindsES are the ways a Spanish hospital's name starts.
	hospitalKindsES = []string{"Hospital", "Hospital Universitario", "Hospital General", "Hospital General Universitario",
		"Hospital Clínico", "Hospital Clínico Universitario", "Hospital Comarcal", "Hospital Regional",
		"Hospital Regional Universitario", "Hospital Provincial", "Hospital Infantil", "Hospital Materno-Infantil",
		"Hospital Central", "Complejo Hospitalario", "Complejo Hospitalario Universitario", "Clínica", "Policlínica"}
	// regionAdjectivesES are the adjectives of Spain's regions, by faker's
	// names, that name their health services ("Servicio Gallego de Salud").
	regionAdjectivesES = map[string]string{"Andalucía": "Andaluz", "Aragón": "Aragonés", "Principado de Asturias": "Asturiano",
		"Baleares": "Balear", "Canarias": "Canario", "Cantabria": "Cántabro", "Castilla-La Mancha": "Castellano-Manchego",
		"Castilla y León": "Castellano-Leonés", "Cataluña": "Catalán", "Comunidad Valenciana": "Valenciano",
		"Extremadura": "Extremeño", "Galicia": "Gallego", "La Rioja": "Riojano", "Comunidad de Madrid": "Madrileño",
		"Navarra": "Navarro", "País Vasco": "Vasco", "Región de Murcia": "Murciano"}
	// facultiesES are the faculties of health sciences.
	facultiesES = []string{"Medicina", "Odontología", "Farmacia", "Enfermería", "Psicología", "Biología", "Veterinaria",
		"Ciencias de la Salud"}
	// fieldsES are the fields of medicine and science that institutes and
	// centres are named after.
	fieldsES = []string{"Medicina", "Odontología", "Farmacia", "Enfermería", "Psicología", "Biología", "Veterinaria",
		"Fisioterapia", "Ciencias de la Salud", "Medicina Legal", "Toxicología", "Microbiología", "Oncología",
		"Cardiología", "Neurología", "Oftalmología", "Salud Pública", "Investigación Biomédica", "Medicina del Deporte",
		"Genética", "Nutrición", "Rehabilitación"}
)

// names composes Spanish street, hospital and institution names from the
// pack's names and places and the words above, as real ones are built.
type names struct {
	female, male, last, cities, provinces, regions, months []string
	rng                                                    *rand.Rand
}

func (n *names) pick(l []string) string { return l[n.rng.IntN(len(l))] }

func (n *names) first() string {
	if n.rng.IntN(2) == 0 {
		return n.pick(n.female)
	}
	return n.pick(n.male)
}

// saint is "San Pedro" or "Santa Lucía": a name of one word ("Santa Ana
// María" is nobody's).
func (n *names) saint() string {
	title, names := "San ", n.male
	if n.rng.IntN(2) == 0 {
		title, names = "Santa ", n.female
	}
	for {
		if name := n.pick(names); !strings.Contains(name, " ") {
			return title + name
		}
	}
}

// streets are street names without their type, of one to three words and
// without function words (an address's "de", "del" and types are kept from
// the original): a surname ("Calle Cervantes"), a person ("Avenida Jacinto
// Benavente"), two surnames ("Menéndez Pidal"), a saint, a place, a common
// name ("Calle Mayor").
func (n *names) streets() []string {
	out := map[string]bool{}
	typ := func() string { return n.pick(streetTypesES) }
	add := func(name string) { out[name+"\t"+typ()] = true }
	for _, l := range n.last {
		add(l)
		add(n.first() + " " + l)
		add(l + " " + n.pick(n.last))
	}
	for _, f := range append(append([]string{}, n.female...), n.male...) {
		add(f)
		add(f + " " + n.pick(n.last))
		add(f + " " + n.pick(n.last) + " " + n.pick(n.last))
	}
	for range len(n.male) + len(n.female) {
		add(n.saint())
	}
	for _, c := range n.cities {
		if !strings.Contains(" "+strings.ToLower(c)+" ", " de ") && !strings.Contains(" "+strings.ToLower(c)+" ", " del ") {
			add(c)
		}
	}
	for _, w := range streetWordsES {
		add(w)
	}
	return sortedKeys(out)
}

// municipalities are towns named as Spain's small ones are, after a saint
// ("San Martín", "Santa Eulalia del Río") or a place and a qualifier
// ("Villanueva de la Sierra"), each in a province at random, without a
// population: they are drawn as rarely as the smallest towns.
func (n *names) municipalities(real []string) []string {
	taken := map[string]bool{}
	for _, c := range real {
		taken[fixES(c)] = true
	}
	var out []string
	add := func(town string) {
		if taken[town] {
			return
		}
		taken[town] = true
		p := n.pick(n.provinces)
		out = append(out, town+"\t"+p+"\t"+postalPrefixes(town, p)+"\t0")
	}
	for _, t := range toponymsES {
		for range 4 {
			add(t + " " + n.pick(qualifiersES))
		}
	}
	for range 80 {
		add(n.saint())
	}
	for range 40 {
		add(n.saint() + " " + n.pick(qualifiersES))
	}
	return out
}

// doctor is the title of a hospital named after a physician, spelled out
// or abbreviated as names write it ("Hospital Doctor Peset", "Hospital Dr.
// Negrín").
func (n *names) doctor() string {
	if n.rng.IntN(2) == 0 {
		return "Dr."
	}
	return "Doctor"
}

// hospitals are hospitals and health centres named as Spain's are: a kind
// ("Hospital Clínico Universitario") after a place, a saint, a Virgin, a
// person, a title ("Hospital Infanta Elena") or a date ("Hospital 12 de
// Octubre"), or alone ("Hospital General"), each with its city (one at random where the name has none) and
// that city's province.
func (n *names) hospitals() []string {
	out := map[string]bool{}
	add := func(name, city string) {
		if city == "" {
			city = n.pick(n.cities)
		}
		out[name+"\t"+city+"\t"+cityProvince[city]] = true
	}
	for _, k := range hospitalKindsES[1:] {
		add(k, "")
	}
	for _, c := range n.cities { // "Hospital Cruces", "Clínica Quirón": two words, as many are
		if !strings.Contains(c, " ") {
			add("Hospital "+c, c)
			add("Clínica "+n.pick(n.last), "")
		}
	}
	atCity := func(prefix string) func() (string, string) {
		return func() (string, string) {
			c := n.pick(n.cities)
			return prefix + c, c
		}
	}
	named := func(f func() string) func() (string, string) {
		return func() (string, string) { return f(), "" }
	}
	forms := []func() (string, string){
		atCity("de "), atCity(""), atCity("Marqués de "),
		named(func() string { return "de " + n.pick(n.provinces) }),
		named(n.saint),
		named(func() string { return "Virgen " + n.pick(advocationsES) }),
		named(func() string { return "Nuestra Señora " + n.pick(advocationsES) }),
		named(func() string { return n.first() + " " + n.pick(n.last) }),
		named(func() string { return n.doctor() + " " + n.pick(n.last) }),
		named(func() string { return n.doctor() + " " + n.pick(n.male) + " " + n.pick(n.last) }),
		named(func() string { return strconv.Itoa(1+n.rng.IntN(28)) + " de " + n.pick(n.months) }),
		named(func() string { return "Infanta " + n.pick(n.female) }),
		named(func() string { return "Reina " + n.pick(n.female) }),
		named(func() string { return n.pick(n.last) + " y " + n.pick(n.last) }),
	}
	for range 6000 {
		name, city := forms[n.rng.IntN(len(forms))]()
		add(n.pick(hospitalKindsES)+" "+name, city)
	}
	centres := []func() (string, string){atCity(""), named(n.saint), named(func() string { return n.pick(streetWordsES) }),
		named(func() string { return n.first() + " " + n.pick(n.last) })}
	for range 800 {
		name, city := centres[n.rng.IntN(len(centres))]()
		add("Centro de Salud "+name, city)
	}
	return sortedKeys(out)
}

// organizations are institutions and companies as notes name them: health
// services, faculties, universities, institutes and national centres,
// foundations and laboratories, and faker's company patterns, of one word
// (a surname, as "Merck") to six.
func (n *names) organizations(legal []string) []string {
	out := map[string]bool{}
	for _, r := range n.regions {
		if a, ok := regionAdjectivesES[r]; ok {
			out["Servicio "+a+" de Salud"] = true
			out["Instituto "+a+" de "+n.pick(fieldsES)] = true
		}
		out["Servicio de Salud de "+r] = true
		out["Consejería de Sanidad de "+r] = true
	}
	for _, f := range fieldsES {
		out["Instituto Nacional de "+f] = true
		out["Centro Nacional de "+f] = true
		out["Sociedad Española de "+f] = true
	}
	for _, f := range facultiesES {
		out["Facultad de "+f] = true
	}
	for _, p := range n.provinces {
		out["Instituto de Medicina Legal de "+p] = true
		out["Centro de Transfusión de "+p] = true
		out["Colegio de Médicos de "+p] = true
	}
	for _, c := range n.cities {
		out["Universidad de "+c] = true
		out["Facultad de "+n.pick(facultiesES)+" de "+c] = true
		out["Ciudad de la Justicia de "+c] = true
		out["Centro de "+n.pick(fieldsES)+" de "+c] = true
	}
	for i, l := range n.last {
		other := n.pick(n.last)
		out[l] = true
		switch i % 6 {
		case 0:
			out[l+" y "+other] = true
		case 1:
			out[l+" "+n.pick(legal)] = true
		case 2:
			out[l+" "+other+" "+n.pick(legal)] = true
		case 3:
			out["Fundación "+n.first()+" "+l] = true
		case 4:
			out["Laboratorios "+l] = true
		case 5:
			out["Centro Médico "+l] = true
		}
	}
	return sortedKeys(out)
}

// spanishSurnames are Spain's surnames borne by 500 people or more, by
// descending frequency: INE's "Apellidos más frecuentes" (apellidos_frecuencia,
// as the npm package @zxcvbn-ts/language-es-es ships it in
// gen/es_surnames.json: lower case, unaccented but for ñ, ranked, no counts).
// Names of more than one word ("de la fuente") are left out, a name word
// being one word, and so are those that read as titles (titleWords). The list gives ranks only, so a name's frequency (percent) is
// read off a power law through García's 2.9% and the list's floor, 500
// bearers of 47 million (0.00106%). Accents come from faker's surnames where
// it lists the name ("Álvarez", "Domínguez"), else from the stress rules a
// surname's ending tells (see accented).
func (g *gen) spanishSurnames(faker []string) []string {
	b, err := os.ReadFile("gen/es_surnames.json")
	if err != nil {
		g.err = fmt.Errorf("spanish surnames: %v", err)
		return nil
	}
	var ranked []string
	if err := json.Unmarshal(b, &ranked); err != nil {
		g.err = fmt.Errorf("gen/es_surnames.json: %v", err)
		return nil
	}
	written := map[string]string{}
	for _, n := range faker {
		if fixed, ok := spellingES[n]; ok {
			n = fixed
		}
		written[foldES(n)] = n
	}
	const top, floor = 2.9, 500 / 47e6 * 100
	exp := math.Log(top/floor) / math.Log(float64(len(ranked)))
	var out []string
	seen := map[string]bool{}
	for i, n := range ranked {
		if strings.ContainsAny(n, " -'") || n == "" || seen[n] || titleWords[n] {
			continue
		}
		seen[n] = true
		name, ok := written[foldES(n)]
		if !ok {
			name, ok = stressedES[n]
		}
		if !ok {
			name = accented(strings.ToUpper(n[:1]) + n[1:])
		}
		out = append(out, name+"\t"+strconv.FormatFloat(top*math.Pow(float64(i+1), -exp), 'f', 5, 64))
	}
	return out
}

// stressedES are surnames of INE's list whose accent no ending tells,
// stressed on the third syllable from the end ("Lázaro", "Expósito") or on
// the last before an s ("Ginés"), which the notes write with it (issue 62:
// "Exposito", "Lazaro" gave surrogates away).
var stressedES = map[string]string{
	"lazaro": "Lázaro", "arevalo": "Arévalo", "camara": "Cámara", "canovas": "Cánovas", "cespedes": "Céspedes",
	"rodenas": "Ródenas", "alamo": "Álamo", "barcena": "Bárcena", "barcenas": "Bárcenas", "paramo": "Páramo",
	"tortola": "Tórtola", "jativa": "Játiva", "exposito": "Expósito", "abalos": "Ábalos", "agueda": "Águeda",
	"angeles": "Ángeles", "alava": "Álava", "fabregas": "Fábregas", "gomara": "Gómara", "marmol": "Mármol",
	"mugica": "Múgica", "rabago": "Rábago", "tarrega": "Tárrega", "tebar": "Tébar", "ubeda": "Úbeda",
	"zarate": "Zárate", "aguila": "Águila", "alvaro": "Álvaro", "gongora": "Góngora", "gines": "Ginés",
	"quiros": "Quirós", "aragones": "Aragonés", "frances": "Francés",
}

// titleWords are surnames a reader of a name takes for a title or a
// particle ("Doña Pilar", "Frau Weber", "Du Bois"): as a surrogate they
// would be read as no name.
var titleWords = map[string]bool{"doña": true, "don": true, "frau": true, "du": true, "dame": true, "sir": true}

// foldES lower-cases a name and drops its acute accents (ñ stays, as INE
// writes it).
func foldES(s string) string {
	return strings.NewReplacer("á", "a", "é", "e", "í", "i", "ó", "o", "ú", "u", "ü", "u").Replace(strings.ToLower(s))
}

// accented writes the accent Spanish spelling gives a surname by its ending:
// a patronymic in -ez is stressed on the vowel before it ("Díez", "Sáez",
// "Benítez", "Gutiérrez"); a name of two syllables or more in -án, -ón or
// -ín is stressed on its last ("Galán", "Calderón", "Martín"). Others are
// left as they are (most are paroxytone without an accent).
func accented(n string) string {
	r := []rune(n)
	if len(r) < 4 {
		return n
	}
	tail := string(r[len(r)-2:])
	switch {
	case strings.HasSuffix(n, "ias") && !strings.HasSuffix(n, "guias") && !strings.HasSuffix(n, "quias") && n != "Dias" && n != "Tapias":
		// A hiatus: "Mejías", "Herrerías", "Macías" (not Portuguese "Dias",
		// nor "Tapias", of "tapia").
		return string(r[:len(r)-3]) + "ías"
	case tail == "ez":
		return markVowel(r, len(r)-3)
	case tail == "an" || tail == "on" || tail == "in":
		if vowels(r[:len(r)-2]) == 0 {
			return n
		}
		return markVowel(r, len(r)-2)
	}
	return n
}

// markVowel puts an acute accent on the last vowel at or before index i
// (a u after g or q is silent: "Domínguez").
func markVowel(r []rune, i int) string {
	acute := map[rune]rune{'a': 'á', 'e': 'é', 'i': 'í', 'o': 'ó', 'u': 'ú'}
	for ; i >= 0; i-- {
		if r[i] == 'u' && i > 0 && (r[i-1] == 'g' || r[i-1] == 'q') {
			continue
		}
		if a, ok := acute[r[i]]; ok {
			r[i] = a
			return string(r)
		}
	}
	return string(r)
}

func vowels(r []rune) int {
	n := 0
	for _, c := range r {
		if strings.ContainsRune("aeiouáéíóú", c) {
			n++
		}
	}
	return n
}
