package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/document"
	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

func synthCorpus(t *testing.T, st *store.Store, name string, patients int) {
	t.Helper()
	var docs []pipeline.Document
	i := 0
	require.NoError(t, synth.Generate(synth.Options{Patients: patients, Seed: 11}, func(p synth.Patient) error {
		split := "train"
		if i%4 == 3 {
			split = "test"
		}
		for _, d := range p.Docs {
			d.Split = split
			docs = append(docs, d)
		}
		i++
		return nil
	}))
	_, err := st.ImportDocuments(context.Background(), store.ImportOptions{Corpus: name, TagSet: "i2b2-2014"}, docs)
	require.NoError(t, err)
}

func TestTrainAndTagJobs(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 16)
	m := newManager(t, st, nil, jobs.Options{})

	tr, err := m.Enqueue(ctx, jobs.TrainParams{Corpus: "notes", Model: "crf1",
		Config: map[string]any{"training": map[string]any{"max_iterations": 15}}}, "", nil)
	require.NoError(t, err)
	trained := wait(t, m, tr.ID)[0]
	require.Equal(t, job.StatusSucceeded, trained.Status, trained.Error)
	model, err := st.ModelByName(ctx, "crf1")
	require.NoError(t, err)
	assert.NotEmpty(t, model.Artifact)
	assert.NotEmpty(t, model.Hash)
	assert.Equal(t, "deidtag/1", model.Format)
	assert.Contains(t, model.Labels, "DATE")
	assert.Equal(t, "train", model.TrainingSplit)

	tg, err := m.Enqueue(ctx, jobs.TagParams{Model: "crf1", Corpus: "notes", Split: "test"}, "", nil)
	require.NoError(t, err)
	tagged := wait(t, m, tg.ID)[0]
	require.Equal(t, job.StatusSucceeded, tagged.Status, tagged.Error)
	assert.Equal(t, "system-crf1", tagged.Result["setName"])
	f1 := tagged.Result["f1"].(float64)
	t.Logf("strict micro F1 on the synthetic test split: %.4f", f1)
	assert.Greater(t, f1, 0.8, "a tagger trained on 12 synthetic patients tags the other 4 well")

	// A recall-bias curve: more bias, more spans, higher recall; the points
	// are kept in the evaluation's report.
	cv, err := m.Enqueue(ctx, jobs.TagParams{Model: "crf1", Corpus: "notes", Split: "test", Set: "curve",
		Curve: []float64{-3, 0, 1.5}}, "", nil)
	require.NoError(t, err)
	curved := wait(t, m, cv.ID)[0]
	require.Equal(t, job.StatusSucceeded, curved.Status, curved.Error)
	ev, err := st.Client.Evaluation.Get(ctx, int(curved.Result["evaluation"].(float64)))
	require.NoError(t, err)
	var report evaluate.Report
	require.NoError(t, json.Unmarshal(ev.Report, &report))
	pts := report.RecallBiasCurve
	t.Logf("curve: %+v", pts)
	require.Len(t, pts, 3)
	assert.Equal(t, []float64{-3, 0, 1.5}, []float64{pts[0].Bias, pts[1].Bias, pts[2].Bias})
	assert.Less(t, pts[0].Recall, pts[2].Recall, "a bias of 1.5 finds more than one of -3")
	assert.Less(t, pts[0].TP+pts[0].FP, pts[2].TP+pts[2].FP, "and tags more")
	for _, pt := range pts {
		assert.Equal(t, pts[0].TP+pts[0].FN, pt.TP+pt.FN, "every point is scored on the same gold")
	}
	// A curve without gold to score is refused before it is queued.
	_, err = m.Enqueue(ctx, jobs.TagParams{Model: "crf1", Corpus: "notes", Split: "test", Set: "curve2",
		Gold: "nope", Curve: []float64{0}}, "", nil)
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "%v", err)
	assert.ErrorContains(t, err, `no annotation set "nope"`)

	// Tagging twice into the same set is a conflict, and a split without
	// documents invalid: both refused before anything is queued or written.
	queued, err := st.Client.Job.Query().Count(ctx)
	require.NoError(t, err)
	_, err = m.Enqueue(ctx, jobs.TagParams{Model: "crf1", Corpus: "notes", Split: "test"}, "", nil)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "%v", err)
	assert.EqualError(t, err, `corpus "notes" already has an annotation set "system-crf1"`)
	_, err = m.Enqueue(ctx, jobs.TagParams{Model: "crf1", Corpus: "notes", Split: "dev", Set: "empty"}, "", nil)
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%v", err)
	assert.ErrorContains(t, err, `corpus "notes" has no documents in split "dev"`)
	n, err := st.Client.Job.Query().Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, queued, n, "no job row for a refused tag job")
	c, err := st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	_, err = st.AnnotationSet(ctx, c, "empty")
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "no set for a refused tag job: %v", err)
}

