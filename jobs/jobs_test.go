package jobs_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/artifact"
	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/phi"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// slow counts to n, reporting progress, until done or cancelled.
func slow(n int, step time.Duration) jobs.Handler {
	return func(ctx context.Context, run *jobs.Run) (jobs.Result, error) {
		for i := 0; i < n; i++ {
			run.Progress(i, n, "counting")
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(step):
			}
		}
		return jobs.Result{"counted": n}, nil
	}
}

// testJob asks for a job of a test's own handler, with no parameters.
type testJob struct{ kind string }

func (j testJob) JobKind() string { return j.kind }

func newManager(t testing.TB, st *store.Store, extra map[string]jobs.Handler, opt jobs.Options) *jobs.Manager {
	t.Helper()
	h := jobs.Handlers()
	for k, v := range extra {
		h[k] = v
	}
	opt.Work = true
	if opt.HeartbeatEvery == 0 {
		opt.HeartbeatEvery = 100 * time.Millisecond
	}
	m, err := jobs.New(context.Background(), st, h, opt)
	require.NoError(t, err)
	require.NoError(t, m.Start(context.Background()))
	t.Cleanup(func() { m.Stop(context.Background()) })
	return m
}

func wait(t *testing.T, m *jobs.Manager, ids ...int) []*ent.Job {
	t.Helper()
	// A deadline for a hang, not a speed bar: a training job takes a minute
	// on a heavily shared machine.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	js, err := m.Wait(ctx, ids)
	require.NoError(t, err)
	return js
}

func TestJobLifecycle(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b)
			m := newManager(t, st, map[string]jobs.Handler{
				"slow": slow(1000, 10*time.Millisecond),
				"fail": func(context.Context, *jobs.Run) (jobs.Result, error) {
					return nil, apperr.New(apperr.Invalid, "bad parameters")
				},
			}, jobs.Options{})

			j, err := m.Enqueue(ctx, jobs.PingParams{}, "local:tester", nil)
			require.NoError(t, err)
			assert.Equal(t, job.StatusQueued, j.Status)
			done := wait(t, m, j.ID)[0]
			assert.Equal(t, job.StatusSucceeded, done.Status)
			assert.Equal(t, true, done.Result["pong"])
			assert.Equal(t, 1, done.Attempts)
			assert.Equal(t, "local:tester", done.CreatedBy)
			assert.NotNil(t, done.StartedAt)
			assert.NotNil(t, done.FinishedAt)

			// Invalid input fails at once, without retries.
			f, err := m.Enqueue(ctx, testJob{"fail"}, "", nil)
			require.NoError(t, err)
			failed := wait(t, m, f.ID)[0]
			assert.Equal(t, job.StatusFailed, failed.Status)
			assert.Equal(t, "bad parameters", failed.Error)
			assert.Equal(t, 1, failed.Attempts)

			// A subscriber sees progress move, then the end.
			s, err := m.Enqueue(ctx, testJob{"slow"}, "", nil)
			require.NoError(t, err)
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			updates, err := m.Watch(wctx, s.ID)
			require.NoError(t, err)
			var seen []*ent.Job
			progressed, cancelled := false, false
			for u := range updates {
				seen = append(seen, u)
				if u.Status == job.StatusRunning && u.ProgressDone > 0 {
					progressed = true
					if len(seen) > 3 && !cancelled { // once: a second could meet the job ended by the first
						_, err := m.Cancel(ctx, s.ID)
						require.NoError(t, err)
						cancelled = true
					}
				}
			}
			require.True(t, progressed, "no progress update seen")
			last := seen[len(seen)-1]
			assert.Equal(t, job.StatusCancelled, last.Status)
			assert.Nil(t, last.Result, "a cancelled job leaves no result")
			require.NotNil(t, last.FinishedAt)

			// A cancelled job can be retried; a succeeded one cannot.
			_, err = m.Retry(ctx, done.ID)
			assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
			_, err = m.Cancel(ctx, done.ID)
			assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))

			_, err = m.Enqueue(ctx, testJob{"nope"}, "", nil)
			assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
		})
	}
}

