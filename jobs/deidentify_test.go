package jobs_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/job"
	"deidcorpus/internal/shared"
	"deidcorpus/jobs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/gate"
	"deidcorpus/pipeline/synth"
	"deidcorpus/pipeline/tagger"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// deidentifyBench is a store with a tiny calibrated model ("m", trained on
// the synthetic demo's notes with two calibration folds) and a job manager.
type deidentifyBench struct {
	st *store.Store
	m  *jobs.Manager
}

func newDeidentifyBench(t *testing.T, train func(st *store.Store), p jobs.TrainParams) *deidentifyBench {
	t.Helper()
	st := storetest.Open(t, storetest.SQLite)
	train(st)
	b := &deidentifyBench{st: st, m: newManager(t, st, nil, jobs.Options{})}
	b.run(t, p)
	return b
}

// run queues p and waits for it to succeed.
func (b *deidentifyBench) run(t *testing.T, p jobs.Params) *ent.Job {
	t.Helper()
	j, err := b.m.Enqueue(context.Background(), p, "", nil)
	require.NoError(t, err)
	done := wait(t, b.m, j.ID)[0]
	require.Equal(t, job.StatusSucceeded, done.Status, done.Error)
	return done
}

// deidentify runs a deidentify job to its end: a tiny model's spans leave
// values the check finds (a name tagged in one note and not in another),
// and the job then ends check_failed with its corpus saved and quarantined,
// which a curator's review lifts here (store.ResolveCheckFindings).
func (b *deidentifyBench) deidentify(t *testing.T, p jobs.DeidentifyParams) *jobs.DeidentifyResult {
	t.Helper()
	ctx := context.Background()
	j, err := b.m.Enqueue(ctx, p, "", nil)
	require.NoError(t, err)
	j = wait(t, b.m, j.ID)[0]
	require.Contains(t, []job.Status{job.StatusSucceeded, job.StatusCheckFailed}, j.Status, j.Error)
	r, err := jobs.DecodeResult[jobs.DeidentifyResult](j)
	require.NoError(t, err)
	require.NotNil(t, r)
	require.NotNil(t, r.Resynthesis.Check)
	c := r.Resynthesis.Check
	t.Logf("%s: %d notes tagged; check: %d spans, %d replaced, %d leaks, %d unannotated", p.Out, r.Tagging.Documents, c.Spans, c.Replaced, c.Leaks, c.Unannotated)
	assert.Equal(t, j.ProgressTotal, j.ProgressDone)
	if j.Status == job.StatusCheckFailed {
		assert.False(t, c.OK)
		_, err := b.st.ResolveCheckFindings(ctx, p.Out, "read by the test's curator", "local:curator")
		require.NoError(t, err)
	}
	return r
}

// model loads a stored model's tagger.
func (b *deidentifyBench) model(t *testing.T, name string) (*ent.Model, *tagger.Model) {
	t.Helper()
	row, err := b.st.ModelByName(context.Background(), name)
	require.NoError(t, err)
	tm, err := tagger.Load(bytes.NewReader(row.Artifact))
	require.NoError(t, err)
	return row, tm
}

// importNotes stores docs, without their spans, as corpus name: notes
// nobody annotated.
func importNotes(t *testing.T, st *store.Store, name, tagset string, docs []pipeline.Document) {
	t.Helper()
	for i := range docs {
		docs[i].Spans = nil
	}
	_, err := st.ImportDocuments(context.Background(), store.ImportOptions{Corpus: name, TagSet: tagset}, docs)
	require.NoError(t, err)
}

var tinyTraining = jobs.TrainParams{Corpus: "notes", Model: "m", Config: map[string]any{"training": map[string]any{"max_iterations": 10}},
	Calibration: jobs.CalibrationParams{Folds: 2, Iterations: 5}}