// A model can be trained on several splits at once; a split that holds no
// document, or is no split, fails the job with its name.
func TestTrainOnASplitList(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 8)
	m := newManager(t, st, nil, jobs.Options{})
	train := func(model, split string) *ent.Job {
		j, err := m.Enqueue(ctx, jobs.TrainParams{Corpus: "notes", Split: split, Model: model,
			Config: map[string]any{"training": map[string]any{"max_iterations": 5}}}, "", nil)
		require.NoError(t, err)
		return wait(t, m, j.ID)[0]
	}
	docs := func(split string) int {
		c, err := st.CorpusByName(ctx, "notes")
		require.NoError(t, err)
		ds, err := st.LoadSplit(ctx, c, "gold", split)
		require.NoError(t, err)
		return len(ds)
	}
	for model, split := range map[string]string{"one": "train", "both": "train, test", "all": "all"} {
		j := train(model, split)
		require.Equal(t, job.StatusSucceeded, j.Status, j.Error)
		want := docs("train")
		if model != "one" {
			want += docs("test")
		}
		assert.EqualValues(t, want, j.Result["metrics"].(map[string]any)["documents"], split)
	}
	before, err := st.Client.Job.Query().Count(ctx)
	require.NoError(t, err)
	// What the job would read is checked before it is queued: a split
	// without documents says where the corpus's are, a mistyped name is
	// named, and a model name another model has is refused (training would
	// fail only when it saved, minutes later).
	dev := fmt.Sprintf(`no documents in split "dev" (its documents: train %d, test %d); choose one of these splits or "all"`, docs("train"), docs("test"))
	for _, c := range []struct {
		params jobs.TrainParams
		code   apperr.Code
		msg    string
	}{
		{jobs.TrainParams{Corpus: "notes", Split: "train,dev", Model: "bad"}, apperr.Invalid, dev},
		{jobs.TrainParams{Corpus: "notes", Split: "train,tset", Model: "bad"}, apperr.Invalid, `unknown split "tset"`},
		{jobs.TrainParams{Corpus: "notes", Split: "train,", Model: "bad"}, apperr.Invalid, "empty split name"},
		{jobs.TrainParams{Corpus: "nptes", Model: "bad"}, apperr.NotFound, `no corpus named "nptes"`},
		{jobs.TrainParams{Corpus: "notes", Set: "glod", Model: "bad"}, apperr.NotFound, `corpus "notes" has no annotation set "glod"`},
		{jobs.TrainParams{Corpus: "notes", Model: "one"}, apperr.Conflict, `a model named "one" exists`},
	} {
		_, err := m.Enqueue(ctx, c.params, "", nil)
		assert.Equal(t, c.code, apperr.CodeOf(err), "%+v: %v", c.params, err)
		assert.ErrorContains(t, err, c.msg)
	}
	after, err := st.Client.Job.Query().Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, after, "no job row")
}

