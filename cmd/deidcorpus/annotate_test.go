package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent/documentprogress"
	"deidcorpus/store"
)

// TestAnnotateCommands: a curator sets annotation up from the command line
// alone: assigns notes to two annotators pre-annotated from gold, follows
// their progress, lists a queue, and measures their agreement once one of
// them has changed a span; bad input is named.
func TestAnnotateCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	ok := func(args ...string) string {
		t.Helper()
		code, out, errs := cli(t, append(args, "--db", db)...)
		require.Equal(t, 0, code, errs)
		return out
	}
	fails := func(code int, msg string, args ...string) {
		t.Helper()
		got, _, errs := cli(t, append(args, "--db", db)...)
		assert.Equal(t, code, got, errs)
		assert.Contains(t, errs, msg)
	}
	ok("import", "--corpus", "notes", "--tagset", "i2b2-2014", "../../testdata/i2b2")
	for _, name := range []string{"ann", "bob"} {
		ok("users", "add", name, "--role", "annotator")
		ok("users", "assign", name, "notes")
	}
	ok("users", "add", "stranger", "--role", "annotator")

	fails(2, "annotate assign needs --corpus", "annotate", "assign", "--set", "b1", "--annotators", "ann")
	fails(2, "needs the notes: --patients, --split, --note-type or --count", "annotate", "assign", "--corpus", "notes", "--set", "b1", "--annotators", "ann")
	fails(2, "--count 10001 is out of range: assign 1 to 10000 notes", "annotate", "assign", "--corpus", "notes", "--set", "b1", "--annotators", "ann", "--count", "10001")
	fails(3, `no corpus named "note"; did you mean notes?`, "annotate", "assign", "--corpus", "note", "--set", "b1", "--annotators", "ann", "--count", "1")
	fails(2, `stranger is not an annotator of corpus "notes"`, "annotate", "assign", "--corpus", "notes", "--set", "b1", "--annotators", "ann,stranger", "--count", "1")
	fails(2, `unknown split "val"`, "annotate", "assign", "--corpus", "notes", "--set", "b1", "--annotators", "ann", "--split", "val")

	out := ok("annotate", "assign", "--corpus", "notes", "--set", "b1", "--annotators", "ann,bob", "--patients", "101", "--count", "1", "--preannotate-from", "gold")
	assert.Contains(t, out, `assigned batch "b1" of corpus "notes" to ann, bob, pre-annotated from set "gold"`)
	assert.Regexp(t, `ann\s+b1:ann\s+0/1\s+0\s+1\s+own set \(blind\)`, out, "the count keeps one of the patient's two notes")
	out = ok("annotate", "assign", "--corpus", "notes", "--set", "b1", "--annotators", "ann,bob", "--patients", "101", "--preannotate-from", "gold", "--json")
	var progress []store.AnnotatorProgress
	require.NoError(t, json.Unmarshal([]byte(out), &progress))
	require.Len(t, progress, 2)
	assert.Equal(t, store.AnnotatorProgress{Set: "b1:bob", Annotator: "bob", Todo: 2, Total: 2}, progress[1])

	// ann finishes a note and changes a span's type in it.
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	require.NoError(t, err)
	c, err := st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	set, err := st.AnnotationSet(ctx, c, "b1:ann")
	require.NoError(t, err)
	states, err := st.SetProgress(ctx, set)
	require.NoError(t, err)
	doc := states[0].DocumentID
	spans, err := st.Client.Span.Query().All(ctx)
	require.NoError(t, err)
	var changed int
	for _, sp := range spans {
		if sp.AnnotationSetID == set.ID && sp.DocumentID == doc && sp.Type == "PATIENT" {
			changed = sp.ID
		}
	}
	require.NotZero(t, changed)
	_, err = st.ChangeSpan(ctx, changed, 0, store.SpanChange{Type: "DOCTOR"})
	require.NoError(t, err)
	_, err = st.SetDocumentStatus(ctx, set.ID, doc, 1, documentprogress.StatusDone)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	out = ok("annotate", "status", "--corpus", "notes")
	assert.Regexp(t, `ANNOTATOR\s+SET\s+DONE\s+IN PROGRESS\s+TODO\s+READS`, out)
	assert.Regexp(t, `ann\s+b1:ann\s+1/2\s+0\s+1`, out)
	assert.Regexp(t, `bob\s+b1:bob\s+0/2\s+0\s+2`, out)
	out = ok("annotate", "status", "--corpus", "notes", "--annotator", "bob")
	assert.NotContains(t, out, "b1:ann")
	fails(2, `carl has no set in corpus "notes"`, "annotate", "status", "--corpus", "notes", "--annotator", "carl")
	fails(3, `corpus "notes" has no assignment "b9"`, "annotate", "status", "--corpus", "notes", "--batch", "b9")

	out = ok("annotate", "queue", "--corpus", "notes", "--set", "b1", "--annotator", "ann")
	assert.Equal(t, 2, strings.Count(out, "\n"), "a header and the one note not done:\n"+out)
	assert.Contains(t, out, "101-02")
	// With a model (a few iterations), the notes it is least sure of first.
	cfg := filepath.Join(t.TempDir(), "crf.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"training": {"max_iterations": 5}}`), 0o600))
	ok("train", "--corpus", "notes", "--model", "crf-1", "--split", "all", "--config", cfg, "--no-calibration")
	out = ok("annotate", "queue", "--corpus", "notes", "--set", "gold", "--model", "crf-1", "--json")
	var queued []struct {
		Document    string
		Tokens      int
		Uncertainty float64
	}
	require.NoError(t, json.Unmarshal([]byte(out), &queued))
	require.Len(t, queued, 3)
	for i, q := range queued {
		assert.Positive(t, q.Tokens, q.Document)
		assert.Positive(t, q.Uncertainty, q.Document)
		if i > 0 {
			assert.GreaterOrEqual(t, queued[i-1].Uncertainty, q.Uncertainty, "most uncertain first")
		}
	}
	out = ok("annotate", "queue", "--corpus", "notes", "--set", "gold", "--first", "2")
	assert.Equal(t, 3, strings.Count(out, "\n"), "gold, assigned to nobody: every note is open, the first two listed:\n"+out)
	fails(2, "--first 0 is out of range: list 1 to 1000 notes", "annotate", "queue", "--corpus", "notes", "--set", "gold", "--first", "0")
	fails(3, `no model named "crf-9"`, "annotate", "queue", "--corpus", "notes", "--set", "gold", "--model", "crf-9")
	fails(3, `corpus "notes" has no annotation set "b1:carl"`, "annotate", "queue", "--corpus", "notes", "--set", "b1", "--annotator", "carl")

	out = ok("annotate", "agreement", "--corpus", "notes", "--batch", "b1", "--by-type")
	assert.Regexp(t, `b1:ann\s+b1:bob\s+all\s+2\s+\d+\s+1\s+1\s+0\.\d+`, out, "one span's type differs: one false positive, one false negative")
	assert.Regexp(t, `\n\s+DOCTOR\s+2\s+0\s+1\s+0\.800\n\s+HOSPITAL`, out, "ann's DOCTOR, not in bob's set")
	assert.Regexp(t, `\n\s+PATIENT\s+1\s+1\s+0\s+0\.667\n`, out, "bob's PATIENT, not in ann's")
	out = ok("annotate", "agreement", "--corpus", "notes", "--sets", "gold,b1:bob", "--json")
	var pairs []struct {
		A, B      string
		Documents int
		F1        float64
	}
	require.NoError(t, json.Unmarshal([]byte(out), &pairs))
	require.Len(t, pairs, 1)
	assert.Equal(t, 2, pairs[0].Documents, "the notes both hold: bob's")
	assert.Equal(t, 1.0, pairs[0].F1, "bob kept the pre-annotation")
	fails(2, "name two or more annotation sets", "annotate", "agreement", "--corpus", "notes", "--sets", "gold")
	fails(2, "annotate agreement needs --sets or --batch", "annotate", "agreement", "--corpus", "notes")
}
