package nearmiss

import (
	"slices"
	"testing"
)

func TestAmong(t *testing.T) {
	names := []string{"brat", "i2b2", "i2b2-2006", "jsonl", "CALLE", "CALL", "LOCATION-OTHER"}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"brt", []string{"brat"}},     // a letter dropped
		{"bart", []string{"brat"}},    // neighbours swapped
		{"jsonnl", []string{"jsonl"}}, // a letter added
		{"i2b2-2014", nil},            // two from i2b2-2006
		{"JSONL", []string{"jsonl"}},  // case set aside
		{"i2b2_2006", []string{"i2b2-2006"}},
		{"location_othr", []string{"LOCATION-OTHER"}},
		{"CALE", []string{"CALLE", "CALL"}}, // every near one, in order
		{"", nil},
	} {
		if got := Among(c.name, names); !slices.Equal(got, c.want) {
			t.Errorf("Among(%q): %v, want %v", c.name, got, c.want)
		}
	}
}