func TestExternalTagger(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 8)
	// An external "model" that tags every occurrence of "Dr." (code points).
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req jobs.ExternalRequest
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		type span struct {
			Start int    `json:"start"`
			End   int    `json:"end"`
			Label string `json:"label"`
		}
		type doc struct {
			ID    string `json:"id"`
			Spans []span `json:"spans"`
		}
		var out struct {
			Documents []doc `json:"documents"`
		}
		for _, d := range req.Documents {
			od := doc{ID: d.ID, Spans: []span{}}
			runes := []rune(d.Text)
			for i := 0; i+3 <= len(runes); i++ {
				if string(runes[i:i+3]) == "Dr." {
					// A type alone or with its category, as i2b2 writes it.
					label := []string{"HOSPITAL", "LOCATION/HOSPITAL"}[len(od.Spans)%2]
					if strings.Contains(d.Text, "UNKNOWN-LABEL") {
						label = "TITLE"
					}
					od.Spans = append(od.Spans, span{i, i + 3, label})
				}
			}
			out.Documents = append(out.Documents, od)
		}
		json.NewEncoder(w).Encode(out)
	}))
	defer ext.Close()
	_, err := st.RegisterExternalModel(ctx, "titles", ext.URL, []string{"HOSPITAL"}, "")
	require.NoError(t, err)
	m := newManager(t, st, nil, jobs.Options{})
	tg, err := m.Enqueue(ctx, jobs.TagParams{Model: "titles", Corpus: "notes"}, "", nil)
	require.NoError(t, err)
	done := wait(t, m, tg.ID)[0]
	require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
	c, _ := st.CorpusByName(ctx, "notes")
	docs, err := st.LoadDocuments(ctx, c, "system-titles")
	require.NoError(t, err)
	n := 0
	for _, d := range docs {
		n += strings.Count(d.Text, "Dr.")
		for _, s := range d.Spans {
			assert.Equal(t, "Dr.", s.Text)
			assert.Equal(t, [2]string{"LOCATION", "HOSPITAL"}, [2]string{s.Category, s.Type}, "the corpus's tag set gives the category")
		}
		assert.Equal(t, strings.Count(d.Text, "Dr."), len(d.Spans))
	}
	assert.Positive(t, n)

	// A label the corpus's tag set lacks fails the job, named.
	other := []pipeline.Document{{ID: "900-01", Patient: "900", Text: "UNKNOWN-LABEL: seen by Dr. Li."}}
	_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "other", TagSet: "i2b2-2014"}, other)
	require.NoError(t, err)
	tg, err = m.Enqueue(ctx, jobs.TagParams{Model: "titles", Corpus: "other"}, "", nil)
	require.NoError(t, err)
	done = wait(t, m, tg.ID)[0]
	require.Equal(t, job.StatusFailed, done.Status)
	assert.Contains(t, done.Error, `document 900-01: span 23-26 label "TITLE": unknown type "TITLE" in tag set i2b2-2014`)
}

// TestExternalTaggerThatNeverAnswers: an endpoint that accepts the request
// and never answers fails the job after the client's bounded attempts, with
// an error naming the endpoint, instead of holding the job for ever.
func TestExternalTaggerThatNeverAnswers(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 2)
	var calls atomic.Int32
	stop := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body) // the server notices a client leaving only once the body is read
		select {
		case <-r.Context().Done(): // the client gave up
		case <-stop:
		}
	}))
	defer hung.Close()
	defer close(stop)
	_, err := st.RegisterExternalModel(ctx, "hung", hung.URL, []string{"NAME"}, "")
	require.NoError(t, err)

	m := newManager(t, st, nil, jobs.Options{External: jobs.ExternalOptions{Timeout: 200 * time.Millisecond, Attempts: 2, Backoff: 10 * time.Millisecond}})
	tg, err := m.Enqueue(ctx, jobs.TagParams{Model: "hung", Corpus: "notes"}, "", nil)
	require.NoError(t, err)
	done := wait(t, m, tg.ID)[0]
	assert.Equal(t, job.StatusFailed, done.Status)
	// The part that asked failed with that error, and so did the job.
	assert.Regexp(t, `^part 1 of 1 \(job \d+\) failed: external tagger hung gave no usable answer \(tried 2 times; the server's log says why\)$`, done.Error)
	assert.NotContains(t, done.Error, hung.URL, "the error names the model, not its address")
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(jobs.Err(done)), "the job fails with its part's code")
	assert.Equal(t, int32(2), calls.Load(), "two attempts, and the job is not retried on top of them")
	assert.Equal(t, 1, done.Attempts)

	// The set it left half written does not stop a new job, which makes it
	// anew: only a finished set, or one being written, is refused.
	again, err := m.Enqueue(ctx, jobs.TagParams{Model: "hung", Corpus: "notes"}, "", nil)
	require.NoError(t, err)
	redone := wait(t, m, again.ID)[0]
	assert.Equal(t, job.StatusFailed, redone.Status)
	assert.Contains(t, redone.Error, "gave no usable answer", "it failed on the endpoint again, not on the set")
}

