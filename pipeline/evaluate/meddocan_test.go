package evaluate

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

func readBRATDir(t *testing.T, dir string) []pipeline.Document {
	t.Helper()
	f, err := formats.Lookup("brat")
	if err != nil {
		t.Skip("no BRAT reader registered:", err)
	}
	files, err := formats.ReadPaths(dir)
	require.NoError(t, err)
	docs, err := f.Read(files, formats.ReadOptions{AllowOverlap: true})
	require.NoError(t, err)
	return docs
}

// Every Subtask1 and Subtask2 figure the track's CODALAB script wrote for
// the fixture, to 1e-12.
func TestMeddocanMatchesOfficialScript(t *testing.T) {
	fixture := shared.Path(t, "meddocan/eval-fixture")
	gold := readBRATDir(t, filepath.Join(fixture, "input/ref/brat"))
	sys := readBRATDir(t, filepath.Join(fixture, "input/res/brat/subtask1"))
	pairs, goldOnly, sysOnly, err := PairDocuments(gold, sys)
	require.NoError(t, err)
	require.Empty(t, goldOnly)
	require.Empty(t, sysOnly)
	require.Len(t, pairs, 5)
	got := Meddocan(pairs)

	want := map[string]float64{}
	f, err := os.Open(filepath.Join(fixture, "output/scores.txt"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " : ")
		require.True(t, ok, sc.Text())
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		require.NoError(t, err)
		want[name] = v
	}
	figures := map[string]float64{
		"Subtask1_Precision":       got.Subtask1.Precision,
		"Subtask1_Recall":          got.Subtask1.Recall,
		"Subtask1_F1":              got.Subtask1.F1,
		"Subtask2Strict_Precision": got.Subtask2Strict.Precision,
		"Subtask2Strict_Recall":    got.Subtask2Strict.Recall,
		"Subtask2Strict_F1":        got.Subtask2Strict.F1,
		"Subtask2Merged_Precision": got.Subtask2Merged.Precision,
		"Subtask2Merged_Recall":    got.Subtask2Merged.Recall,
		"Subtask2Merged_F1":        got.Subtask2Merged.F1,
	}
	for name, v := range figures {
		w, ok := want[name]
		require.True(t, ok, "scores.txt has no %s", name)
		require.InDelta(t, w, v, 1e-12, name)
	}
	// The leak figure needs the track's sentence-split corpus, which is not
	// here; it is the one line of scores.txt not reproduced.
	require.Len(t, want, len(figures)+1)
	require.Contains(t, want, "Subtask1_Leak")

	// The subtask 2 system files are the same annotations.
	sys2 := readBRATDir(t, filepath.Join(fixture, "input/res/brat/subtask2"))
	pairs2, _, _, err := PairDocuments(gold, sys2)
	require.NoError(t, err)
	require.Equal(t, got, Meddocan(pairs2))
}

// Subtask 1 compares types, not categories: MEDDOCAN's XML puts "NAME" on a
// name that BRAT, or an open tag set, files under its type.
func TestSubtask1IgnoresCategory(t *testing.T) {
	text := "Ana vive en Lugo"
	gold := pipeline.Document{ID: "d", Text: text, Spans: []pipeline.Span{
		{Start: 0, End: 3, Category: "NAME", Type: "NOMBRE_SUJETO_ASISTENCIA"},
		{Start: 12, End: 16, Category: "LOCATION", Type: "TERRITORIO"},
	}}
	sys := pipeline.Document{ID: "d", Text: text, Spans: []pipeline.Span{
		{Start: 0, End: 3, Category: "NOMBRE_SUJETO_ASISTENCIA", Type: "NOMBRE_SUJETO_ASISTENCIA"},
		{Start: 12, End: 16, Category: "LOCATION", Type: "PAIS"},
	}}
	got := Meddocan([]Pair{{Gold: &gold, System: &sys}}).Subtask1
	require.Equal(t, Counts{TP: 1, FP: 1, FN: 1}, got.Counts)
}

func TestMergedSpansJoinAcrossPunctuationOnly(t *testing.T) {
	d := &pipeline.Document{Text: "Dr. Ana Ruiz, Madrid y Lugo", Spans: []pipeline.Span{
		{Start: 4, End: 7, Type: "N", Category: "N"},   // Ana
		{Start: 8, End: 12, Type: "N", Category: "N"},  // Ruiz: gap " " joins
		{Start: 14, End: 20, Type: "T", Category: "T"}, // Madrid: gap ", " joins
		{Start: 23, End: 27, Type: "T", Category: "T"}, // Lugo: gap " y " does not
	}}
	require.Equal(t, []offsets{{4, 20}, {23, 27}}, mergedSpans(d, pipeline.NewIndex(d.Text)))
}

// runStat on the PhysioNet corpus: id.deid against deid.pl's own output.
func TestOverlapMatchesRunStat(t *testing.T) {
	dir := shared.Path(t, "physionet-deid")
	read := func(p string) []pipeline.Document {
		files, err := formats.ReadPaths(filepath.Join(dir, p))
		require.NoError(t, err)
		docs, err := formats.ReadPhysioNet(files, formats.ReadOptions{AllowOverlap: true})
		require.NoError(t, err)
		return docs
	}
	got := Overlap(read("id.deid"), read("GSoutput/id.phi"))
	require.Equal(t, Counts{TP: 1720, FP: 546, FN: 59}, got.Counts)
	require.Equal(t, 1779, got.GoldSpans)
	require.Equal(t, 2169, got.SystemSpans)
	var out strings.Builder
	require.NoError(t, RenderOverlap(&out, got))
	want, err := os.ReadFile(filepath.Join(dir, "expected_runStat_id.deid_vs_GSoutput_id.phi.txt"))
	require.NoError(t, err)
	// The expected file's statistics block, which this package's version of
	// runStat prints alone.
	block := string(want)[strings.Index(string(want), "\n\n==========================") : strings.LastIndex(string(want), "==========================\n")+len("==========================\n")]
	require.Equal(t, block, strings.TrimSuffix(out.String(), "\n"))
}
