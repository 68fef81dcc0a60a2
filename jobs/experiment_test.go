package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/document"
	"deidcorpus/ent/documentprogress"
	"deidcorpus/ent/job"
	"deidcorpus/internal/shared"
	"deidcorpus/jobs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/experiment"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// experimentResult reads a finished experiment job's table back.
func experimentResult(t *testing.T, result map[string]any) experiment.Result {
	t.Helper()
	data, err := json.Marshal(result)
	require.NoError(t, err)
	var res experiment.Result
	require.NoError(t, json.Unmarshal(data, &res))
	return res
}

func TestExperimentJobORDesign(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 6)
	m := newManager(t, st, nil, jobs.Options{})

	rs, err := m.Enqueue(ctx, jobs.ResynthesizeParams{Corpus: "notes", Out: "notes-r", Seed: 1}, "", nil)
	require.NoError(t, err)
	require.Equal(t, job.StatusSucceeded, wait(t, m, rs.ID)[0].Status)

	start := time.Now()
	ex, err := m.Enqueue(ctx, jobs.ExperimentParams{Kind: "or", Corpus: "notes", Other: "notes-r",
		TrainSplit: "all", TestFraction: 0.3, Seed: 5, Bootstrap: 100, Shuffles: 199,
		Config: map[string]any{"training": map[string]any{"max_iterations": 5}}}, "", nil)
	require.NoError(t, err)
	done := wait(t, m, ex.ID)[0]
	require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
	t.Logf("O/R experiment on 6 synthetic patients: %s", time.Since(start).Round(time.Millisecond))
	assert.Equal(t, done.ProgressTotal, done.ProgressDone)

	res := experimentResult(t, done.Result)
	assert.Equal(t, "or", res.Kind)
	require.Len(t, res.Rows, 4)
	var names []string
	for _, row := range res.Rows {
		names = append(names, row.Configuration)
		t.Logf("%-4s P %.3f [%.3f, %.3f]  R %.3f  F1 %.3f [%.3f, %.3f]", row.Configuration, row.Precision,
			row.PrecisionCI.Low, row.PrecisionCI.High, row.Recall, row.F1, row.F1CI.Low, row.F1CI.High)
		assert.Positive(t, row.TestDocuments)
		assert.Positive(t, row.TrainDocuments)
		assert.Positive(t, row.F1, row.Configuration)
		assert.LessOrEqual(t, row.F1CI.Low, row.F1+1e-9)
		assert.GreaterOrEqual(t, row.F1CI.High, row.F1-1e-9)
	}
	assert.Equal(t, []string{"O⇒O", "R⇒R", "O⇒R", "R⇒O"}, names)
	assert.Equal(t, res.Rows[0].TestDocuments, res.Rows[1].TestDocuments, "the twins are split alike")
	require.Len(t, res.Tests, 2)
	assert.Equal(t, [2]string{"O⇒O", "R⇒O"}, [2]string{res.Tests[0].A, res.Tests[0].B})
	assert.Equal(t, "notes-r", done.Result["other"])
	assert.Equal(t, 5.0, done.Result["tagger"].(map[string]any)["training"].(map[string]any)["max_iterations"])
}