func TestCancelStopsRunningJobPromptly(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	var started atomic.Bool
	m := newManager(t, st, map[string]jobs.Handler{
		"forever": func(ctx context.Context, run *jobs.Run) (jobs.Result, error) {
			started.Store(true)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}, jobs.Options{})
	j, err := m.Enqueue(ctx, testJob{"forever"}, "", nil)
	require.NoError(t, err)
	require.Eventually(t, started.Load, 10*time.Second, 10*time.Millisecond)
	asked := time.Now()
	_, err = m.Cancel(ctx, j.ID)
	require.NoError(t, err)
	got := wait(t, m, j.ID)[0]
	assert.Equal(t, job.StatusCancelled, got.Status)
	t.Logf("cancelled after %v", got.FinishedAt.Sub(asked))
	assert.WithinDuration(t, asked, *got.FinishedAt, 2*time.Second)
}

func TestEnqueueIsTransactional(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b)
			m, err := jobs.New(ctx, st, jobs.Handlers(), jobs.Options{}) // enqueue only
			require.NoError(t, err)
			boom := errors.New("boom")
			input := store.ArtifactSpec{Name: "written-with-the-job", ContentType: "text/plain"}
			// The input is stored in chunks before the job's transaction,
			// which names them.
			stored := func() *store.Chunks {
				c, err := st.WriteChunks(ctx, func(w io.Writer) error {
					_, err := w.Write([]byte("input"))
					return err
				})
				require.NoError(t, err)
				return c
			}
			chunks := stored()
			_, err = m.Enqueue(ctx, jobs.PingParams{}, "", func(ctx context.Context, tx *store.JobTx) error {
				if _, err := tx.ArtifactOf(ctx, input, chunks); err != nil {
					return err
				}
				return boom
			})
			require.ErrorIs(t, err, boom)
			n, err := st.Client.Job.Query().Count(ctx)
			require.NoError(t, err)
			assert.Zero(t, n, "no job row after a failed prepare")
			written := func() int {
				n, err := st.Client.Artifact.Query().Where(artifact.Name(input.Name)).Count(ctx)
				require.NoError(t, err)
				return n
			}
			assert.Zero(t, written(), "the prepare's write is rolled back too")
			var queued int
			require.NoError(t, st.DB.QueryRow("SELECT COUNT(*) FROM river_job").Scan(&queued))
			assert.Zero(t, queued)

			chunks = stored()
			j, err := m.Enqueue(ctx, jobs.PingParams{}, "", func(ctx context.Context, tx *store.JobTx) error {
				_, err := tx.ArtifactOf(ctx, input, chunks)
				return err
			})
			require.NoError(t, err)
			require.NoError(t, st.DB.QueryRow("SELECT COUNT(*) FROM river_job").Scan(&queued))
			assert.Equal(t, 1, queued)
			assert.Equal(t, 1, written())
			assert.Equal(t, "ping", j.Kind)
		})
	}
}

// Parameters a job cannot run with are refused when it is queued, with the
// field named, and leave no job behind.
func TestBadParametersAreRefusedAtEnqueue(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	m, err := jobs.New(ctx, st, jobs.Handlers(), jobs.Options{}) // enqueue only
	require.NoError(t, err)
	cases := []struct {
		params jobs.Params
		want   string
	}{
		{jobs.TrainParams{Corpus: "c"}, "model is required"},
		{jobs.TrainParams{Corpus: "c", Model: "m", Split: "train,,dev"}, "empty split name"},
		{jobs.TrainParams{Corpus: "c", Model: "m", Config: map[string]any{"training": map[string]any{"max_iteration": 10}}}, `config: `},
		{jobs.TrainParams{Corpus: "c", Model: "m", Config: map[string]any{"training": map[string]any{"max_iterations": 0}}}, "max_iterations must be >= 1"},
		{jobs.TagParams{Corpus: "c"}, "model is required"},
		{jobs.TagParams{Model: "m", Corpus: "c", Curve: make([]float64, 100)}, "curve: 100 biases"},
		{jobs.ResynthesizeParams{Corpus: "c", Out: "c"}, "out: the surrogate corpus needs a name of its own"},
		{jobs.ResynthesizeParams{Corpus: "c", Out: "d", Policy: map[string]any{"language": "fr"}}, `policy: language "fr"`},
		{jobs.ExperimentParams{Corpus: "c", Kind: "cvv"}, `kind: unknown experiment kind "cvv"`},
		{jobs.ExperimentParams{Corpus: "c", Kind: "cross"}, "other: the cross experiment needs a second corpus"},
		{jobs.ExportParams{Corpus: "c", Set: "gold", Format: "i2b3"}, `format: unknown format "i2b3"`},
		{jobs.EvaluateParams{Corpus: "c", Gold: "gold", System: "s", Metric: "bleu"}, `metric: unknown metric "bleu"`},
		{jobs.EvaluateParams{Corpus: "c", Gold: "gold"}, "system is required"},
	}
	for _, c := range cases {
		_, err := m.Enqueue(ctx, c.params, "", nil)
		if assert.Error(t, err, "%#v", c.params) {
			assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%v", err)
			assert.Contains(t, err.Error(), c.want)
		}
	}
	_, err = m.EnqueueImport(ctx, jobs.ImportParams{Corpus: "c", Format: "xml"}, nil, "")
	assert.ErrorContains(t, err, `format: unknown format "xml"`)
	n, err := st.Client.Job.Query().Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "no job row for refused parameters")
}

