package phi

import "sync"

// toI2B2Mappings are the built-in mappings from another tag set to i2b2
// 2014 (not i2b2-hipaa, whose source is i2b2 itself), in name order.
var toI2B2Mappings = sync.OnceValue(func() []*Mapping {
	var maps []*Mapping
	for _, name := range BuiltinMappings() {
		m, err := ResolveMapping(name, "", "")
		if err != nil {
			panic("phi: built-in mapping " + name + ": " + err.Error()) // TestBuiltinMappingsLoad
		}
		if m.To == I2B22014 && m.From != I2B22014 {
			maps = append(maps, m)
		}
	}
	return maps
})

// ToI2B2 returns the i2b2 2014 label of a label of any tag set this package
// knows, so that what is defined on i2b2 categories (which spans are names,
// say) holds for every corpus: an i2b2 label is itself (an empty category
// matches by type); any other is mapped by the first built-in mapping to
// i2b2-2014 with a rule of its own for it (CCHMC, MEDDOCAN, MIMIC
// placeholders, PhysioNet: MEDDOCAN's NAME/NOMBRE_SUJETO_ASISTENCIA, or
// NOMBRE_SUJETO_ASISTENCIA alone as its BRAT files give it, is NAME/PATIENT).
// ok is false for a label no mapping names, or one its mapping drops.
func ToI2B2(category, typ string) (cat, newType string, ok bool) {
	if c, known := i2b2.byType[typ]; known && (category == "" || category == c) {
		return c, typ, true
	}
	for _, m := range toI2B2Mappings() {
		if !m.Names(category, typ) {
			continue
		}
		c, t, keep, err := m.Map(category, typ)
		if err != nil || !keep {
			return "", "", false
		}
		return c, t, true
	}
	return "", "", false
}
