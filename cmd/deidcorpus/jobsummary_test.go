package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/ent"
	"deidcorpus/ent/job"
)

// The bar of a job follows its stages as the dashboard does: the share of
// the total the job gives now (training moves from a 0-of-1 loading step to
// a scale of 1000) and the job's message.
func TestJobBarShowsStagesAndMessages(t *testing.T) {
	var out strings.Builder
	b := &bar{w: &out, description: "train"}
	b.set(0, 1, "loading demo")
	b.set(670, 1000, "iteration 67 of at most 150, loss 625.9")
	shown := out.String()
	assert.Contains(t, shown, "train: loading demo")
	assert.Contains(t, shown, "67%")
	assert.Contains(t, shown, "train: iteration 67 of at most 150, loss 625.9")
	assert.NotContains(t, shown, "100%", "a new stage's total is not the first one's")
	b.set(700, 1000, "") // no message: the last one stays
	assert.Contains(t, out.String()[len(shown):], "iteration 67 of at most 150")
	b.finish()
	assert.Contains(t, out.String(), "100%")

	var none *bar // not a terminal: nothing drawn
	none.set(1, 2, "x")
	none.finish()
}

func stored(t *testing.T, kind string, status job.Status, result string) *ent.Job {
	t.Helper()
	j := &ent.Job{ID: 7, Kind: kind, Status: status, Params: map[string]any{"out": "notes-r", "seed": 3.0}}
	require.NoError(t, json.Unmarshal([]byte(result), &j.Result))
	return j
}

// Each kind's result reads as a sentence, from results as this version
// stores them and as earlier ones did.
func TestSummaries(t *testing.T) {
	for _, c := range []struct {
		kind, result string
		status       job.Status
		want         string
	}{
		{"import", `{"corpus": 3, "corpusName": "notes", "createdCorpus": true, "documents": 12, "spans": 80, "replaced": 0, "withoutSpans": 1, "moved": 0, "skipped": 2, "format": "i2b2"}`, "",
			"imported 12 documents and 80 spans (i2b2) into new corpus \"notes\"; 2 files skipped\n"},
		{"derive", `{"corpus": 4, "corpusName": "notes-i2b2", "documents": 12, "spans": 78, "dropped": 2, "mapping": "meddocan-i2b2"}`, "",
			"derived \"notes-i2b2\" with mapping meddocan-i2b2: 12 documents, 78 spans (2 dropped by the mapping)\n"},
		{"export", `{"artifact": 9, "bytes": 2048, "sha256": "ab12", "files": 24}`, "",
			"exported 24 files as a zip archive (2048 bytes, sha256 ab12): artifact 9, at /download/artifacts/9\n"},
		{"evaluate", `{"evaluation": 5, "documents": 3, "precision": 0.9, "recall": 0.8, "f1": 0.847}`, "",
			"evaluation 5 of 3 documents: strict micro P 0.9000 R 0.8000 F1 0.8470\n"},
		{"train", `{"model": 2, "modelName": "crf1", "hash": "e3b0", "metrics": {"documents": 3, "tokens": 1200, "spans": 40, "attributes": 900, "features": 5000, "iterations": 67, "loss": 625.94, "seconds": 144.2, "codeVersion": "dev"}}`, "",
			"trained model \"crf1\" (hash e3b0) in job 7: 3 documents, 1200 tokens, 40 spans; 900 attributes, 5000 features; 67 iterations, loss 625.9; 2 min 24 s\n"},
		{"tag", `{"annotationSet": 8, "setName": "system-crf1", "documents": 3}`, "",
			"tagged 3 documents into set system-crf1 (job 7)\n"},
		{"tag", `{"annotationSet": 8, "setName": "system-crf1", "documents": 3, "evaluation": 6, "precision": 0.95, "recall": 0.9, "f1": 0.924,
			"curve": [{"bias": 0, "precision": 0.95, "recall": 0.9, "f1": 0.924}]}`, "",
			"tagged 3 documents into set system-crf1 (job 7); against gold: strict micro P 0.9500 R 0.9000 F1 0.9240 (evaluation 6)\n" +
				"recall bias  precision  recall      F1\n          0     0.9500  0.9000  0.9240\n"},
		// An earlier version named the corpus where the job wrote nothing.
		{"resynthesize", `{"corpus": "notes-r", "documents": 0, "message": "every document is already resynthesized"}`, "",
			"resynthesized 0 documents into \"notes-r\" (job 7): every document is already resynthesized\n"},
		{"resynthesize", `{"corpus": 11, "corpusName": "notes-r", "documents": 5, "written": 5, "checkReport": 12, "checkStatus": "failed", "checkFindings": 2,
			"reused": [{"job": 4, "seed": 1, "corpus": "notes-r", "mappings": 3, "shifts": 2}],
			"check": {"ok": false, "spans": 40, "replaced": 39, "leaks": 2, "unannotated": 0, "datesChecked": 6}}`, job.StatusCheckFailed,
			"resynthesized 5 documents into \"notes-r\" (job 7)\n" +
				"reused 3 mappings and 2 date shifts of job 4 (seed 1, notes-r), not drawn from seed 3\n" +
				"check: ok=false, 40 spans, 39 replaced, 0 misaligned, 2 leaks, 0 source ids, 0 inconsistent, 0 interval errors, 6 dates checked, 0 unannotated, 0 propagated, 0 for review\n" +
				"job 7: check failed; \"notes-r\" is quarantined (2 unresolved findings) until a rerun into it passes or a curator runs: deidcorpus resynth resolve notes-r --reason ...\n"},
		{"ping", `{"pong": true}`, "", "pong: true\n"},
		// A failed job's result is its error code: nothing to summarize.
		{"train", `{"errorCode": "invalid"}`, job.StatusFailed, ""},
		{"part", `{"documents": 3}`, "", ""},
	} {
		t.Run(c.kind, func(t *testing.T) {
			status := c.status
			if status == "" {
				status = job.StatusSucceeded
			}
			var out strings.Builder
			require.NoError(t, summarize(&out, stored(t, c.kind, status, c.result)))
			assert.Equal(t, c.want, out.String())
		})
	}
	var out strings.Builder
	err := summarize(&out, stored(t, "train", job.StatusSucceeded, `{"metrics": "not an object"}`))
	assert.ErrorContains(t, err, "job 7 (train): its result")
}

