package surrogate

import (
	"slices"
	"testing"

	"deidcorpus/pipeline/synth"
)

// A frozen value set answers every lookup as the set it was made from, and
// the union of sets as one set of all their values (not their words): the
// values, multi-token prefixes, name words and short upper-case values of
// synthetic patients, probed with every value, word and prefix of theirs and
// of other patients, and with candidates that extend or cut them.
func TestFrozenValueSetAnswersAsItsMaps(t *testing.T) {
	var sets []*valueSet
	var probes []string
	if err := synth.Generate(synth.Options{Patients: 40, Seed: 5}, func(p synth.Patient) error {
		v := newValueSet()
		for _, d := range p.Docs {
			for _, sp := range d.Spans {
				v.add(sp.Text)
				if sp.Category == "NAME" {
					for _, w := range nameWords(sp.Text, "en") {
						v.addWord(w)
					}
				}
				probes = append(probes, sp.Text, "Dr. "+sp.Text, sp.Text+" Jr", sp.Text[:len(sp.Text)/2], "in "+sp.Text+" today")
			}
		}
		v.add("IN")
		sets = append(sets, v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	probes = append(probes, "IN", "in", "Indiana", "", "  ", "ünïcode Straße")
	for i, v := range sets {
		frozen := &valueSet{longest: v.longest, m: v.m, prefix: v.prefix, words: v.words, exact: v.exact}
		frozen.freeze()
		if frozen.m != nil || frozen.prefix != nil || len(frozen.hashes) == 0 {
			t.Fatalf("set %d: not frozen", i)
		}
		for _, c := range probes {
			if got, want := frozen.within(c), v.within(c); got != want {
				t.Errorf("set %d: within(%q) = %v frozen, %v as maps", i, c, got, want)
			}
			if got, want := frozen.has(c), v.has(c); got != want {
				t.Errorf("set %d: has(%q) = %v frozen, %v as maps", i, c, got, want)
			}
			f := fold(c)
			if got, want := frozen.hasToken(f), v.hasToken(f); got != want {
				t.Errorf("set %d: hasToken(%q) = %v frozen, %v as maps", i, f, got, want)
			}
			if got, want := frozen.abbreviation(f, c), v.abbreviation(f, c); got != want {
				t.Errorf("set %d: abbreviation(%q) = %v frozen, %v as maps", i, c, got, want)
			}
		}
	}
	union, all := newUnion(), newValueSet()
	for _, v := range sets {
		union.merge(v)
		for k := range v.m {
			all.m[k] = true
		}
		for k := range v.prefix {
			all.prefix[k] = true
		}
		for k := range v.exact {
			all.exact[k] = true
		}
		all.longest = max(all.longest, v.longest)
	}
	held := 0
	for _, c := range probes {
		if got, want := union.within(c), all.within(c); got != want {
			t.Errorf("union: within(%q) = %v, %v as maps", c, got, want)
		} else if got {
			held++
		}
		if got, want := union.has(c), all.has(c); got != want {
			t.Errorf("union: has(%q) = %v, %v as maps", c, got, want)
		}
		if f := fold(c); union.hasToken(f) != all.hasToken(f) {
			t.Errorf("union: hasToken(%q) = %v, %v as maps", f, union.hasToken(f), all.hasToken(f))
		}
	}
	if held == 0 || held == len(probes) {
		t.Fatalf("union: %d of %d probes within: the probes test nothing", held, len(probes))
	}
	var empty valueSet
	empty.freeze()
	if empty.within("anything") || empty.has("x") {
		t.Error("an empty frozen set holds something")
	}
}

// The words of a name that surrogates replace one by one: a particle is not
// one, at the start, in lower case or after a word of the name, so that
// "Fernández De la Puebla" becomes "Ureña De la Holguín" and not "Horacio la
// Agosto", and an address's "de" is no word of its patient's name.
func TestNameWordsLeaveParticles(t *testing.T) {
	for name, want := range map[string][]string{
		"Tania Fernandez De la Puebla": {"tania", "fernandez", "puebla"},
		"De Miguel Rivera":             {"miguel", "rivera"},
		"María Del Carmen Ruiz":        {"maria", "carmen", "ruiz"},
		"Ramón y Cajal":                {"ramon", "cajal"},
		"Dr. De Miguel":                {"de", "miguel"}, // after a title: maybe a surname
		// A particle's word that ends a name, or comes before its comma,
		// is a surname.
		"Ellen Du":         {"ellen", "du"},
		"Tony La, MD":      {"tony", "la"},
		"Du, Ellen":        {"du", "ellen"},
		"Lucia De":         {"lucia", "de"},
		"Minh Van Jr.":     {"minh", "van"},
		"Ana de la Torre":  {"ana", "torre"},
		"Juan de Dios, Sr": {"juan", "dios"},
	} {
		if got := nameWords(name, "es"); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", name, got, want)
		}
	}
}
