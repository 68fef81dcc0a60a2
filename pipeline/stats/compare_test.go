package stats

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/phi"
)

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// A 2 x 2 table worked by hand: N = 100, expected 12, 18, 28, 42; with one
// degree of freedom the p-value is erfc(sqrt(x/2)).
func TestPearsonChiSquareTwoByTwo(t *testing.T) {
	cs, cells := PearsonChiSquare([]string{"x", "y", "z"}, []int{10, 20, 0}, []int{30, 40, 0})
	x := 4.0/12 + 4.0/18 + 4.0/28 + 4.0/42
	near(t, "statistic", cs.Statistic, x)
	near(t, "p", cs.P, math.Erfc(math.Sqrt(x/2)))
	if cs.DOF != 1 || cs.N != 100 || cs.Groups != 2 || !slices.Equal(cs.Dropped, []string{"z"}) {
		t.Errorf("dof %d, n %d, groups %d, dropped %v; want 1, 100, 2, [z]", cs.DOF, cs.N, cs.Groups, cs.Dropped)
	}
	near(t, "expected B of x", cells[0].ExpectedB, 28)
	// In a 2 x 2 table each adjusted residual squared is the statistic.
	near(t, "residual^2", cells[0].Residual*cells[0].Residual, x)
	near(t, "cell p", cells[0].P, cs.P)
	if cells[0].Residual <= 0 || cells[1].Residual >= 0 {
		t.Errorf("B has more x than expected (30 > 28): residuals %v, %v", cells[0].Residual, cells[1].Residual)
	}
	near(t, "min expected", cs.MinExpected, 12)
}

// With two degrees of freedom the chi-square survival function is
// exp(-x/2); each group's squared residual is the chi-square of the 2 x 2
// table of that group against the others.
func TestPearsonChiSquareThreeGroups(t *testing.T) {
	a, b := []int{10, 20, 30}, []int{20, 20, 20}
	cs, cells := PearsonChiSquare([]string{"x", "y", "z"}, a, b)
	near(t, "p", cs.P, math.Exp(-cs.Statistic/2))
	sum := 0.0
	for i := range cells {
		sum += cells[i].Contribution
		rest := func(v []int) int { return v[0] + v[1] + v[2] - v[i] }
		two, _ := PearsonChiSquare([]string{"g", "rest"}, []int{a[i], rest(a)}, []int{b[i], rest(b)})
		near(t, "residual^2 against the rest", cells[i].Residual*cells[i].Residual, two.Statistic)
	}
	near(t, "sum of contributions", sum, cs.Statistic)
}

