package main

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The Spanish pack (data/es) is derived from faker's es locale: its first
// names by sex, surnames, cities, provinces, regions, street types, company
// patterns and free e-mail providers. Faker gives no frequencies, so every
// name is drawn with the same weight, and no postal codes: a Spanish postal
// code is the province's two-digit number and three more digits, so each
// city is written with its province's number (the table below, public
// knowledge) and surrogates add the other three.

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

// spellingES corrects the misspellings of faker's es lists ("" drops a name).
var spellingES = map[string]string{
	"lérida": "Lérida", "Cuenta": "Cuenca", "San Sebastían de los Reyes": "San Sebastián de los Reyes",
	"El Prat de LLobregat": "El Prat de Llobregat", "Hospitalet de LLobregat": "Hospitalet de Llobregat",
	"San Cristróbal de la Laguna": "San Cristóbal de La Laguna", "Aýna": "Ayna",
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
	uniform := func(names []string) []string {
		var out []string
		share := strconv.FormatFloat(100/float64(len(names)), 'f', 4, 64)
		for _, n := range names {
			out = append(out, n+"\t"+share)
		}
		return out
	}
	female, male, last := d.Person.FirstName.Female, d.Person.FirstName.Male, d.Person.LastName.Generic
	g.write("es/first_female.tsv", uniform(female))
	g.write("es/first_male.tsv", uniform(male))
	g.write("es/surnames.tsv", uniform(last))
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
		states = append(states, p+"\t"+code)
	}
	g.write("es/states.tsv", states)
	g.write("es/regions.txt", d.Location.State)

	var cities []string
	for _, c := range d.Location.CityName {
		c = fixES(c)
		p, ok := cityProvince[c]
		if !ok {
			g.err = fmt.Errorf("faker-es: city %q has no province", c)
			return
		}
		cities = append(cities, c+"\t"+p+"\t"+provinceCodes[p])
	}
	g.write("es/zipcodes.tsv", cities)

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

	// Streets after faker's patterns "{{street_suffix}} {{firstName}}" and
	// "{{street_suffix}} {{firstName}} {{lastName}}", and "de {{city}}".
	first := append(append([]string{}, female...), male...)
	streets := map[string]bool{}
	typ := func(i int) string { return streetTypesES[i%len(streetTypesES)] }
	for i, fn := range first {
		streets[fn+"\t"+typ(i)] = true
		for k := 0; k < 4; k++ {
			streets[fn+" "+last[(i*37+k*151)%len(last)]+"\t"+typ(i+k+1)] = true
		}
	}
	for i, c := range d.Location.CityName {
		streets["de "+fixES(c)+"\t"+typ(i+3)] = true
	}
	g.write("es/streets.tsv", sortedKeys(streets))

	// Hospitals and health centres named as Spain's are: after a place, or a person.
	hospitals := map[string]bool{}
	for i, c := range d.Location.CityName {
		c = fixES(c)
		p := cityProvince[c]
		for _, pattern := range []string{"Hospital General de %s", "Hospital Universitario de %s", "Centro de Salud %s",
			"Hospital Comarcal de %s", "Hospital Clínico de %s"} {
			hospitals[fmt.Sprintf(pattern, c)+"\t"+c+"\t"+p] = true
		}
		fn, ln := male[i%len(male)], last[(i*53)%len(last)]
		hospitals["Hospital Universitario "+fn+" "+ln+"\t"+c+"\t"+p] = true
		hospitals["Centro de Salud "+female[i%len(female)]+" "+last[(i*71+5)%len(last)]+"\t"+c+"\t"+p] = true
	}
	for _, p := range provinces {
		p = fixES(p)
		hospitals["Complejo Hospitalario de "+p+"\t"+p+"\t"+p] = true
	}
	g.write("es/hospitals.tsv", sortedKeys(hospitals))

	// Organizations after faker's company patterns, and institutions after places.
	orgs := map[string]bool{}
	for i, ln := range last {
		other := last[(i*29+7)%len(last)]
		switch i % 4 {
		case 0:
			orgs[ln+" y "+other] = true
		case 1:
			orgs[ln+" "+d.Company.LegalEntityType[i%len(d.Company.LegalEntityType)]] = true
		case 2:
			orgs[ln+" "+other+" "+d.Company.LegalEntityType[(i/4)%len(d.Company.LegalEntityType)]] = true
		case 3:
			orgs["Fundación "+first[i%len(first)]+" "+ln] = true
		}
	}
	for _, c := range d.Location.CityName {
		orgs["Universidad de "+fixES(c)] = true
	}
	for _, p := range provinces {
		orgs["Instituto de Salud de "+fixES(p)] = true
	}
	g.write("es/organizations.txt", sortedKeys(orgs))
	g.write("free_email.txt", d.Internet.FreeEmail)
	g.write("es/domain_suffixes.txt", d.Internet.DomainSuffix)
}