// deidentify on the demo's notes: the hospital's notes, unannotated, are
// tagged at the privacy point, resynthesized and checked in one job; the
// surrogate corpus's provenance holds the model's held-out estimate at the
// point used, and a shared release's datasheet states it in words.
func TestDeidentifyDemo(t *testing.T) {
	ctx := context.Background()
	b := newDeidentifyBench(t, func(st *store.Store) { synthCorpus(t, st, "notes", 12) }, tinyTraining)
	var ward []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 4, Seed: 99}, func(p synth.Patient) error {
		ward = append(ward, p.Docs...)
		return nil
	}))
	importNotes(t, b.st, "ward", "i2b2-2014", ward)

	r := b.deidentify(t, jobs.DeidentifyParams{Corpus: "ward", Model: "m", Out: "ward-deid", Seed: 3})
	_, tm := b.model(t, "m")
	want, ok := tm.HeldOutRisk(tagger.Privacy)
	require.True(t, ok)
	assert.Equal(t, want, r.Risk, "the result states the model's held-out figures at the privacy point")
	assert.Equal(t, len(ward), r.Tagging.Documents)
	assert.Equal(t, len(ward), r.Resynthesis.Documents)
	assert.Positive(t, r.Resynthesis.Check.Spans, "the tagger found PHI to replace")

	out, err := b.st.CorpusByName(ctx, "ward-deid")
	require.NoError(t, err)
	runs, err := gate.Runs(out.Provenance)
	require.NoError(t, err)
	require.NotNil(t, runs[0].Tagger, "the provenance records the tagger whose spans were replaced")
	assert.Equal(t, "m", runs[0].Tagger.Model)
	assert.Equal(t, tagger.Privacy, runs[0].Tagger.Point)
	require.NotNil(t, runs[0].Tagger.Risk)
	assert.Equal(t, want, *runs[0].Tagger.Risk)
	assert.Equal(t, 2, runs[0].Tagger.Folds)

	rel, err := b.st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "ward-deid", Name: "ward", Version: "1.0.0", Share: true,
		AcceptUnannotated: "read by the test's curator"})
	require.NoError(t, err, "a corpus deidentified with its estimate, under no ceiling, is shared")
	assert.Contains(t, rel.Datasheet, "## Residual risk")
	assert.Contains(t, rel.Datasheet, "found by a tagger, not by annotators: model m at its privacy point")
	assert.Contains(t, rel.Datasheet, "notes hold at least one")
}

// Each mistake is the error of the request that made it, and nothing is
// written: no job, no annotation set, no corpus.
func TestDeidentifyRefuses(t *testing.T) {
	ctx := context.Background()
	b := newDeidentifyBench(t, func(st *store.Store) { synthCorpus(t, st, "notes", 12) }, tinyTraining)
	b.run(t, jobs.TrainParams{Corpus: "notes", Model: "plain", Config: tinyTraining.Config, NoCalibration: true})
	_, err := b.st.RegisterExternalModel(ctx, "ext", "http://127.0.0.1:1/tag", []string{"NAME"}, "")
	require.NoError(t, err)
	_, err = b.st.ImportDocuments(ctx, store.ImportOptions{Corpus: "taken", TagSet: "i2b2-2014"}, []pipeline.Document{{ID: "d1", Patient: "p1", Text: "x"}})
	require.NoError(t, err)
	_, tm := b.model(t, "m")
	c := tm.Meta.Calibration
	top := 0.0
	for _, p := range c.Curve {
		top = max(top, p.CharRecall)
	}
	ok := jobs.DeidentifyParams{Corpus: "notes", Model: "m", Out: "out"}
	with := func(f func(p *jobs.DeidentifyParams)) jobs.DeidentifyParams { p := ok; f(&p); return p }
	cases := []struct {
		name string
		p    jobs.DeidentifyParams
		code apperr.Code
		msg  string
	}{
		{"target above 1", with(func(p *jobs.DeidentifyParams) { p.TargetRecall = 1.5 }), apperr.Invalid, "target recall 1.5"},
		{"target not a fraction", with(func(p *jobs.DeidentifyParams) { p.TargetRecall = -0.2 }), apperr.Invalid, "target recall -0.2"},
		{"target below the calibrated", with(func(p *jobs.DeidentifyParams) { p.TargetRecall = 0.6 }), apperr.Invalid, "below it there is no estimate"},
		{"uncalibrated model", with(func(p *jobs.DeidentifyParams) { p.Model = "plain" }), apperr.Invalid, "deidcorpus models calibrate --model plain"},
		{"external model", with(func(p *jobs.DeidentifyParams) { p.Model = "ext" }), apperr.Invalid, "model ext is external"},
		{"existing out", with(func(p *jobs.DeidentifyParams) { p.Out = "taken" }), apperr.Conflict, `corpus "taken" exists`},
		{"no model", with(func(p *jobs.DeidentifyParams) { p.Model = "" }), apperr.Invalid, "model is required"},
		{"bad ceiling", with(func(p *jobs.DeidentifyParams) { p.Policy = map[string]any{"maxNoteLeakRate": 2} }), apperr.Invalid, "maxNoteLeakRate 2"},
	}
	if top < 1 {
		cases = append(cases, struct {
			name string
			p    jobs.DeidentifyParams
			code apperr.Code
			msg  string
		}{"target beyond calibration", with(func(p *jobs.DeidentifyParams) { p.TargetRecall = 1 }), apperr.Invalid, "calibration reached at most"})
	} else {
		t.Logf("calibration reached a recall of 1 on held-out folds: no target lies beyond it")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.m.Enqueue(ctx, tc.p, "", nil)
			require.Error(t, err)
			assert.Equal(t, tc.code, apperr.CodeOf(err), "%v", err)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
	js, err := b.st.Jobs(ctx, store.JobFilter{Kind: "deidentify"})
	require.NoError(t, err)
	assert.Empty(t, js, "no job was queued")
	_, err = b.st.CorpusByName(ctx, "out")
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err))
	notes, err := b.st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	sets, err := notes.QueryAnnotationSets().All(ctx)
	require.NoError(t, err)
	for _, s := range sets {
		assert.False(t, strings.HasPrefix(s.Name, "deidentify-"), "set %s", s.Name)
	}
}