func TestStaleRunningJobIsRequeued(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	var runs atomic.Int32
	handlers := map[string]jobs.Handler{"count": func(ctx context.Context, run *jobs.Run) (jobs.Result, error) {
		runs.Add(1)
		return jobs.Result{"ok": true}, nil
	}}
	// A job that a dead worker left running: its heartbeat is old.
	enq, err := jobs.New(ctx, st, handlers, jobs.Options{})
	require.NoError(t, err)
	j, err := enq.Enqueue(ctx, testJob{"count"}, "", nil)
	require.NoError(t, err)
	old := time.Now().Add(-time.Hour)
	require.NoError(t, st.Client.Job.UpdateOneID(j.ID).SetStatus(job.StatusRunning).SetHeartbeatAt(old).Exec(ctx))
	_, err = st.DB.Exec("UPDATE river_job SET state = 'running', attempt = 1 WHERE id = ?", *j.RiverJobID)
	require.NoError(t, err)

	m := newManager(t, st, handlers, jobs.Options{StaleAfter: time.Second})
	got := wait(t, m, j.ID)[0]
	assert.Equal(t, job.StatusSucceeded, got.Status)
	assert.Equal(t, int32(1), runs.Load())
	assert.NotEqual(t, *j.RiverJobID, *got.RiverJobID, "requeued as a new queue entry")
}

func TestExportAndEvaluateJobs(t *testing.T) {
	ctx := context.Background()
	st, files := testdataCorpus(t)
	// A "system" that is the gold with one document's spans missing.
	var sys []formats.File
	for _, f := range files {
		if f.Name == "101-02.xml" {
			continue
		}
		sys = append(sys, f)
	}
	_, err := st.Import(ctx, store.ImportOptions{Corpus: "c", Set: "run1", Kind: "system"}, sys)
	require.NoError(t, err)

	m := newManager(t, st, nil, jobs.Options{})
	ex, err := m.Enqueue(ctx, jobs.ExportParams{Corpus: "c", Set: "gold", Format: "i2b2"}, "", nil)
	require.NoError(t, err)
	ev, err := m.Enqueue(ctx, jobs.EvaluateParams{Corpus: "c", Gold: "gold", System: "run1"}, "", nil)
	require.NoError(t, err)
	js := wait(t, m, ex.ID, ev.ID)
	for _, j := range js {
		require.Equal(t, job.StatusSucceeded, j.Status, "%s: %s", j.Kind, j.Error)
	}

	exJob, _ := m.Get(ctx, ex.ID)
	a, err := st.Artifact(ctx, int(exJob.Result["artifact"].(float64)))
	require.NoError(t, err)
	data, err := io.ReadAll(st.ArtifactContent(ctx, a))
	require.NoError(t, err)
	members, err := formats.Unzip(a.Name, data)
	require.NoError(t, err)
	assert.Len(t, members, 3)
	assert.EqualValues(t, 3, exJob.Result["files"])

	evJob, _ := m.Get(ctx, ev.ID)
	e, err := st.Client.Evaluation.Get(ctx, int(evJob.Result["evaluation"].(float64)))
	require.NoError(t, err)
	// 101-02 has 3 gold spans the system missed: 10 of 13 found, all correct.
	assert.InDelta(t, 1.0, e.Precision, 1e-9)
	assert.InDelta(t, 10.0/13, e.Recall, 1e-9)
	report, err := st.EvaluationReport(e)
	require.NoError(t, err)
	assert.Equal(t, 3, report.Documents-0)
}