func TestExperimentJobCrossValidationAndErrors(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 6)
	m := newManager(t, st, nil, jobs.Options{})

	ex, err := m.Enqueue(ctx, jobs.ExperimentParams{Kind: "cv", Corpus: "notes", TrainSplit: "all",
		K: 2, Seed: 1, Bootstrap: 100, Config: map[string]any{"training": map[string]any{"max_iterations": 5}}}, "", nil)
	require.NoError(t, err)
	done := wait(t, m, ex.ID)[0]
	require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
	res := experimentResult(t, done.Result)
	require.Len(t, res.Rows, 1)
	assert.Equal(t, 2, res.Rows[0].Runs)
	assert.Equal(t, "notes 2-fold CV", res.Rows[0].Configuration)
	assert.Positive(t, res.Rows[0].F1)

	// What the parameters show wrong, alone or beside the names they give,
	// is refused at enqueue; what needs the documents fails the job.
	for _, bad := range []jobs.ExperimentParams{{Kind: "nope", Corpus: "notes"}, {Kind: "or", Corpus: "notes"},
		{Kind: "curve", Corpus: "notes", TestSplit: "train"}, {Kind: "curve", Corpus: "notes", TrainSplit: "dev", TestSplit: "dev"},
		{Kind: "cross", Corpus: "notes", Other: "x", TrainSplit: "all", TestSplit: "dev"}} {
		_, err := m.Enqueue(ctx, bad, "", nil)
		assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%+v: %v", bad, err)
	}
	_, err = m.Enqueue(ctx, jobs.ExperimentParams{Kind: "curve", Corpus: "notes", TestSplit: "train"}, "", nil)
	assert.ErrorContains(t, err, "tested on documents it was trained on")
	_, err = m.Enqueue(ctx, jobs.ExperimentParams{Kind: "cross", Corpus: "notes", Other: "missing"}, "", nil)
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "%v", err)
	// More folds than patients, 20 or the default 10 of 6 patients; more
	// than 20 folds whatever the corpus.
	for _, k := range []int{20, 0} {
		_, err = m.Enqueue(ctx, jobs.ExperimentParams{Kind: "cv", Corpus: "notes", TrainSplit: "all", K: k}, "", nil)
		assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%v", err)
		assert.ErrorContains(t, err, "has 6 patients")
	}
	_, err = m.Enqueue(ctx, jobs.ExperimentParams{Kind: "cv", Corpus: "notes", TrainSplit: "all", K: 21}, "", nil)
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%v", err)
	assert.ErrorContains(t, err, "k: 21 folds, at most 20 (each trains a model)")
	// A corpus whose labels the tested one does not share is refused with
	// the way out, a mapping, which is then accepted.
	_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "dates-es", TagSet: "open"}, []pipeline.Document{
		{ID: "e1", Patient: "p1", Split: "train", Text: "Ingreso el 3 de mayo.", Spans: []pipeline.Span{{Start: 11, End: 20, Type: "FECHAS"}}},
	})
	require.NoError(t, err)
	cross := jobs.ExperimentParams{Kind: "cross", Corpus: "notes", Other: "dates-es", TrainSplit: "all", Seed: 1,
		Config: map[string]any{"training": map[string]any{"max_iterations": 2}}}
	_, err = m.Enqueue(ctx, cross, "", nil)
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%v", err)
	assert.ErrorContains(t, err, `corpora "notes" (`)
	assert.ErrorContains(t, err, `and "dates-es" (FECHAS) share no label`)
	assert.ErrorContains(t, err, "meddocan-i2b2")
	cross.OtherMappingText = "@to i2b2-2014\nFECHAS DATE\n"
	j, err := m.Enqueue(ctx, cross, "", nil)
	require.NoError(t, err)
	mapped := wait(t, m, j.ID)[0]
	require.Equal(t, job.StatusSucceeded, mapped.Status, mapped.Error)

	// A mapping that is no built-in one's name, or whose rules miss some of
	// the corpus's labels, and a parameter the kind does not read: refused at
	// enqueue too.
	for bad, want := range map[*jobs.ExperimentParams]string{
		{Kind: "cv", Corpus: "notes", K: 2, Mapping: "/etc/passwd"}:                          `no built-in mapping "/etc/passwd"`,
		{Kind: "cv", Corpus: "notes", K: 2, MappingText: "@default error\nDATE DATE\n"}:      "has no rule for",
		{Kind: "curve", Corpus: "notes", K: 5}:                                               "k: the curve experiment does not read it",
		{Kind: "or", Corpus: "notes", Other: "notes-x", OtherMappingText: "@default keep\n"}: "otherMapping: the or experiment does not read it",
	} {
		_, err := m.Enqueue(ctx, *bad, "", nil)
		assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%+v: %v", *bad, err)
		assert.ErrorContains(t, err, want)
	}
}

func TestExperimentJobResidualRisk(t *testing.T) {
	shared.NotUnderRace(t, "single-threaded tests")
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) { residualRiskJob(t, b) })
	}
}

