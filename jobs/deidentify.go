package jobs

import (
	"bytes"
	"context"
	"fmt"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/model"
	"deidcorpus/pipeline/gate"
	"deidcorpus/pipeline/tagger"
	"deidcorpus/store"
)

// DeidentifyParams ask for the hospital's path in one job: tag a corpus
// nobody annotated at a calibrated model's privacy point, resynthesize from
// those tags into a new surrogate corpus, check it, and record in its
// provenance the model's held-out estimate of the risk it may still hold.
type DeidentifyParams struct {
	Corpus string `json:"corpus"`
	Model  string `json:"model"`
	Out    string `json:"out"` // a new surrogate corpus
	Policy any    `json:"policy,omitempty"`
	// TargetRecall is the recall of PHI characters to tag at; 0 is the one
	// the model was calibrated at.
	TargetRecall float64 `json:"targetRecall,omitempty"`
	Seed         uint64  `json:"seed"`
}

func (DeidentifyParams) JobKind() string { return "deidentify" }

// Validate checks a deidentify job's parameters before it is queued.
func (p DeidentifyParams) Validate() error {
	if p.Model == "" {
		return required("model")
	}
	if p.TargetRecall != 0 {
		if err := tagger.ValidTargetRecall(p.TargetRecall); err != nil {
			return err
		}
	}
	return p.resynthesis(0).Validate()
}

// tagSet is the annotation set of the source corpus that job's tags go to.
func tagSet(job int) string { return fmt.Sprintf("deidentify-%d", job) }

// tagging and resynthesis are the parameters of job's two stages.
func (p DeidentifyParams) tagging(job int) TagParams {
	return TagParams{Model: p.Model, Corpus: p.Corpus, Set: tagSet(job), OperatingPoint: string(tagger.Privacy), TargetRecall: p.TargetRecall}
}

func (p DeidentifyParams) resynthesis(job int) ResynthesizeParams {
	return ResynthesizeParams{Corpus: p.Corpus, Out: p.Out, Set: tagSet(job), Seed: p.Seed, Policy: p.Policy}
}

func (p DeidentifyParams) precondition(ctx context.Context, st *store.Store) error {
	_, err := p.check(ctx, st, 0)
	return err
}

// check refuses, before anything is written, a job that could not end in
// a surrogate corpus with its estimate: a corpus without notes, an external
// or uncalibrated model, a target recall calibration did not reach or has
// no estimate at, an --out that exists (unless job, retried, made it). It
// returns the model's held-out estimate at the point the job tags at.
func (p DeidentifyParams) check(ctx context.Context, st *store.Store, job int) (*tagger.HeldOutRisk, error) {
	c, err := st.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return nil, err
	}
	if n, err := st.CountDocuments(ctx, c, ""); err != nil {
		return nil, err
	} else if n == 0 {
		return nil, st.NoDocumentsIn(ctx, c, "")
	}
	out, err := st.CorpusByName(ctx, p.Out)
	switch {
	case apperr.CodeOf(err) == apperr.NotFound:
	case err != nil:
		return nil, err
	case job == 0 || !writtenBy(out, job):
		return nil, apperr.New(apperr.Conflict, "corpus %q exists: deidentify writes a new surrogate corpus; choose another --out "+
			"(new notes of a corpus deidentified before: tag them and resynth into it)", p.Out)
	}
	row, err := st.ModelByName(ctx, p.Model)
	if err != nil {
		return nil, err
	}
	if row.Kind == model.KindExternal {
		return nil, apperr.New(apperr.Invalid, "model %s is external: deidentify tags at a built-in model's privacy point, "+
			"calibrated on held-out folds of its training data (train one: deidcorpus train)", p.Model)
	}
	tm, err := tagger.Load(bytes.NewReader(row.Artifact))
	if err != nil {
		return nil, apperr.New(apperr.Internal, "model %s: %v", row.Name, err)
	}
	risk, err := privacyEstimate(tm, row.Name, p.TargetRecall)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	return risk, nil
}

// writtenBy says whether job began or finished writing corpus out (an
// earlier attempt of a retried job).
func writtenBy(out *ent.Corpus, job int) bool {
	m := store.InProgress(out)
	return m != nil && m.Job == job || finishedRun(out, job) != nil
}