func TestPearsonChiSquareDegenerate(t *testing.T) {
	cs, _ := PearsonChiSquare([]string{"x"}, []int{5}, []int{7})
	if cs.DOF != 0 || cs.P != 1 || cs.Statistic != 0 {
		t.Errorf("one group: %+v, want dof 0, p 1", cs)
	}
	cs, _ = PearsonChiSquare([]string{"x", "y"}, []int{0, 0}, []int{3, 4})
	if cs.Statistic != 0 || cs.P != 1 || math.IsNaN(cs.Statistic) {
		t.Errorf("an empty corpus: %+v, want statistic 0, p 1", cs)
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"PÉREZ": "pérez", "Pérez": "pérez", "ΣΟΦΊΑ": "σοφία", "ς": "σ", "Straße": "straße", "K": "k", "ſ": "s", "12/03": "12/03",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

// The vocabulary's tokens are strings.Fields' (the stored token counts'),
// folded: the odd white space of clinical text included.
func TestVocabularyTokensAreFields(t *testing.T) {
	text := "Dr.\u00a0Pérez  vio\ta la\u2003PACIENTE\n\n(45 años),\u0085la paciente\u3000Ёлка ёлка "
	v := NewVocabulary()
	v.AddText([]byte(text))
	want := map[string]int{}
	for _, f := range strings.Fields(text) {
		want[strings.ToLower(strings.ToUpper(f))]++
	}
	if v.Total() != len(strings.Fields(text)) || v.Len() != len(want) {
		t.Fatalf("%d tokens, %d distinct; want %d, %d", v.Total(), v.Len(), len(strings.Fields(text)), len(want))
	}
	for term, n := range want {
		if v.Count(term) != n {
			t.Errorf("%q: %d, want %d", term, v.Count(term), n)
		}
	}
}

func TestCompare(t *testing.T) {
	a, _ := NewSide("a", "gold", ByType)
	b, _ := NewSide("b", "gold", ByType)
	a.AddDocument([]byte("Ana Pérez vino"))
	b.AddDocument([]byte("ANA pérez volvió ayer"))
	addSpans(a, "NAME", "PATIENT", "Ana Pérez", 3)
	addSpans(a, "NAME", "PATIENT", "Pérez, Ana", 1)
	addSpans(a, "DATE", "DATE", "ayer", 2)
	addSpans(b, "NAME", "PATIENT", "ANA PÉREZ", 1)
	addSpans(b, "NAME", "DOCTOR", "Luis", 2)
	addSpans(b, "LOCATION", "CITY", "Ayer", 1) // a date text in A: not OOV
	c, err := Compare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	o := c.OOV
	if o.Tokens != 4 || o.OOVTokens != 2 || o.TokenTypes != 4 || o.OOVTokenTypes != 2 {
		t.Errorf("token OOV %+v: want 2 of 4 tokens", o)
	}
	if o.Spans != 4 || o.OOVSpans != 2 || o.PHITexts != 3 || o.OOVPHITexts != 1 {
		t.Errorf("PHI OOV %+v: want 2 of 4 spans, 1 of 3 texts", o)
	}
	var groups []string
	for _, g := range c.Groups {
		groups = append(groups, g.Category+"/"+g.Group)
	}
	if want := []string{"DATE/DATE", "LOCATION/CITY", "NAME/DOCTOR", "NAME/PATIENT"}; !slices.Equal(groups, want) {
		t.Errorf("groups %v, want %v", groups, want)
	}
	if g := c.Groups[2]; g.PHIOOVRate != 1 || g.OOVSpans != 2 || g.A.Total != 0 || g.B.Total != 2 {
		t.Errorf("NAME/DOCTOR %+v", g)
	}
	if c.ChiSquare.DOF != 3 || c.A.NameSpans != 4 || c.B.NameSpans != 3 {
		t.Errorf("dof %d, name spans %d and %d; want 3, 4, 3", c.ChiSquare.DOF, c.A.NameSpans, c.B.NameSpans)
	}
	want := []PatternPair{{"AAA AAA", 2, 3, 1}, {"AAA, AAA", 2, 1, 0}, {"AAA", 1, 0, 2}}
	if !slices.Equal(c.NamePatterns, want) {
		t.Errorf("name patterns %+v, want %+v", c.NamePatterns, want)
	}
	if _, err := NewSide("a", "gold", "split"); err == nil {
		t.Error("grouping by split accepted")
	}
}

// Names are the labels that map to the i2b2 category NAME, whatever the tag
// set calls them, and only those.
func TestIsName(t *testing.T) {
	for _, c := range []struct {
		category, typ string
		want          bool
	}{
		{"NAME", "PATIENT", true},
		{"NAME", "USERNAME", true},
		{"NAME", "NOMBRE_SUJETO_ASISTENCIA", true},                       // MEDDOCAN's XML
		{"NOMBRE_PERSONAL_SANITARIO", "NOMBRE_PERSONAL_SANITARIO", true}, // its BRAT, open tag set
		{"", "NOMBRE_SUJETO_ASISTENCIA", true},
		{"FAMILIARES_SUJETO_ASISTENCIA", "FAMILIARES_SUJETO_ASISTENCIA", false}, // OTHER in i2b2
		{"PTName", "PTName", true},
		{"HCPName", "HCPName", true},
		{"INITIALS", "INITIALS", true},                      // CCHMC
		{"HOSPITAL_WARD_NAME", "HOSPITAL_WARD_NAME", false}, // a MIMIC place
		{"LAST_NAME", "LAST_NAME", true},
		{"LOCATION", "HOSPITAL", false},
		{"NAME", "RELATIVE", true}, // no mapping knows it: its category says
		{"FOO_NAME", "FOO_NAME", false},
	} {
		if got := IsName(c.category, c.typ); got != c.want {
			t.Errorf("IsName(%q, %q) = %v, want %v", c.category, c.typ, got, c.want)
		}
	}
	s, _ := NewSide("meddocan", "gold", ByType)
	addSpans(s, "NOMBRE_SUJETO_ASISTENCIA", "NOMBRE_SUJETO_ASISTENCIA", "Ernesto Rivera Bueno", 2)
	addSpans(s, "NOMBRE_PERSONAL_SANITARIO", "NOMBRE_PERSONAL_SANITARIO", "Ignacio Navarro Cuéllar", 1)
	addSpans(s, "TERRITORIO", "TERRITORIO", "Madrid", 4)
	if want := map[string]int{"Ernesto Rivera Bueno": 2, "Ignacio Navarro Cuéllar": 1}; !maps.Equal(s.Names, want) {
		t.Errorf("names %v, want %v", s.Names, want)
	}
}

// MEDDOCAN's names, read from its BRAT files into an open tag set (the
// category is the type) and from its XML files (category NAME), are the
// README's 2,009 in train and 1,000 in dev either way.
func TestMEDDOCANNameSpans(t *testing.T) {
	open := formats.ReadOptions{Label: func(c, typ string) (string, string, error) { return phi.Normalize(nil, c, typ) }}
	for _, c := range []struct {
		split string
		want  int
	}{{"train", 2009}, {"dev", 1000}} {
		for _, f := range []struct {
			dir  string
			read func([]formats.File, formats.ReadOptions) ([]pipeline.Document, error)
		}{{"brat", formats.ReadBRAT}, {"xml", formats.ReadI2B2}} {
			files, err := formats.ReadPaths(shared.Path(t, "meddocan/corpus/"+c.split+"/"+f.dir))
			if err != nil {
				t.Fatal(err)
			}
			docs, err := f.read(files, open)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := NewSide("meddocan", "gold", ByType)
			for _, d := range docs {
				for _, sp := range d.Spans {
					s.AddSpan([]byte(sp.Category), []byte(sp.Type), []byte(sp.Text))
				}
			}
			names := 0
			for _, pc := range NamePatternCounts(s.Names) {
				names += pc.Count
			}
			if names != c.want {
				t.Errorf("%s %s: %d name spans, want %d", c.split, f.dir, names, c.want)
			}
		}
	}
}

// addSpans adds n spans of one label and text.
func addSpans(s *Side, category, typ, text string, n int) {
	for range n {
		s.AddSpan([]byte(category), []byte(typ), []byte(text))
	}
}
