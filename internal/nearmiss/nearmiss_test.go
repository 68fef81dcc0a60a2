package nearmiss

import (
	"slices"
	"strings"
	"testing"
)

func TestAmong(t *testing.T) {
	names := []string{"brat", "i2b2", "i2b2-2006", "jsonl", "CALLE", "CALL"}
	for _, c := range []struct {
		name string
		norm func(string) string
		want []string
	}{
		{"brt", nil, []string{"brat"}},     // a letter dropped
		{"bart", nil, []string{"brat"}},    // neighbours swapped
		{"jsonnl", nil, []string{"jsonl"}}, // a letter added
		{"i2b2-2014", nil, nil},            // two from i2b2-2006
		{"JSONL", nil, nil},                // case counts without norm
		{"JSONL", strings.ToLower, []string{"jsonl"}},
		{"CALE", nil, []string{"CALLE", "CALL"}}, // every near one, in order
		{"", nil, nil},
	} {
		if got := Among(c.name, names, c.norm); !slices.Equal(got, c.want) {
			t.Errorf("Among(%q): %v, want %v", c.name, got, c.want)
		}
	}
}