// An export job whose worker died after the archive was stored is requeued,
// and its retry reports the stored archive as the first attempt did, files
// included, without writing it again.
func TestExportJobRetryReportsTheStoredArchive(t *testing.T) {
	ctx := context.Background()
	st, _ := testdataCorpus(t)
	m := newManager(t, st, nil, jobs.Options{StaleAfter: time.Second})
	j, err := m.Enqueue(ctx, jobs.ExportParams{Corpus: "c", Set: "gold", Format: "brat"}, "", nil)
	require.NoError(t, err)
	first := wait(t, m, j.ID)[0]
	require.Equal(t, job.StatusSucceeded, first.Status, first.Error)
	assert.EqualValues(t, 6, first.Result["files"], "brat: a text and an annotation file per note")

	// The worker died after storing the archive, before finishing the job.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, st.Client.Job.UpdateOneID(j.ID).SetStatus(job.StatusRunning).SetHeartbeatAt(old).
		ClearResult().ClearFinishedAt().Exec(ctx))
	retried := wait(t, m, j.ID)[0]
	require.Equal(t, job.StatusSucceeded, retried.Status, retried.Error)
	assert.Equal(t, 2, retried.Attempts)
	assert.Equal(t, first.Result, retried.Result)
	n, err := st.Client.Artifact.Query().Where(artifact.JobID(j.ID)).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the archive was not written again")
}

func TestImportJob(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	m := newManager(t, st, nil, jobs.Options{})
	p := jobs.ImportParams{Corpus: "c", TagSet: "i2b2-2014", Split: "train"}
	j, err := m.EnqueueImport(ctx, p, formats.Files(files), "local:tester")
	require.NoError(t, err)
	assert.NotZero(t, j.Params["artifact"], "the files are stored with the job")
	done := wait(t, m, j.ID)[0]
	require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
	assert.Equal(t, float64(3), done.Result["documents"])
	assert.Equal(t, float64(13), done.Result["spans"])

	// What a retried attempt does when its predecessor committed: the
	// documents it finds as they are count as imported, a changed one is a
	// conflict still.
	opt := store.ImportOptions{Corpus: "c", Set: "gold", Resume: true}
	again, err := st.Import(ctx, opt, files)
	require.NoError(t, err)
	assert.Equal(t, 3, again.Documents)
	assert.Equal(t, 13, again.Spans)
	changed := append([]formats.File(nil), files...)
	changed[0].Data = []byte(strings.Replace(string(changed[0].Data), "Record date", "Record Date", 1))
	_, err = st.Import(ctx, opt, changed)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "a changed text is not the same import")

	// A bad file fails the job with the file's name and changes nothing.
	bad := []formats.File{{Name: "900-01.xml", Data: []byte("<r><TEXT>x</TEXT><TAGS><DATE id=\"P0\" start=\"0\" end=\"5\" TYPE=\"DATE\"/></TAGS></r>")}}
	j, err = m.EnqueueImport(ctx, p, formats.Files(bad), "local:tester")
	require.NoError(t, err)
	failed := wait(t, m, j.ID)[0]
	assert.Equal(t, job.StatusFailed, failed.Status)
	assert.Contains(t, failed.Error, "900-01.xml")
	n, err := st.Client.Document.Query().Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, n)

	// A file the user named that the format does not read is refused before
	// anything is queued.
	named := []formats.File{files[0], {Name: "notes.jsonl", Path: "in/notes.jsonl", Data: []byte(`{"id":"n1","text":"x"}`), Given: true}}
	_, err = m.EnqueueImport(ctx, p, formats.Files(named), "local:tester")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "in/notes.jsonl: format i2b2 reads .xml files only (try --format jsonl)")
}

