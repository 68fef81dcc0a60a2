package jobs

import (
	"bytes"
	"cmp"
	"context"
	"fmt"

	"deidcorpus/apperr"
	"deidcorpus/ent/model"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/calibrate"
	"deidcorpus/pipeline/tagger"
)

// tagRule is how a model tags: its recall bias and operating point. Nets,
// when not nil, sums what the safety nets added.
type tagRule struct {
	Bias   map[string]float64
	Point  tagger.OperatingPoint
	Target float64
	Nets   *tagger.NetReport
}

// options are the tagger's options for the rule; a privacy point the model
// cannot reach (no calibration, a target beyond it) is an invalid request
// naming the model and what to run.
func (r tagRule) options(tm *tagger.Model, name string) (tagger.TagOptions, error) {
	opt := tagger.TagOptions{RecallBias: r.Bias, Point: r.Point, TargetRecall: r.Target}
	if r.Point != tagger.Privacy {
		return opt, nil
	}
	t, err := tm.PrivacyThreshold(r.Target, name)
	if err != nil {
		return opt, apperr.Wrap(apperr.Invalid, err)
	}
	opt.Threshold = t
	return opt, nil
}

// rule is a tag job's rule.
func (t *tagJob) rule(nets *tagger.NetReport) tagRule {
	point, _ := tagger.ParseOperatingPoint(t.p.OperatingPoint) // validated
	return tagRule{Bias: t.p.RecallBias, Point: point, Target: t.p.TargetRecall, Nets: nets}
}

// checkPoint refuses, as the job is queued, a privacy point the model
// cannot tag at.
func (t *tagJob) checkPoint() error {
	r := t.rule(nil)
	if r.Point != tagger.Privacy {
		return nil
	}
	if t.model.Kind == model.KindExternal {
		return apperr.New(apperr.Invalid, "operatingPoint: model %s is external; only a built-in model has a privacy point", t.model.Name)
	}
	tm, err := tagger.Load(bytes.NewReader(t.model.Artifact))
	if err != nil {
		return apperr.New(apperr.Internal, "model %s: %v", t.model.Name, err)
	}
	_, err = r.options(tm, t.model.Name)
	return err
}

// partNets sums what the safety nets added in each part of a tag job.
func partNets(parts []Result) tagger.NetReport {
	var sum tagger.NetReport
	for _, r := range parts {
		var part struct {
			Nets tagger.NetReport `json:"nets"`
		}
		if decodeParams(r, &part) == nil {
			sum = sum.Add(part.Nets)
		}
	}
	return sum
}

// CalibrationParams tune the calibration of a model's privacy point (what
// a training job runs by default, and a calibrate job for a model trained
// without it). Zero values take calibrate's defaults.
type CalibrationParams struct {
	Folds        int          `json:"folds,omitempty"`
	Iterations   int          `json:"iterations,omitempty"`
	TargetRecall float64      `json:"targetRecall,omitempty"`
	Seed         uint64       `json:"seed,omitempty"`
	Nets         *tagger.Nets `json:"nets,omitempty"` // default every net
}

// maxCalibrationIterations caps the fold models' L-BFGS steps a caller may
// ask for (the full model's default is 150).
const maxCalibrationIterations = 1000

// Validate checks the calibration's parameters.
func (p CalibrationParams) Validate() error {
	switch {
	case p.Folds != 0 && (p.Folds < 2 || p.Folds > 10):
		return fmt.Errorf("calibration folds: %d, want 2 to 10", p.Folds)
	case p.Iterations < 0 || p.Iterations > maxCalibrationIterations:
		return fmt.Errorf("calibration iterations: %d, want 1 to %d", p.Iterations, maxCalibrationIterations)
	case p.TargetRecall != 0:
		return tagger.ValidTargetRecall(p.TargetRecall)
	}
	return nil
}