// TestExternalTaggerFollowsNoRedirect: an endpoint answering 307 to another
// port gets nothing sent there; the job's error is the same as for a port
// where nothing listens (no port-scan oracle) and names no address; each
// batch sent is audited with its documents' ids.
func TestExternalTaggerFollowsNoRedirect(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 2)
	var stolen atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { stolen.Add(1) }))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // a port where nothing listens
	_, err := st.RegisterExternalModel(ctx, "moved", redirect.URL, []string{"NAME"}, "")
	require.NoError(t, err)
	_, err = st.RegisterExternalModel(ctx, "gone", closed.URL, []string{"NAME"}, "")
	require.NoError(t, err)
	m := newManager(t, st, nil, jobs.Options{External: jobs.ExternalOptions{Attempts: 1}})
	errs := map[string]string{}
	for _, name := range []string{"moved", "gone"} {
		tg, err := m.Enqueue(ctx, jobs.TagParams{Model: name, Corpus: "notes"}, "", nil)
		require.NoError(t, err)
		done := wait(t, m, tg.ID)[0]
		require.Equal(t, job.StatusFailed, done.Status)
		errs[name] = strings.ReplaceAll(done.Error, name, "MODEL")
		assert.NotRegexp(t, `127\.0\.0\.1|:\d{2,5}\b|refused|redirect to`, done.Error)
	}
	assert.Zero(t, stolen.Load(), "nothing reached the port the redirect named")
	assert.Regexp(t, `gave no usable answer`, errs["moved"])
	assert.Regexp(t, `gave no usable answer`, errs["gone"])

	entries, err := st.AuditEntries(ctx, 50)
	require.NoError(t, err)
	c, err := st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	ids, err := st.Client.Document.Query().Where(document.CorpusID(c.ID)).IDs(ctx)
	require.NoError(t, err)
	var sent []string
	for _, e := range entries {
		if e.Action == "send" && e.Target == "external.moved" {
			sent = append(sent, e.Ids...)
		}
	}
	assert.ElementsMatch(t, idStrings(ids), sent, "every document sent is audited by id")
}

func idStrings(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(id)
	}
	return out
}

// TestExternalTaggerRetriesAFailureThatPasses: a 503 then an answer tags.
func TestExternalTaggerRetriesAFailureThatPasses(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 2)
	var calls atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		var req jobs.ExternalRequest
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		out := map[string]any{"documents": []any{}}
		for _, d := range req.Documents {
			out["documents"] = append(out["documents"].([]any), map[string]any{"id": d.ID, "spans": []any{}})
		}
		json.NewEncoder(w).Encode(out)
	}))
	defer flaky.Close()
	_, err := st.RegisterExternalModel(ctx, "flaky", flaky.URL, []string{"NAME"}, "")
	require.NoError(t, err)
	m := newManager(t, st, nil, jobs.Options{External: jobs.ExternalOptions{Backoff: 10 * time.Millisecond}})
	tg, err := m.Enqueue(ctx, jobs.TagParams{Model: "flaky", Corpus: "notes"}, "", nil)
	require.NoError(t, err)
	done := wait(t, m, tg.ID)[0]
	require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
	assert.Equal(t, int32(2), calls.Load())
}