// TestJobsRunAsTheirCreator: a job reaches what its creator may see when it
// runs, not when it was queued: an annotator's export of a corpus taken
// away from it meanwhile fails, and so does any job of a disabled account.
func TestJobsRunAsTheirCreator(t *testing.T) {
	ctx := context.Background()
	st, files := testdataCorpus(t)
	u, err := st.CreateUser(ctx, "ann", auth.Annotator)
	require.NoError(t, err)
	_, err = st.AssignCorpus(ctx, "ann", "c", true)
	require.NoError(t, err)
	// ann annotates c openly: it reads the gold it exports.
	c, err := st.CorpusByName(ctx, "c")
	require.NoError(t, err)
	require.NoError(t, st.Client.AnnotationSet.Create().SetCorpusID(c.ID).SetName("b:ann").SetKind(annotationset.KindAnnotator).
		SetAnnotator("ann").SetOpen(true).Exec(ctx))
	m := newManager(t, st, nil, jobs.Options{})
	export := func(by string) *ent.Job {
		j, err := m.Enqueue(ctx, jobs.ExportParams{Corpus: "c", Set: "gold", Format: "i2b2"}, by, nil)
		require.NoError(t, err)
		return wait(t, m, j.ID)[0]
	}
	first := export("ann")
	require.Equal(t, job.StatusSucceeded, first.Status)
	annCtx := func() context.Context { return auth.NewContext(ctx, auth.NewViewer(u.ID, "ann", auth.Annotator)) }
	archive := int(first.Result["artifact"].(float64))
	_, err = st.Artifact(annCtx(), archive)
	require.NoError(t, err, "the export is its creator's")
	// An annotator's import job reads the files it uploaded.
	imp, err := m.EnqueueImport(ctx, jobs.ImportParams{Corpus: "c", Set: "ann-1"}, formats.Files(files), "ann")
	require.NoError(t, err)
	done := wait(t, m, imp.ID)[0]
	require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
	// A curator's job runs only while its creator is one: here an
	// annotator's, as a curator demoted after queueing it would have.
	der, err := m.Enqueue(ctx, jobs.DeriveParams{Corpus: "c", Set: "gold", Out: "c-hipaa", Mapping: "i2b2-hipaa"}, "ann", nil)
	require.NoError(t, err)
	done = wait(t, m, der.ID)[0]
	assert.Equal(t, job.StatusFailed, done.Status)
	assert.Contains(t, done.Error, "the account ann that queued this job may no longer run it")
	assert.Contains(t, done.Error, "curator")
	_, err = st.CorpusByName(ctx, "c-hipaa")
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "nothing derived")

	_, err = st.AssignCorpus(ctx, "ann", "c", false)
	require.NoError(t, err)
	_, err = st.Artifact(annCtx(), archive)
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "the archive of a corpus taken away is gone with it")
	done = export("ann")
	assert.Equal(t, job.StatusFailed, done.Status)
	assert.Contains(t, done.Error, `no corpus named "c"`)

	disabled := true
	_, err = st.UpdateUser(ctx, "ann", nil, &disabled)
	require.NoError(t, err)
	done = export("ann")
	assert.Equal(t, job.StatusFailed, done.Status)
	assert.Contains(t, done.Error, "the account ann that queued this job is disabled")
	done = export("nobody")
	assert.Contains(t, done.Error, "the account nobody that queued this job no longer exists")

	assert.Equal(t, job.StatusSucceeded, export("local:op").Status, "the CLI's local operator is an admin")
	assert.Equal(t, job.StatusSucceeded, export("").Status, "the process itself")
}