// The release gate: a corpus made from a tagger's spans is shared only
// with the model's held-out estimate, and not above its policy's ceiling
// (the figure and the ceiling named); a corpus made from gold under the
// same ceiling is shared as before.
func TestReleaseGateKnowsTheRisk(t *testing.T) {
	ctx := context.Background()
	b := newDeidentifyBench(t, func(st *store.Store) { synthCorpus(t, st, "notes", 12) }, tinyTraining)
	share := func(corpus string) error {
		_, err := b.st.CreateRelease(ctx, store.ReleaseOptions{Corpus: corpus, Name: corpus, Version: "1.0.0", Share: true,
			AcceptUnannotated: "read by the test's curator"})
		return err
	}
	// The model's figures made high (the only figures forged here): its
	// calibration is otherwise real.
	row, tm := b.model(t, "m")
	for i := range tm.Meta.Calibration.Risk {
		if tm.Meta.Calibration.Risk[i].Point == tagger.Privacy {
			tm.Meta.Calibration.Risk[i].NoteLeakRate = 0.25
		}
	}
	var buf bytes.Buffer
	require.NoError(t, tm.Save(&buf))
	require.NoError(t, b.st.SetModelArtifact(ctx, row.ID, buf.Bytes()))
	ceiling := map[string]any{"maxNoteLeakRate": 0.05}

	r := b.deidentify(t, jobs.DeidentifyParams{Corpus: "notes", Model: "m", Out: "high", Policy: ceiling})
	assert.False(t, r.Shareable)
	err := share("high")
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%v", err)
	assert.ErrorContains(t, err, "notes with a leaked value, 0.2500")
	assert.ErrorContains(t, err, "above the policy's maxNoteLeakRate 0.0500")
	_, err = b.st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "high", Name: "high-internal", Version: "1.0.0"})
	assert.NoError(t, err, "a release kept inside is not gated")

	b.run(t, jobs.ResynthesizeParams{Corpus: "notes", Out: "from-gold", Policy: ceiling})
	assert.NoError(t, share("from-gold"), "a gold-driven corpus is shared as before")
	gold, err := b.st.CorpusByName(ctx, "from-gold")
	require.NoError(t, err)
	assert.NotContains(t, gold.Provenance, gate.Key)

	// Spans of a model without calibration: no estimate, no sharing.
	b.run(t, jobs.TrainParams{Corpus: "notes", Model: "plain", Config: tinyTraining.Config, NoCalibration: true})
	b.run(t, jobs.TagParams{Model: "plain", Corpus: "notes"})
	j, err := b.m.Enqueue(ctx, jobs.ResynthesizeParams{Corpus: "notes", Out: "from-plain", Set: "system-plain"}, "", nil)
	require.NoError(t, err)
	if wait(t, b.m, j.ID)[0].Status == job.StatusCheckFailed {
		_, err := b.st.ResolveCheckFindings(ctx, "from-plain", "read by the test's curator", "local:curator")
		require.NoError(t, err)
	}
	err = share("from-plain")
	assert.ErrorContains(t, err, "without a held-out estimate of the risk they leave (model plain has no calibration")
}

// deidentify on a small slice of MEDDOCAN dev, with a tiny model trained on
// a slice of train (skipped without the shared data).
func TestDeidentifyMeddocanDev(t *testing.T) {
	shared.NotUnderRace(t, "single-threaded tests")
	read := func(split string, n int) []pipeline.Document {
		files, err := formats.ReadPaths(shared.Path(t, "meddocan/corpus/"+split+"/xml"))
		require.NoError(t, err)
		f, err := formats.Lookup("i2b2")
		require.NoError(t, err)
		docs, err := f.Read(files[:n], formats.ReadOptions{})
		require.NoError(t, err)
		return docs
	}
	train, dev := read("train", 24), read("dev", 10)
	b := newDeidentifyBench(t, func(st *store.Store) {
		for i := range train {
			train[i].Split = "train"
		}
		_, err := st.ImportDocuments(context.Background(), store.ImportOptions{Corpus: "notes", TagSet: "meddocan"}, train)
		require.NoError(t, err)
		importNotes(t, st, "dev", "meddocan", dev)
	}, tinyTraining)
	r := b.deidentify(t, jobs.DeidentifyParams{Corpus: "dev", Model: "m", Out: "dev-deid", Seed: 1})
	assert.Equal(t, len(dev), r.Resynthesis.Documents)
	assert.Positive(t, r.Risk.Documents)
	t.Logf("MEDDOCAN dev, %d notes: %d spans replaced; held-out estimate: notes with a leak %.3f, with a direct identifier %.3f, span precision %.3f",
		len(dev), r.Resynthesis.Check.Replaced, r.Risk.NoteLeakRate, r.Risk.NoteDirectRate, r.Risk.SpanPrecision)
}
