package formats

import (
	"strings"
	"testing"
)

// An unknown format's error lists the known ones and, for a near miss,
// names the one meant; a name two edits away is not guessed at.
func TestLookupSaysWhichWasMeant(t *testing.T) {
	known := " (known: " + strings.Join(Names(), ", ") + ")"
	for name, meant := range map[string]string{
		"JSONL":     "jsonl",
		"I2B2":      "i2b2",
		"i2b2_2006": "i2b2-2006",
		"i2b22006":  "i2b2-2006",
		"brt":       "brat",
		"json":      "jsonl",
		"pyhsionet": "physionet",
		"i2b2-2014": "",
		"xml":       "",
		"":          "",
	} {
		_, err := Lookup(name)
		want := `unknown format "` + name + `"`
		if meant != "" {
			want += "; did you mean " + meant + "?"
		}
		if err == nil || err.Error() != want+known {
			t.Errorf("Lookup(%q): %v, want %s", name, err, want+known)
		}
	}
	if f, err := Lookup("i2b2-2006"); err != nil || f.Name != "i2b2-2006" {
		t.Errorf("Lookup(i2b2-2006) = %v, %v", f, err)
	}
}