// TestWorkersStartedByAnAccountRunEveryonesJobs: a CLI command with --token
// starts workers with its account's context; they still run (as their own
// creators) the jobs of others instead of taking them for deleted.
func TestWorkersStartedByAnAccountRunEveryonesJobs(t *testing.T) {
	st := storetest.Open(t, storetest.SQLite)
	u, err := st.CreateUser(context.Background(), "rita", auth.Researcher)
	require.NoError(t, err)
	ctx := auth.NewContext(context.Background(), auth.NewViewer(u.ID, "rita", auth.Researcher))
	m, err := jobs.New(ctx, st, jobs.Handlers(), jobs.Options{Work: true, HeartbeatEvery: 100 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, m.Start(ctx))
	t.Cleanup(func() { m.Stop(context.Background()) })
	j, err := m.Enqueue(context.Background(), jobs.PingParams{}, "local:op", nil)
	require.NoError(t, err)
	assert.Equal(t, job.StatusSucceeded, wait(t, m, j.ID)[0].Status)
}

// TestDisablingAnAccountStopsItsRunningJobs: the heartbeat checks the
// creator, so a job does not run on for an account disabled meanwhile.
func TestDisablingAnAccountStopsItsRunningJobs(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	_, err := st.CreateUser(ctx, "ann", auth.Annotator)
	require.NoError(t, err)
	started := make(chan struct{})
	m := newManager(t, st, map[string]jobs.Handler{
		"long": func(ctx context.Context, run *jobs.Run) (jobs.Result, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}, jobs.Options{})
	j, err := m.Enqueue(ctx, testJob{"long"}, "ann", nil)
	require.NoError(t, err)
	<-started
	disabled := true
	_, err = st.UpdateUser(ctx, "ann", nil, &disabled)
	require.NoError(t, err)
	done := wait(t, m, j.ID)[0]
	assert.Equal(t, job.StatusFailed, done.Status)
	assert.Contains(t, done.Error, "the account ann that queued this job is disabled")
}

// testdataCorpus opens a SQLite store with the i2b2 test files imported as
// corpus "c", and returns the files.
func testdataCorpus(t *testing.T) (*store.Store, []formats.File) {
	t.Helper()
	st := storetest.Open(t, storetest.SQLite)
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(context.Background(), store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, files)
	require.NoError(t, err)
	return st, files
}

// A mistyped corpus, set, split or model is the error of the request that
// names it, before anything is queued: not a job that fails in a worker.
func TestMistypedNamesAreRefusedAtEnqueue(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	synthCorpus(t, st, "notes", 4)
	synthCorpus(t, st, "plain", 2)
	hipaa, err := phi.LoadMapping("i2b2-hipaa")
	require.NoError(t, err)
	_, err = st.Derive(ctx, store.DeriveOptions{Source: "notes", Set: "gold", Mapping: hipaa, Out: "notes-hipaa"}) // names notes as its source
	require.NoError(t, err)
	m, err := jobs.New(ctx, st, jobs.Handlers(), jobs.Options{}) // enqueue only
	require.NoError(t, err)
	cases := []struct {
		params jobs.Params
		code   apperr.Code
		want   string
	}{
		{jobs.TagParams{Model: "crf9", Corpus: "notes"}, apperr.NotFound, `no model named "crf9"`},
		{jobs.ResynthesizeParams{Corpus: "nptes", Out: "r"}, apperr.NotFound, `no corpus named "nptes"`},
		{jobs.ResynthesizeParams{Corpus: "notes", Set: "glod", Out: "r"}, apperr.NotFound, `corpus "notes" has no annotation set "glod"`},
		{jobs.ResynthesizeParams{Corpus: "notes", Out: "plain"}, apperr.Conflict, `corpus "plain" exists and holds original text`},
		{jobs.ResynthesizeParams{Corpus: "notes", Out: "notes-hipaa"}, apperr.Conflict, `corpus "notes-hipaa" exists and holds original text`},
		{jobs.ExperimentParams{Kind: "cv", Corpus: "notes", K: 1}, apperr.Invalid, "k: cross-validation needs at least 2 folds"},
		{jobs.ExperimentParams{Kind: "cv", Corpus: "notes", TrainSplit: "dev"}, apperr.Invalid, `corpus "notes" has no documents in split "dev"`},
		{jobs.ExperimentParams{Kind: "cv", Corpus: "notes", TrainSplit: "train,test"}, apperr.Invalid, "trainSplit: one split name"},
		{jobs.ExperimentParams{Kind: "cross", Corpus: "notes", Other: "nptes"}, apperr.NotFound, `no corpus named "nptes"`},
	}
	for _, c := range cases {
		_, err := m.Enqueue(ctx, c.params, "", nil)
		if assert.Error(t, err, "%#v", c.params) {
			assert.Equal(t, c.code, apperr.CodeOf(err), "%v", err)
			assert.Contains(t, err.Error(), c.want)
		}
	}
	n, err := st.Client.Job.Query().Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "no job row for refused parameters")
	// The same names spelled right are queued.
	_, err = m.Enqueue(ctx, jobs.ResynthesizeParams{Corpus: "notes", Out: "r"}, "", nil)
	assert.NoError(t, err)
}

// Processes that start at once on a new database (a server and its
// workers) all open it: its tables and the job queue's are migrated by one
// after another, never by two at once.
func TestProcessesStartTogetherOnANewDatabase(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			dsn := storetest.DSN(t, b)
			errs := make(chan error, 4)
			for range cap(errs) {
				go func() {
					st, err := store.Open(context.Background(), dsn)
					if err != nil {
						errs <- err
						return
					}
					defer st.Close()
					m, err := jobs.New(context.Background(), st, jobs.Handlers(), jobs.Options{})
					if err == nil {
						m.Stop(context.Background())
					}
					errs <- err
				}()
			}
			for range cap(errs) {
				assert.NoError(t, <-errs)
			}
		})
	}
}