func residualRiskJob(t *testing.T, b storetest.Backend) {
	ctx := context.Background()
	st := storetest.Open(t, b)
	synthCorpus(t, st, "notes", 6)
	m := newManager(t, st, nil, jobs.Options{})
	params := jobs.ExperimentParams{Kind: "residual-risk", Corpus: "notes", TrainSplit: "all", K: 3, Seed: 2, Bootstrap: 100,
		Config: map[string]any{"training": map[string]any{"max_iterations": 5}}}
	ex, err := m.Enqueue(ctx, params, "", nil)
	require.NoError(t, err)
	done := wait(t, m, ex.ID)[0]
	require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
	data, err := json.Marshal(done.Result)
	require.NoError(t, err)
	var res experiment.RiskResult
	require.NoError(t, json.Unmarshal(data, &res))
	assert.Equal(t, "residual-risk", res.Kind)
	assert.Equal(t, "residual-cv3-seed2", res.System)
	r := res.Residual
	assert.Positive(t, r.GoldSpans)
	assert.Positive(t, r.Documents)
	assert.InDelta(t, float64(r.Leaked)/float64(r.GoldSpans), r.LeakRate, 1e-12)
	assert.Equal(t, r.Leaked, res.Parrot.Leaks)
	for _, key := range []string{"goldSpans", "leaked", "leakRate", "documents", "documentsWithLeak", "byType"} {
		assert.Contains(t, done.Result["residual"], key)
	}
	for _, key := range []string{"leaks", "hypothesized", "truePositives", "recall", "precision", "byType"} {
		assert.Contains(t, done.Result["parrot"], key)
	}
	assert.Contains(t, done.Result["distinguishability"], "auc")

	// The system set is kept; the same seed again is refused before any tagging.
	c, err := st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	_, err = st.AnnotationSet(ctx, c, "residual-cv3-seed2")
	require.NoError(t, err)
	_, err = m.Enqueue(ctx, params, "", nil)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "%v", err)

	// The kept set scored again as it stands: the same misses, so the same
	// leaks; under a policy that keeps more, fewer spans to leak.
	again := jobs.ExperimentParams{Kind: "residual-risk", Corpus: "notes", TrainSplit: "all", System: "residual-cv3-seed2", Seed: 2, Bootstrap: 100,
		Config: params.Config}
	ex, err = m.Enqueue(ctx, again, "", nil)
	require.NoError(t, err)
	done = wait(t, m, ex.ID)[0]
	require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
	data, err = json.Marshal(done.Result)
	require.NoError(t, err)
	var same experiment.RiskResult
	require.NoError(t, json.Unmarshal(data, &same))
	assert.Equal(t, "residual-cv3-seed2", same.System)
	assert.Equal(t, r.GoldSpans, same.Residual.GoldSpans)
	assert.Equal(t, r.Leaked, same.Residual.Leaked)
	sets, err := c.QueryAnnotationSets().Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, sets, "scoring a set as it stands keeps no new one")
	_, err = m.Enqueue(ctx, jobs.ExperimentParams{Kind: "residual-risk", Corpus: "notes", System: "no-such-set"}, "", nil)
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "%v", err)

	// A release of the corpus resynthesized from that set says what it leaks.
	rs, err := m.Enqueue(ctx, jobs.ResynthesizeParams{Corpus: "notes", Set: "residual-cv3-seed2", Out: "notes-r", Seed: 2}, "", nil)
	require.NoError(t, err)
	require.Equal(t, job.StatusSucceeded, wait(t, m, rs.ID)[0].Status)
	rel, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "notes-r", Name: "risk", Version: "1.0.0"})
	require.NoError(t, err)
	assert.Contains(t, rel.Datasheet, "## Residual risk")
	assert.Contains(t, rel.Datasheet, fmt.Sprintf("%d of %d gold spans", r.Leaked, r.GoldSpans))
	for _, bad := range []jobs.ExperimentParams{{Kind: "residual-risk", Corpus: "notes", Other: "x"},
		{Kind: "residual-risk", Corpus: "notes", Model: "m", K: 3}, {Kind: "cv", Corpus: "notes", Model: "m"},
		{Kind: "residual-risk", Corpus: "notes", Policy: map[string]any{"types": 3}},
		{Kind: "residual-risk", Corpus: "notes", System: "residual-cv3-seed2", K: 3},
		{Kind: "residual-risk", Corpus: "notes", System: "gold"}, {Kind: "cv", Corpus: "notes", System: "s"}} {
		_, err := m.Enqueue(ctx, bad, "", nil)
		assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%+v: %v", bad, err)
	}
}

// With done, cross-validation reads only the notes marked done in the set:
// the accuracy a tagger reaches on what has been annotated so far. Before
// any note is done the job says so; a kind that does not read done refuses
// it at enqueue.
func TestExperimentOnDoneDocuments(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 6)
	m := newManager(t, st, nil, jobs.Options{})
	cv := jobs.ExperimentParams{Kind: "cv", Corpus: "notes", TrainSplit: "all", Done: true, K: 2, Seed: 1, Bootstrap: 100,
		Config: map[string]any{"training": map[string]any{"max_iterations": 5}}}

	ex, err := m.Enqueue(ctx, cv, "", nil)
	require.NoError(t, err)
	failed := wait(t, m, ex.ID)[0]
	assert.Equal(t, job.StatusFailed, failed.Status)
	assert.Contains(t, failed.Error, `no document of corpus "notes" is marked done in set "gold" yet`)

	c, err := st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	gold, err := st.AnnotationSet(ctx, c, "gold")
	require.NoError(t, err)
	docs, err := st.Client.Document.Query().Where(document.CorpusID(c.ID)).Order(ent.Asc(document.FieldID)).All(ctx)
	require.NoError(t, err)
	patients := map[int]bool{}
	marked := 0
	for _, d := range docs {
		if len(patients) == 4 && !patients[d.PatientID] {
			continue // two patients not annotated yet
		}
		patients[d.PatientID] = true
		_, err := st.SetDocumentStatus(ctx, gold.ID, d.ID, 0, documentprogress.StatusDone)
		require.NoError(t, err)
		marked++
	}
	require.Less(t, marked, len(docs))

	ex, err = m.Enqueue(ctx, cv, "", nil)
	require.NoError(t, err)
	done := wait(t, m, ex.ID)[0]
	require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
	res := experimentResult(t, done.Result)
	require.Len(t, res.Rows, 1)
	assert.Equal(t, marked, res.Rows[0].TestDocuments, "each note done tested once, and no other")
	assert.Positive(t, res.Rows[0].F1)

	_, err = m.Enqueue(ctx, jobs.ExperimentParams{Kind: "or", Corpus: "notes", Other: "x", Done: true}, "", nil)
	assert.ErrorContains(t, err, "done: the or experiment does not read it")
}
