package evaluate

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

// readI2B2Dir reads a directory of i2b2 XML files the way the scorer's
// callers do: overlapping tags allowed, since system output may overlap.
func readI2B2Dir(t testing.TB, dir string) []pipeline.Document {
	t.Helper()
	files, err := formats.ReadPaths(dir)
	require.NoError(t, err)
	docs, err := formats.ReadI2B2(files, formats.ReadOptions{AllowOverlap: true})
	require.NoError(t, err)
	return docs
}

func fixtureMeasures(t *testing.T, fixture, system string) []Measure {
	t.Helper()
	gold := readI2B2Dir(t, filepath.Join(fixture, "gold"))
	sys := readI2B2Dir(t, filepath.Join(fixture, system))
	pairs, goldOnly, sysOnly, err := PairDocuments(gold, sys)
	require.NoError(t, err)
	require.Empty(t, goldOnly)
	require.Empty(t, sysOnly)
	sc := NewScorer(pairs, false)
	ms, err := sc.Run(I2B2Specs(sc.Categories()))
	require.NoError(t, err)
	return ms
}

var fixtureSystems = []struct{ dir, expected string }{
	{"system-baseline", "expected_i2b2_evaluate_output"},
	{"system-perturbed", "expected_i2b2_evaluate_output.perturbed"},
}

// The summary output has a fixed order, so it is compared byte for byte.
func TestI2B2SummaryMatchesOfficialScript(t *testing.T) {
	fixture := shared.Path(t, "meddocan-i2b2/sample-fixture")
	for _, fs := range fixtureSystems {
		t.Run(fs.dir, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(fixture, fs.expected+".txt"))
			require.NoError(t, err)
			var got bytes.Buffer
			require.NoError(t, RenderI2B2(&got, fixtureMeasures(t, fixture, fs.dir), false))
			requireSameLines(t, string(want), got.String())
		})
	}
}

// verboseDoc is one document block of the script's -v output.
type verboseDoc struct {
	gold, tp, sys int
	p, r, f       string
}

var bracket = regexp.MustCompile(`^\[(\d+)\((\d+)\)(\d+)\]`)

// parseVerbose reads the script's -v output into report label -> document
// id -> figures as printed, plus each report's summary lines.
func parseVerbose(t *testing.T, path string) (map[string]map[string]verboseDoc, map[string][]string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	docs := map[string]map[string]verboseDoc{}
	summaries := map[string][]string{}
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	var label string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "Report for "):
			label = strings.TrimSuffix(strings.TrimPrefix(l, "Report for "), ":")
			docs[label] = map[string]verboseDoc{}
			i += 2
		case strings.HasPrefix(l, label+" (") && label != "":
			summaries[label] = lines[i : i+5]
			i += 4
		case len(l) > 25 && strings.HasPrefix(l[25:], "Precision") && l[:5] != "Total":
			id := strings.TrimSpace(l[:25])
			m := bracket.FindStringSubmatch(lines[i+1])
			require.NotNil(t, m, "line %d: %q", i+2, lines[i+1])
			atoi := func(s string) int { n, err := strconv.Atoi(s); require.NoError(t, err); return n }
			docs[label][id] = verboseDoc{
				gold: atoi(m[1]), tp: atoi(m[2]), sys: atoi(m[3]),
				p: strings.TrimSpace(l[55:]), r: strings.TrimSpace(lines[i+1][55:]), f: strings.TrimSpace(lines[i+2][55:]),
			}
			i += 3
		}
	}
	return docs, summaries
}

// Per-document figures: the script prints documents in Python's set order,
// so they are compared by document id, every figure at printed precision.
func TestI2B2VerboseMatchesOfficialScript(t *testing.T) {
	fixture := shared.Path(t, "meddocan-i2b2/sample-fixture")
	for _, fs := range fixtureSystems {
		t.Run(fs.dir, func(t *testing.T) {
			want, wantSummaries := parseVerbose(t, filepath.Join(fixture, fs.expected+".verbose.txt"))
			ms := fixtureMeasures(t, fixture, fs.dir)
			require.Len(t, want, len(ms))
			var out bytes.Buffer
			require.NoError(t, RenderI2B2(&out, ms, true))
			gotDocs, gotSummaries := parseVerboseString(t, out.String())
			for _, m := range ms {
				w, ok := want[m.Label]
				require.True(t, ok, "script has no report %q", m.Label)
				require.Len(t, m.PerDocument, len(w), m.Label)
				for _, d := range m.PerDocument {
					wd, ok := w[d.ID]
					require.True(t, ok, "%s: script has no document %s", m.Label, d.ID)
					require.Equal(t, wd, gotDocs[m.Label][d.ID], "%s document %s", m.Label, d.ID)
				}
				require.Equal(t, wantSummaries[m.Label], gotSummaries[m.Label], m.Label)
			}
		})
	}
}

func parseVerboseString(t *testing.T, s string) (map[string]map[string]verboseDoc, map[string][]string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "out.txt")
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	return parseVerbose(t, p)
}

// requireSameLines fails at the first line that differs, naming it, instead
// of printing two whole reports.
func requireSameLines(t *testing.T, want, got string) {
	t.Helper()
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) && i < len(g); i++ {
		require.Equal(t, w[i], g[i], "line %d", i+1)
	}
	require.Equal(t, len(w), len(g), "line count")
}
