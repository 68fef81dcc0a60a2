package phi_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/phi"
)

// TestMEDDOCANToI2B2MatchesPublishedCorpus applies the built-in MEDDOCAN ->
// i2b2 mapping to the native MEDDOCAN dev split and compares every span with
// the independently converted meddocan-i2b2 dev split.
func TestMEDDOCANToI2B2MatchesPublishedCorpus(t *testing.T) {
	native := shared.Path(t, "meddocan/corpus/dev/xml")
	converted := shared.Path(t, "meddocan-i2b2/dev")
	nameMap := shared.Path(t, "meddocan-i2b2/dev.filename_map.tsv")

	m, err := phi.LoadMapping("meddocan-i2b2")
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) map[string]pipeline.Document {
		files, err := formats.ReadPaths(p)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := formats.ReadI2B2(files, formats.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]pipeline.Document{}
		for _, d := range docs {
			byID[d.ID] = d
		}
		return byID
	}
	src, want := read(native), read(converted)
	files, err := formats.ReadPaths(nameMap)
	if err != nil {
		t.Fatal(err)
	}
	pairs := 0
	for i, line := range strings.Split(strings.TrimSpace(string(files[0].Data)), "\n") {
		if i == 0 {
			continue
		}
		i2b2Name, meddocanName, _ := strings.Cut(line, "\t")
		id := strings.TrimSuffix(i2b2Name, filepath.Ext(i2b2Name))
		srcID := strings.TrimSuffix(meddocanName, filepath.Ext(meddocanName))
		d, ok := src[srcID]
		if !ok {
			t.Fatalf("%s not in native dev", srcID)
		}
		got, err := m.Apply(d)
		if err != nil {
			t.Fatal(err)
		}
		w := want[id]
		if got.Text != w.Text {
			t.Fatalf("%s: text differs", id)
		}
		if a, b := spanKeys(got), spanKeys(w); a != b {
			t.Errorf("%s (%s):\n got %s\nwant %s", id, srcID, a, b)
		}
		pairs++
	}
	if pairs != 250 || len(want) != 250 {
		t.Errorf("compared %d documents of %d, want 250", pairs, len(want))
	}
}

func spanKeys(d pipeline.Document) string {
	var b strings.Builder
	for _, s := range d.Spans {
		fmt.Fprintf(&b, "%s[%d:%d]%s ", s.ID, s.Start, s.End, s.Label())
	}
	return b.String()
}