// privacyEstimate is model name's held-out estimate of the risk at its
// privacy point for target recall (0: the calibrated one): there is one
// only where calibration measured it, at the calibrated threshold, or at a
// higher one (a higher target), which calls at least the same tokens PHI
// and so leaks no more.
func privacyEstimate(tm *tagger.Model, name string, target float64) (*tagger.HeldOutRisk, error) {
	threshold, err := tm.PrivacyThreshold(target, name)
	if err != nil {
		return nil, err
	}
	risk, ok := tm.HeldOutRisk(tagger.Privacy)
	c := tm.Meta.Calibration
	if !ok {
		return nil, fmt.Errorf("model %s's calibration has no held-out risk at the privacy point: run `deidcorpus models calibrate --model %s`", name, name)
	}
	if threshold < c.Threshold {
		return nil, fmt.Errorf("target recall %g: model %s's held-out risk was measured at target recall %g; below it there is no estimate "+
			"of what a release would leak: ask for %g or more, or calibrate at %g (deidcorpus models calibrate --model %s --target-recall %g)",
			target, name, c.TargetRecall, c.TargetRecall, target, name, target)
	}
	return &risk, nil
}

// taggerOf says which tagger found the spans of a source corpus's set, with
// its held-out estimate where there is one (or why not): nil for a set of
// annotators' spans.
func taggerOf(ctx context.Context, st *store.Store, src *ent.Corpus, setName string) (*gate.Tagger, error) {
	set, err := st.AnnotationSet(ctx, src, setName)
	if err != nil || set.Kind != annotationset.KindSystem {
		return nil, err
	}
	var prov struct { // what a tag job records (tagJob.set)
		Model          string             `json:"model"`
		ModelHash      string             `json:"modelHash"`
		OperatingPoint string             `json:"operatingPoint"`
		TargetRecall   float64            `json:"targetRecall"`
		RecallBias     map[string]float64 `json:"recallBias"`
	}
	if err := decodeParams(set.Provenance, &prov); err != nil {
		return nil, apperr.New(apperr.Internal, "annotation set %q: its provenance: %v", setName, err)
	}
	point, err := tagger.ParseOperatingPoint(prov.OperatingPoint)
	if err != nil {
		point = tagger.OperatingPoint(prov.OperatingPoint)
	}
	t := &gate.Tagger{Set: setName, Model: prov.Model, ModelHash: prov.ModelHash, Point: point, TargetRecall: prov.TargetRecall}
	if t.Model == "" {
		t.NoEstimate = "the set names no model"
		return t, nil
	}
	row, err := st.ModelByName(ctx, prov.Model)
	switch {
	case apperr.CodeOf(err) == apperr.NotFound:
		t.NoEstimate = fmt.Sprintf("model %s is gone", prov.Model)
		return t, nil
	case err != nil:
		return nil, err
	case row.Hash != prov.ModelHash:
		t.NoEstimate = fmt.Sprintf("model %s was replaced since it tagged the set", prov.Model)
		return t, nil
	case row.Kind == model.KindExternal:
		t.NoEstimate = fmt.Sprintf("model %s is external: only a built-in model is calibrated", prov.Model)
		return t, nil
	}
	tm, err := tagger.Load(bytes.NewReader(row.Artifact))
	if err != nil {
		return nil, apperr.New(apperr.Internal, "model %s: %v", row.Name, err)
	}
	switch {
	case point == tagger.Privacy:
		t.Risk, err = privacyEstimate(tm, row.Name, prov.TargetRecall)
	case point == tagger.Balanced && len(prov.RecallBias) == 0:
		if risk, ok := tm.HeldOutRisk(tagger.Balanced); ok {
			t.Risk = &risk
		} else {
			err = fmt.Errorf("model %s has no calibration (deidcorpus models calibrate --model %s)", row.Name, row.Name)
		}
	default:
		err = fmt.Errorf("the set was tagged with a recall bias, which calibration did not measure")
	}
	if err != nil {
		t.NoEstimate = err.Error()
	} else {
		t.Folds = tm.Meta.Calibration.Folds
	}
	return t, nil
}

