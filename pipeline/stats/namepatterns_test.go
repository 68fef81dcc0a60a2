package stats

import (
	"reflect"
	"testing"
)

func TestNamePattern(t *testing.T) {
	for in, want := range map[string]string{
		"Smith":            "AAA",
		"Smith, Brian K.":  "AAA, AAA A.",
		"Brian  Smith":     "AAA AAA",
		"John Z. F. Smith": "AAA A. A. AAA",
		"J":                "A",
		"O'Brien":          "AAA",
		"Sam's":            "AAA",
		"Sanz-Gallén":      "AAA-AAA",
		"arw4":             "AAA0",
		"Núñez Ruiz":       "AAA AAA",
	} {
		if got := NamePattern(in); got != want {
			t.Errorf("NamePattern(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNamePatterns(t *testing.T) {
	got := NamePatterns([]string{"Ahmad, Jane Q.", "Smith", "Jones", "Philips, Bruce R"})
	want := []PatternCount{{"AAA", 1, 2}, {"AAA, AAA A", 3, 1}, {"AAA, AAA A.", 3, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NamePatterns = %+v, want %+v", got, want)
	}
}
