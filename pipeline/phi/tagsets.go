package phi

// Tag sets of other corpora, known so that mapping files can be checked
// against them and, for MEDDOCAN, which a corpus may declare, so that
// readers can recover a type's category (MEDDOCAN's BRAT files carry only the
// type; its XML files carry both).
const (
	MEDDOCANName  = "meddocan"
	CCHMCName     = "cchmc"
	PhysioNetName = "physionet"
)

// meddocan is the MEDDOCAN tag set (Marimon et al. 2019) with the categories
// its XML files put on each type. The last types of ID and CONTACT are in the
// annotation guidelines but occur in neither train nor dev.
var meddocan = newTagSet(MEDDOCANName, []Category{
	{"NAME", []string{"NOMBRE_SUJETO_ASISTENCIA", "NOMBRE_PERSONAL_SANITARIO"}},
	{"PROFESSION", []string{"PROFESION"}},
	{"LOCATION", []string{"CALLE", "TERRITORIO", "PAIS", "HOSPITAL", "CENTRO_SALUD", "INSTITUCION"}},
	{"AGE", []string{"EDAD_SUJETO_ASISTENCIA"}},
	{"DATE", []string{"FECHAS"}},
	{"CONTACT", []string{"CORREO_ELECTRONICO", "NUMERO_TELEFONO", "NUMERO_FAX", "URL_WEB", "DIREC_PROT_INTERNET"}},
	{"ID", []string{"ID_SUJETO_ASISTENCIA", "ID_ASEGURAMIENTO", "ID_CONTACTO_ASISTENCIAL", "ID_TITULACION_PERSONAL_SANITARIO",
		"ID_EMPLEO_PERSONAL_SANITARIO", "NUMERO_BENEF_PLAN_SALUD", "IDENTIF_VEHICULOS_NRSERIE_PLACAS",
		"IDENTIF_DISPOSITIVOS_NRSERIE", "IDENTIF_BIOMETRICOS", "OTRO_NUMERO_IDENTIF"}},
	{"OTHER", []string{"SEXO_SUJETO_ASISTENCIA", "FAMILIARES_SUJETO_ASISTENCIA", "OTROS_SUJETO_ASISTENCIA"}},
})

// cchmc is the 12-class set of the CCHMC corpus (Deleger et al. 2014, section
// 2.1): flat, every class its own category.
var cchmc = flatTagSet(CCHMCName, "NAME", "DATE", "AGE", "EMAIL", "INITIALS", "INSTITUTION", "IPADDRESS",
	"LOCATION", "PHONE", "SSN", "IDNUM", "OTHER")

// physionet is the class set of PhysioNet deid 1.1's id-phi.phrase file
// (Neamatullah et al. 2008).
var physionet = flatTagSet(PhysioNetName, "PTName", "PTNameInitial", "RelativeProxyName", "HCPName", "Date",
	"DateYear", "Age", "Location", "Phone", "Other")

func flatTagSet(name string, types ...string) *TagSet {
	cats := make([]Category, len(types))
	for i, t := range types {
		cats[i] = Category{Name: t, Types: []string{t}}
	}
	return newTagSet(name, cats)
}

// MEDDOCAN returns the MEDDOCAN tag set.
func MEDDOCAN() *TagSet { return meddocan }

// CCHMC returns the CCHMC 12-class tag set.
func CCHMC() *TagSet { return cchmc }

// PhysioNet returns the PhysioNet deid class set.
func PhysioNet() *TagSet { return physionet }

// mappingTagSets are the names a mapping's @from and @to may give: the tag
// sets a corpus may declare and those only a mapping names.
func mappingTagSets() []string { return append(Names(), CCHMCName, PhysioNetName) }

// knownTagSet finds any tag set this package defines, including those a corpus
// cannot declare but a mapping may name as its source or target; "open" is
// known and has no definition (nil).
func knownTagSet(name string) (*TagSet, bool) {
	if ts, ok := Lookup(name); ok {
		return ts, true // nil for open
	}
	switch name {
	case CCHMCName:
		return cchmc, true
	case PhysioNetName:
		return physionet, true
	}
	return nil, false
}