// DeidentifyResult is what a deidentify job made: the tags, in the source
// corpus, the surrogate corpus, and the risk it may still hold.
type DeidentifyResult struct {
	Corpus      int                `json:"corpus,omitempty"`
	CorpusName  string             `json:"corpusName"`
	Tagging     TagResult          `json:"tagging"`
	Resynthesis ResynthesizeResult `json:"resynthesis"`
	// Risk is the model's held-out estimate at the point used, which the
	// surrogate corpus's provenance and datasheet carry.
	Risk tagger.HeldOutRisk `json:"risk"`
	// MaxNoteLeakRate is the policy's ceiling, if it has one; Shareable
	// says whether the estimate is under it (the release gate decides).
	MaxNoteLeakRate *float64 `json:"maxNoteLeakRate,omitempty"`
	Shareable       bool     `json:"shareable"`
}

func (DeidentifyResult) JobKind() string { return DeidentifyParams{}.JobKind() }

// deidentify tags the corpus at the model's privacy point into an
// annotation set of its own (the first third of the bar), then
// resynthesizes from it, with the check (the rest), as a tag job and a
// resynthesis job would: a retried attempt resumes the set and the corpus
// its earlier attempt began.
func deidentify(ctx context.Context, run *Run) (Result, error) {
	var p DeidentifyParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	st := run.Store
	risk, err := p.check(ctx, st, run.Job.ID)
	if err != nil {
		return nil, err
	}
	c, err := st.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return nil, err
	}
	n, err := st.CountDocuments(ctx, c, "")
	if err != nil {
		return nil, err
	}
	res := DeidentifyResult{CorpusName: p.Out, Risk: *risk}
	if res.Tagging, err = p.tag(ctx, run, n); err != nil {
		return nil, err
	}
	rs, err := run.stage(p.resynthesis(run.Job.ID), n, 2*n, 3*n)
	if err != nil {
		return nil, err
	}
	written, resynthErr := resynthesize(ctx, rs)
	if written == nil {
		return nil, resynthErr
	}
	if err := decodeParams(written, &res.Resynthesis); err != nil {
		return nil, err
	}
	res.Corpus = res.Resynthesis.Corpus
	// What the release gate will read: the corpus's own record.
	out, err := st.CorpusByName(ctx, p.Out)
	if err != nil {
		return nil, err
	}
	runs, err := gate.Runs(out.Provenance)
	if err != nil {
		return nil, apperr.New(apperr.Internal, "corpus %q: %v", p.Out, err)
	}
	if ceiling, ok := runs[0].Ceiling(); ok {
		res.MaxNoteLeakRate = &ceiling
	}
	res.Shareable = gate.Check(p.Out, runs) == nil && res.Resynthesis.Check != nil && res.Resynthesis.Check.OK
	result, err := resultOf(res)
	if err != nil {
		return nil, err
	}
	return result, resynthErr // a failed check: the corpus is saved, quarantined
}

// tag runs the tagging stage inline, its parts one after the other, as a
// tag job's would run (tagSplit), on the first n of the bar's 3n.
func (p DeidentifyParams) tag(ctx context.Context, run *Run, n int) (TagResult, error) {
	params := p.tagging(run.Job.ID)
	plan, err := run.stage(params, 0, 0, 3*n)
	if err != nil {
		return TagResult{}, err
	}
	parts, err := planTag(ctx, plan)
	if err != nil {
		return TagResult{}, err
	}
	results := make([]Result, len(parts))
	done := 0
	for i, part := range parts {
		var size struct {
			Documents int `json:"documents"`
		}
		if err := decodeParams(part, &size); err != nil {
			return TagResult{}, err
		}
		pr, err := run.stage(params, done, size.Documents, 3*n)
		if err != nil {
			return TagResult{}, err
		}
		r, err := tagPatients(ctx, pr, pr.Job, part)
		if err != nil {
			return TagResult{}, err
		}
		// As a part's result is stored: JSON (finishTag reads it so).
		if results[i], err = resultOf(r); err != nil {
			return TagResult{}, err
		}
		done += size.Documents
	}
	fin, err := run.stage(params, n, 0, 3*n)
	if err != nil {
		return TagResult{}, err
	}
	r, err := finishTag(ctx, fin, results)
	if err != nil {
		return TagResult{}, err
	}
	var tr TagResult
	return tr, decodeParams(r, &tr)
}