// calibrates says whether a training job calibrates its model's privacy
// point: unless asked not to, and, when the folds were not asked for, only
// where the training data has a patient for each fold of the default (a
// handful of notes still trains a model, without a privacy point: the
// reason is returned for the result). Folds asked for on too few patients
// are an invalid request.
func (p TrainParams) calibrates(docs []pipeline.Document) (bool, string, error) {
	if p.NoCalibration {
		return false, "", nil
	}
	patients := map[string]bool{}
	for _, d := range docs {
		patients[cmp.Or(d.Patient, d.ID)] = true
	}
	folds := cmp.Or(p.Calibration.Folds, calibrate.DefaultFolds)
	switch {
	case len(patients) >= folds:
		return true, "", nil
	case p.Calibration.Folds != 0:
		return false, "", apperr.New(apperr.Invalid, "calibration folds: %d, but the training data has %d patients", folds, len(patients))
	}
	return false, fmt.Sprintf("%d patients, fewer than the calibration's %d folds: no privacy point (deidcorpus models calibrate once there are more)", len(patients), folds), nil
}

// calibrateModel runs calibration for a model trained on docs with cfg and
// stores it in the model's metadata; progress reports on a scale of
// trainScale.
func calibrateModel(ctx context.Context, m *tagger.Model, docs []pipeline.Document, p CalibrationParams, progress func(done int, msg string)) error {
	nets := tagger.DefaultNets()
	if p.Nets != nil {
		nets = *p.Nets
	}
	res, err := calibrate.Run(ctx, docs, m.Config, calibrate.Options{Folds: p.Folds, Iterations: p.Iterations,
		TargetRecall: p.TargetRecall, Seed: p.Seed, Nets: nets,
		Progress: func(done, total int, msg string) { progress(trainScale*done/total, msg) }})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return apperr.Wrap(apperr.Invalid, err)
	}
	m.Meta.Calibration = &res.Calibration
	return nil
}

// CalibrateParams ask to calibrate a stored model's privacy point on its
// own training data (a model trained before calibration existed, or to
// change the target).
type CalibrateParams struct {
	Model string `json:"model"`
	CalibrationParams
}

func (CalibrateParams) JobKind() string { return "calibrate" }

// Validate checks a calibrate job's parameters.
func (p CalibrateParams) Validate() error {
	if p.Model == "" {
		return required("model")
	}
	return p.CalibrationParams.Validate()
}

// CalibrateResult is what a calibrate job found.
type CalibrateResult struct {
	Model       string             `json:"model"`
	Calibration tagger.Calibration `json:"calibration"`
}

func (CalibrateResult) JobKind() string { return CalibrateParams{}.JobKind() }

// calibrateJob calibrates a stored built-in model on the corpus, split and
// set it was trained on, and rewrites its artifact with the calibration
// (its hash, which covers what tags, is unchanged).
func calibrateJob(ctx context.Context, run *Run) (Result, error) {
	var p CalibrateParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	row, err := run.Store.ModelByName(ctx, p.Model)
	if err != nil {
		return nil, err
	}
	if row.Kind == model.KindExternal {
		return nil, apperr.New(apperr.Invalid, "model %s is external: only a built-in model is calibrated", p.Model)
	}
	tm, err := tagger.Load(bytes.NewReader(row.Artifact))
	if err != nil {
		return nil, apperr.New(apperr.Internal, "model %s: %v", row.Name, err)
	}
	c, err := run.Store.CorpusByName(ctx, row.TrainingCorpus)
	if err != nil {
		return nil, apperr.New(apperr.NotFound, "model %s was trained on corpus %q, which is gone: calibration needs its training data", p.Model, row.TrainingCorpus)
	}
	run.Progress(0, trainScale, "loading "+row.TrainingCorpus)
	docs, err := loadSplits(ctx, run.Store, c, cmp.Or(row.TrainingSet, "gold"), cmp.Or(row.TrainingSplit, "train"))
	if err != nil {
		return nil, err
	}
	if err := calibrateModel(ctx, tm, docs, p.CalibrationParams, func(done int, msg string) { run.Progress(done, trainScale, msg) }); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tm.Save(&buf); err != nil {
		return nil, err
	}
	if err := run.Store.SetModelArtifact(ctx, row.ID, buf.Bytes()); err != nil {
		return nil, err
	}
	return resultOf(CalibrateResult{Model: row.Name, Calibration: *tm.Meta.Calibration})
}
