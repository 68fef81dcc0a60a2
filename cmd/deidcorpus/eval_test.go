package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/internal/shared"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestEvalPrintsTheOfficialScriptsReport(t *testing.T) {
	fixture := shared.Path(t, "meddocan-i2b2/sample-fixture")
	code, out, errOut := runCLI(t, "eval", "--gold", filepath.Join(fixture, "gold"), "--system", filepath.Join(fixture, "system-baseline"))
	require.Equal(t, 0, code, errOut)
	want, err := os.ReadFile(filepath.Join(fixture, "expected_i2b2_evaluate_output.txt"))
	require.NoError(t, err)
	require.Equal(t, string(want), out)
}

// Documents of one side only are left out, as the script does, and said so
// on stderr.
func TestEvalSaysWhatItLeftOut(t *testing.T) {
	fixture := shared.Path(t, "meddocan-i2b2/sample-fixture")
	entries, err := os.ReadDir(filepath.Join(fixture, "system-baseline"))
	require.NoError(t, err)
	some := t.TempDir()
	for _, en := range entries[:5] {
		data, err := os.ReadFile(filepath.Join(fixture, "system-baseline", en.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(some, en.Name()), data, 0o644))
	}
	code, out, errOut := runCLI(t, "eval", "--gold", filepath.Join(fixture, "gold"), "--system", some)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, fmt.Sprintf("not scored, for want of system output: %d gold documents (", len(entries)-5))
	assert.NotContains(t, out, "not scored")
	code, _, errOut = runCLI(t, "eval", "--gold", filepath.Join(fixture, "gold"), "--system", filepath.Join(fixture, "system-baseline"))
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, errOut, "not scored")
}

// Gold and system without a document in common (the wrong directory, say)
// score nothing: an error naming both, not a report of zeros.
func TestEvalWithoutACommonDocumentIsInvalid(t *testing.T) {
	system := t.TempDir()
	data, err := os.ReadFile("../../testdata/i2b2/101-01.xml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(system, "900-01.xml"), data, 0o644))
	code, out, errOut := runCLI(t, "eval", "--gold", "../../testdata/i2b2", "--system", system)
	require.Equal(t, 2, code, errOut)
	assert.Empty(t, out)
	assert.Equal(t, "deidcorpus eval: no document to score: gold ../../testdata/i2b2 (3 documents: 101-01, 101-02, 102-01) and system "+
		system+" (1 document: 900-01) share no document id\n", errOut)
}

func TestEvalJSONHasEveryFigure(t *testing.T) {
	fixture := shared.Path(t, "meddocan-i2b2/sample-fixture")
	code, out, errOut := runCLI(t, "eval", "--json", "--paper-hipaa", "--gold", filepath.Join(fixture, "gold"),
		"--system", filepath.Join(fixture, "system-perturbed"), "--compare", filepath.Join(fixture, "system-baseline"),
		"--shuffles", "199", "--bootstrap", "50")
	require.Equal(t, 0, code, errOut)
	var got struct {
		Report struct {
			HIPAAList string `json:"hipaa_list"`
			Documents int    `json:"documents"`
			Measures  []struct {
				Label       string            `json:"label"`
				PerDocument []json.RawMessage `json:"per_document"`
			} `json:"measures"`
			Errors struct {
				Total struct{ Gold int } `json:"total"`
			} `json:"errors"`
		} `json:"report"`
		Comparison struct {
			Tests []struct{ Scope string } `json:"tests"`
		} `json:"comparison"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, "paper", got.Report.HIPAAList)
	require.Equal(t, 15, got.Report.Documents)
	require.Len(t, got.Report.Measures, 10+8*4)
	require.Equal(t, "Token", got.Report.Measures[0].Label)
	require.Len(t, got.Report.Measures[0].PerDocument, 15)
	require.Positive(t, got.Report.Errors.Total.Gold)
	require.Equal(t, "ALL", got.Comparison.Tests[0].Scope)
}

func TestEvalPhysioNetOffsetsOnly(t *testing.T) {
	dir := shared.Path(t, "physionet-deid")
	code, out, errOut := runCLI(t, "eval", "--format", "physionet", "--gold", filepath.Join(dir, "id.deid"), "--system", filepath.Join(dir, "GSoutput", "id.phi"))
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Num of true positives = 1720\n\nNum of false positives = 546\n\nNum of false negatives = 59\n")
	// Notes without PHI are not in the gold: said as such, not as a failure.
	assert.NotContains(t, errOut, "not scored")
	assert.Regexp(t, `\d+ notes without PHI on either side`, errOut)
}

func TestEvalBadInputIsInvalid(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "100-01.xml")
	require.NoError(t, os.WriteFile(broken, []byte("<deIdi2b2><TEXT>abc</TEXT><TAGS><DATE start=\"0\" end=\"9\" TYPE=\"DATE\"/></TAGS></deIdi2b2>"), 0o644))
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"eval", "--gold", dir}, 2, "both --gold and --system are required"},
		{[]string{"eval", "--gold", dir, "--system", dir, "--format", "nope"}, 2, `--format: unknown format "nope" (known: brat, conll, csv, i2b2,`},
		{[]string{"eval", "--gold", dir, "--system", dir, "--metric", "f2"}, 2, `--metric "f2"`},
		{[]string{"eval", "--gold", dir, "--system", dir}, 2, "100-01.xml:1: tag DATE [0:9]: end 9 is past the end of the text"},
		{[]string{"eval", "--gold", filepath.Join(dir, "missing"), "--system", dir}, 3, "no such file"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, c.args...)
		require.Equal(t, c.code, code, errOut)
		require.Contains(t, errOut, c.msg)
	}
}

// Gold of MEDDOCAN's labels is scored with MEDDOCAN's metric unless another
// is asked for: the i2b2 script's rows have none of its labels.
func TestEvalMetricFollowsTheLabels(t *testing.T) {
	notes := spanishNote(t, t.TempDir())
	code, out, errs := cli(t, "eval", "--format", "brat", "--gold", notes, "--system", notes)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "Subtask1_F1 : 1.0")
	code, out, errs = cli(t, "eval", "--format", "brat", "--gold", notes, "--system", notes, "--metric", "i2b2")
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, out, "Subtask1")
	assert.Contains(t, out, "Strict (1)")
}