// A tag job interrupted after some batches were written, then retried, ends
// with the set and the evaluation of an uninterrupted run; meanwhile its set
// is not taken for a finished one.
func TestTagJobResumesWhereItStopped(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 14)
	m := newManager(t, st, nil, jobs.Options{})
	tr, err := m.Enqueue(ctx, jobs.TrainParams{Corpus: "notes", Model: "crf1",
		Config: map[string]any{"training": map[string]any{"max_iterations": 5}}}, "", nil)
	require.NoError(t, err)
	require.Equal(t, job.StatusSucceeded, wait(t, m, tr.ID)[0].Status)
	c, err := st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	total, err := st.CountDocuments(ctx, c, "")
	require.NoError(t, err)

	var (
		mu        sync.Mutex // parts run at once
		batches   int
		interrupt bool
	)
	defer jobs.SetTagTesting(6, 12, func(done int) error {
		mu.Lock()
		defer mu.Unlock()
		batches++
		if interrupt && batches == 2 {
			// Not retried by itself: the test looks at the set in between.
			return apperr.New(apperr.Invalid, "interrupted after two batches")
		}
		return nil
	})()
	tagInto := func(set string) *ent.Job {
		j, err := m.Enqueue(ctx, jobs.TagParams{Model: "crf1", Corpus: "notes", Set: set}, "", nil)
		require.NoError(t, err)
		return wait(t, m, j.ID)[0]
	}
	whole := tagInto("whole")
	require.Equal(t, job.StatusSucceeded, whole.Status, whole.Error)
	all := batches
	require.Greater(t, all, 3, "the corpus takes several batches")
	parts, err := st.ChildJobs(ctx, whole.ID)
	require.NoError(t, err)
	require.Greater(t, len(parts), 2, "the corpus takes several parts")

	mu.Lock()
	batches, interrupt = 0, true
	mu.Unlock()
	cut := tagInto("resumed")
	require.Equal(t, job.StatusFailed, cut.Status)
	assert.Contains(t, cut.Error, "interrupted after two batches")
	mu.Lock()
	require.Less(t, batches, all, "the job stopped before the end")
	mu.Unlock()
	_, err = st.AnnotationSet(ctx, c, "resumed")
	require.ErrorContains(t, err, `annotation set "resumed" of corpus "notes" is being written by job`)
	ev, err := m.Enqueue(ctx, jobs.EvaluateParams{Corpus: "notes", Gold: "gold", System: "resumed"}, "", nil)
	require.NoError(t, err)
	refused := wait(t, m, ev.ID)[0]
	assert.Equal(t, job.StatusFailed, refused.Status)
	assert.Contains(t, refused.Error, "is being written")

	mu.Lock()
	interrupt = false
	mu.Unlock()
	_, err = m.Retry(ctx, cut.ID)
	require.NoError(t, err)
	resumed := wait(t, m, cut.ID)[0]
	require.Equal(t, job.StatusSucceeded, resumed.Status, resumed.Error)
	assert.EqualValues(t, total, resumed.Result["documents"], "every document counts, also those of the first attempt")
	assert.EqualValues(t, total, whole.Result["documents"])

	load := func(set string) []pipeline.Document {
		docs, err := st.LoadDocuments(ctx, c, set)
		require.NoError(t, err)
		return docs
	}
	assert.Equal(t, load("whole"), load("resumed"))
	report := func(j *ent.Job) map[string]any {
		e, err := st.Client.Evaluation.Get(ctx, int(j.Result["evaluation"].(float64)))
		require.NoError(t, err)
		var r map[string]any
		require.NoError(t, json.Unmarshal(e.Report, &r))
		return r
	}
	assert.Equal(t, report(whole), report(resumed))
	set, err := st.AnnotationSet(ctx, c, "resumed")
	require.NoError(t, err)
	assert.NotContains(t, set.Provenance, "writing")
	assert.NotContains(t, set.Provenance, "written")
}
