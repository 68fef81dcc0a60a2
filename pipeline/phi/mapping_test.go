package phi

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"deidcorpus/pipeline"
)

func TestBuiltinMappingsLoad(t *testing.T) {
	names := BuiltinMappings()
	want := []string{"cchmc-i2b2", "i2b2-cchmc", "i2b2-hipaa", "meddocan-i2b2", "mimic-i2b2", "physionet-i2b2"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("BuiltinMappings = %v, want %v", names, want)
	}
	for _, n := range names {
		m, err := LoadMapping(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if m.Name != n || !strings.HasPrefix(m.Hash, "sha256:") || len(m.Hash) != 71 {
			t.Errorf("%s: name %q hash %q", n, m.Name, m.Hash)
		}
	}
}

// mapsTotally checks that a mapping has a rule (not the error default) for
// every type of its source tag set.
func mapsTotally(t *testing.T, name string, from *TagSet) {
	t.Helper()
	m, err := LoadMapping(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range from.Categories {
		for _, typ := range c.Types {
			if _, _, _, err := m.Map(c.Name, typ); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

func TestMappingsAreTotal(t *testing.T) {
	mapsTotally(t, "meddocan-i2b2", MEDDOCAN())
	mapsTotally(t, "i2b2-cchmc", I2B2())
	mapsTotally(t, "physionet-i2b2", PhysioNet())
}

func TestHIPAAMappingKeepsThePaperSubset(t *testing.T) {
	m, err := LoadMapping("i2b2-hipaa")
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, c := range I2B2().Categories {
		for _, typ := range c.Types {
			cat, got, keep, err := m.Map(c.Name, typ)
			if err != nil {
				t.Fatal(err)
			}
			if keep {
				if cat != c.Name || got != typ {
					t.Errorf("%s/%s became %s/%s", c.Name, typ, cat, got)
				}
				kept[typ] = true
			}
		}
	}
	if !reflect.DeepEqual(kept, HIPAATypes(true)) {
		t.Errorf("kept %v, want %v", SortedKeys(kept), SortedKeys(HIPAATypes(true)))
	}
}

func TestCCHMCMappingMergesAndDrops(t *testing.T) {
	m, err := LoadMapping("i2b2-cchmc")
	if err != nil {
		t.Fatal(err)
	}
	doc := pipeline.Document{ID: "1-01", Text: "Dr. Lee saw Ann Ho, a lawyer, at MGH.", Spans: []pipeline.Span{
		{Start: 4, End: 7, Category: "NAME", Type: "DOCTOR"},
		{Start: 12, End: 18, Category: "NAME", Type: "PATIENT"},
		{Start: 22, End: 28, Category: "PROFESSION", Type: "PROFESSION"},
		{Start: 33, End: 36, Category: "LOCATION", Type: "HOSPITAL"},
	}}
	before := append([]pipeline.Span(nil), doc.Spans...)
	got, err := m.Apply(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(doc.Spans, before) {
		t.Error("Apply modified its input")
	}
	var labels []string
	for _, s := range got.Spans {
		labels = append(labels, s.Label())
	}
	if want := []string{"NAME", "NAME", "INSTITUTION"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
	if err := got.Validate(false); err != nil {
		t.Error(err)
	}
}

func TestMappingRuleSpecificity(t *testing.T) {
	m, err := ParseMapping("t", []byte(`
@default keep
LOCATION/*      PLACE          # merge a category
LOCATION/CITY   TOWN           # but a category/type rule wins
HOSPITAL        -              # and so does a type rule
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ cat, typ, want string }{
		{"LOCATION", "STREET", "PLACE"},
		{"LOCATION", "CITY", "TOWN"},
		{"LOCATION", "HOSPITAL", ""},
		{"NAME", "DOCTOR", "NAME/DOCTOR"},
	} {
		cat, typ, keep, err := m.Map(c.cat, c.typ)
		got := ""
		if keep {
			got = pipeline.Span{Category: cat, Type: typ}.Label()
		}
		if err != nil || got != c.want {
			t.Errorf("Map(%s, %s) = %q, %v; want %q", c.cat, c.typ, got, err, c.want)
		}
	}
}

func TestMappingErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"@from i2b2-2014\nDOCTORS NAME\n", "t:2: source DOCTORS: no type DOCTORS in tag set i2b2-2014"},
		{"@from i2b2-2014\nLOCATION/DOCTOR NAME\n", "t:2: source LOCATION/DOCTOR: type DOCTOR belongs to category NAME"},
		{"@to i2b2-2014\nX NAME/HOSPITAL\n", "t:2: target NAME/HOSPITAL: type HOSPITAL belongs to category LOCATION, not NAME"},
		{"@to i2b2-2014\nX NOPE\n", `t:2: target NOPE: unknown type "NOPE"`},
		{"A B\nA C\n", "t:2: source A already mapped on line 1"},
		{"A B C\n", "t:1: want 2 fields"},
		{"@colour red\n", "t:1: unknown directive @colour"},
		{"A B\n@to i2b2-2014\n", "t:2: directive @to must come before the first rule"},
		{"@to i2b2-14\nDATE DATEE\n", "t:1: @to: unknown tag set \"i2b2-14\" (known: i2b2-2014, meddocan, open, cchmc, physionet)"},
		{"@from medocan\nFECHAS DATE\n", "t:1: @from: unknown tag set \"medocan\"; did you mean meddocan?"},
		{"# nothing\n", "t: no rules and no @default"},
		{"@default maybe/\n", "t:1: @default: want TYPE"},
		{"A \xff\n", "t: not UTF-8 text"},
	}
	for _, c := range cases {
		_, err := ParseMapping("t", []byte(c.text))
		var me *MappingError
		if err == nil || !errors.As(err, &me) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.text, err, c.want)
		}
	}
}

// A mapping may name the open tag set as its source or target: it checks no
// label there.
func TestMappingOpenTagSet(t *testing.T) {
	m, err := ParseMapping("t", []byte("@from open\n@to open\nFECHAS DATE\n"))
	if err != nil || m.From != "open" || m.To != "open" {
		t.Fatalf("ParseMapping: %+v, %v", m, err)
	}
	if cat, typ, keep, err := m.Map("", "FECHAS"); err != nil || !keep || cat != "DATE" || typ != "DATE" {
		t.Errorf("Map(FECHAS) = %s/%s %v %v", cat, typ, keep, err)
	}
}

func TestLoadMappingFromFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "names.map")
	if err := os.WriteFile(p, []byte("@default keep\nPATIENT NAME\nDOCTOR NAME\nBAD\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadMapping(p)
	if err == nil || !strings.Contains(err.Error(), p+":4: want 2 fields") {
		t.Fatalf("error %v does not name the file and line", err)
	}
	if err := os.WriteFile(p, []byte("@default keep\nPATIENT NAME\nDOCTOR NAME\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadMapping(p)
	if err != nil || m.Name != "names" || m.Label != p {
		t.Fatalf("LoadMapping: %v %v", m, err)
	}
	doc := pipeline.Document{Text: "Ann", Spans: []pipeline.Span{{Start: 0, End: 3, Category: "NAME", Type: "PATIENT"}}}
	_, err = (&Mapping{Name: "strict"}).Apply(doc)
	if err == nil || !strings.Contains(err.Error(), "mapping strict has no rule for label NAME/PATIENT") {
		t.Errorf("strict mapping: %v", err)
	}
	if _, err := LoadMapping("no-such-mapping"); err == nil || !strings.Contains(err.Error(), "meddocan-i2b2") {
		t.Errorf("unknown mapping: %v", err)
	}
}

// TestResolveMapping: the one reading of a mapping argument takes a
// built-in name or a file's text, never a path, and never guesses.
func TestResolveMapping(t *testing.T) {
	m, err := ResolveMapping("i2b2-hipaa", "", "")
	if err != nil || m.Name != "i2b2-hipaa" {
		t.Fatalf("built-in: %v %v", m, err)
	}
	m, err = ResolveMapping("", "@default keep\n", "rules/mine.map")
	if err != nil || m.Name != "mine" {
		t.Fatalf("text: %v %v", m, err)
	}
	if m, err := ResolveMapping("", "", ""); m != nil || err != nil {
		t.Fatalf("neither: %v %v", m, err)
	}
	for _, bad := range [][2]string{{"/etc/passwd", ""}, {"../phi/mappings/i2b2-hipaa", ""}, {"i2b2-hipaa", "@default keep"}, {"@default keep\n", ""}} {
		if _, err := ResolveMapping(bad[0], bad[1], "x"); err == nil {
			t.Errorf("ResolveMapping(%q, %q) = nil error", bad[0], bad[1])
		}
	}
	_, err = ResolveMapping("", "NAME NOPE/ /", "uploaded")
	var me *MappingError
	if !errors.As(err, &me) || me.File != "uploaded" || me.Line != 1 {
		t.Fatalf("a bad text names its label and line: %v", err)
	}
}

// FuzzParseMapping: any text (what GraphQL's mappingText receives) parses or
// fails with a MappingError, never panics; a mapping that parses maps every
// label without panicking, the same way on a second parse.
func FuzzParseMapping(f *testing.F) {
	for _, name := range BuiltinMappings() {
		data, err := builtinFS.ReadFile("mappings/" + name + ".map")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("@default keep\nNAME/*  NAME/NAME\n")
	f.Add("@from i2b2-2014\n@to cchmc\nAGE = # keep\nID -\n")
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParseMapping("fuzz", []byte(text))
		if err != nil {
			var me *MappingError
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a MappingError", err)
			}
			return
		}
		again, err := ParseMapping("fuzz", []byte(text))
		if err != nil || again.Hash != m.Hash {
			t.Fatalf("a second parse differs: %v", err)
		}
		doc := pipeline.Document{ID: "d", Text: "Dr. Ann Lee, 54, Boston"}
		for i, label := range [][2]string{{"NAME", "DOCTOR"}, {"AGE", "AGE"}, {"LOCATION", "CITY"}, {"X", "Y"}} {
			c1, t1, k1, e1 := m.Map(label[0], label[1])
			c2, t2, k2, e2 := again.Map(label[0], label[1])
			if c1 != c2 || t1 != t2 || k1 != k2 || (e1 == nil) != (e2 == nil) {
				t.Fatalf("%v maps differently on a second parse", label)
			}
			doc.Spans = append(doc.Spans, pipeline.Span{Start: i, End: i + 1, Category: label[0], Type: label[1]})
		}
		doc.FillText()
		m.Apply(doc)
	})
}