// train ends with a summary, or with --json the job whole; jobs show
// describes a job, or with --json gives it whole.
func TestWaitingCommandsSummarizeOrGiveJSON(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "a", "--tagset", "i2b2-2014", "--split", "train", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	config := filepath.Join(dir, "tagger.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"training": {"max_iterations": 3}}`), 0o644))

	code, out, errs := cli(t, "train", "--db", db, "--corpus", "a", "--model", "crf1", "--config", config)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^trained model "crf1" \(hash [0-9a-f]+\) in job (\d+): 3 documents, \d+ tokens, \d+ spans; \d+ attributes, \d+ features; [1-3] iterations, loss \d+\.\d; \d+ s\n`+
		`not calibrated: 2 patients, fewer than the calibration's 3 folds: no privacy point \(deidcorpus models calibrate once there are more\)\n$`, out)
	id := regexp.MustCompile(`in job (\d+)`).FindStringSubmatch(out)[1]

	code, out, errs = cli(t, "train", "--db", db, "--corpus", "a", "--model", "crf2", "--config", config, "--json")
	require.Equal(t, 0, code, errs)
	var j struct {
		ID     int
		Kind   string
		Status string
		Result struct {
			ModelName string `json:"modelName"`
			Metrics   struct{ Documents int }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &j), out)
	assert.Equal(t, "train", j.Kind)
	assert.Equal(t, "succeeded", j.Status)
	assert.Equal(t, "crf2", j.Result.ModelName)
	assert.Equal(t, 3, j.Result.Metrics.Documents)

	code, out, errs = cli(t, "jobs", "show", "--db", db, id)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^job `+id+` \(train\): succeeded\nqueued by local:\S+ at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\ntrained model "crf1" `, out)
	// The dashboard's short number (the id less the job table's offset)
	// names the same job.
	full, err := strconv.Atoi(id)
	require.NoError(t, err)
	require.Greater(t, full, 1<<32, "ent numbers each table's ids apart")
	code, short, errs := cli(t, "jobs", "show", "--db", db, strconv.Itoa(full%(1<<32)))
	require.Equal(t, 0, code, errs)
	assert.Equal(t, out, short)
	code, out, errs = cli(t, "jobs", "show", "--db", db, id, "--json")
	require.Equal(t, 0, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &j), out)
	assert.Equal(t, "crf1", j.Result.ModelName)
}

func TestProgressLine(t *testing.T) {
	j := &ent.Job{Status: job.StatusRunning, ProgressDone: 670, ProgressTotal: 1000, Message: "iteration 67 of at most 150, loss 625.9",
		CreatedAt: time.Now()}
	assert.Equal(t, "67% iteration 67 of at most 150, loss 625.9", progressLine(j))
	j.ProgressTotal, j.Message = 0, "checking"
	assert.Equal(t, "checking", progressLine(j))
}
