// Package calibrate finds a tagger's privacy operating point: on held-out
// patient folds of the training data, the threshold of the CRF's
// probability of O below which a token is PHI that reaches a target recall
// of PHI characters, and the risk a release made from the tags would still
// hold at each operating point (tagger.Calibration).
package calibrate

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/experiment"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/pipeline/tagger"
)

// Defaults: three folds of models trained with at most 80 L-BFGS steps
// cost about one more training of the full model (3 × 2/3 × 80/150), and
// their probabilities put the threshold where a full model reaches the
// target on unseen notes (docs/tagger.md measures it on MEDDOCAN dev).
const (
	DefaultFolds        = 3
	DefaultIterations   = 80
	DefaultTargetRecall = 0.995
	maxFolds            = 10
)

// Options tune Run. Zero values take the defaults.
type Options struct {
	Folds        int
	Iterations   int // the fold models' L-BFGS limit (never above the model's)
	TargetRecall float64
	Seed         uint64
	Nets         tagger.Nets
	Policy       *surrogate.Policy // what a release replaces; default surrogate.DefaultPolicy
	Bootstrap    int               // patient resamples of the risk's intervals; default 200
	Progress     func(done, total int, message string)
}

// Result is a calibration and the held-out annotations it was measured on.
type Result struct {
	Calibration tagger.Calibration
	// Balanced and Privacy are every document tagged by a fold model that
	// never saw its patient, at each point (input order).
	Balanced, Privacy []pipeline.Document
	Nets              tagger.NetReport // what the nets added at the privacy point
	Leaks             map[tagger.OperatingPoint]experiment.Residual
}

// Run calibrates a model trained on docs with cfg: docs are split into
// patient folds, each tagged by a model trained on the others.
func Run(ctx context.Context, docs []pipeline.Document, cfg tagger.Config, opt Options) (*Result, error) {
	started := time.Now()
	opt.Folds = cmp.Or(opt.Folds, DefaultFolds)
	opt.Iterations = min(cmp.Or(opt.Iterations, DefaultIterations), cfg.Training.MaxIterations)
	opt.TargetRecall = cmp.Or(opt.TargetRecall, DefaultTargetRecall)
	opt.Bootstrap = cmp.Or(opt.Bootstrap, 200)
	if opt.Policy == nil {
		opt.Policy = surrogate.DefaultPolicy()
	}
	if opt.Folds < 2 || opt.Folds > maxFolds {
		return nil, fmt.Errorf("calibration folds: %d, want 2 to %d", opt.Folds, maxFolds)
	}
	if err := tagger.ValidTargetRecall(opt.TargetRecall); err != nil {
		return nil, err
	}
	progress := func(done int, msg string) {
		if opt.Progress != nil {
			opt.Progress(done, opt.Folds+1, msg)
		}
	}
	assign, err := experiment.AssignFolds(docs, opt.Folds, opt.Seed)
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	fcfg := cfg
	fcfg.Training.MaxIterations = opt.Iterations
	type fold struct {
		model  *tagger.Model
		scored []tagger.Scored
		at     []int
	}
	folds := make([]fold, opt.Folds)
	for f := range folds {
		var tr, te []pipeline.Document
		for i, d := range docs {
			if assign[i] == f {
				te, folds[f].at = append(te, d), append(folds[f].at, i)
			} else {
				tr = append(tr, d)
			}
		}
		progress(f, fmt.Sprintf("calibration fold %d of %d: training on %d notes, tagging %d", f+1, opt.Folds, len(tr), len(te)))
		m, err := tagger.Train(ctx, tr, fcfg, nil)
		if err != nil {
			return nil, fmt.Errorf("calibration fold %d: %w", f+1, err)
		}
		if folds[f].scored, err = m.TagScored(ctx, experiment.Stripped(te), tagger.TagOptions{}); err != nil {
			return nil, fmt.Errorf("calibration fold %d: %w", f+1, err)
		}
		folds[f].model = m
	}
	progress(opt.Folds, "choosing the privacy threshold")
	at := func(t float64) ([]pipeline.Document, tagger.NetReport) {
		out := make([]pipeline.Document, len(docs))
		var rep tagger.NetReport
		for _, f := range folds {
			tagged, r := f.model.PrivacyAt(f.scored, t, opt.Nets)
			rep = rep.Add(r)
			for j, i := range f.at {
				out[i] = tagged[j]
			}
		}
		return out, rep
	}
	res := &Result{Balanced: make([]pipeline.Document, len(docs)), Leaks: map[tagger.OperatingPoint]experiment.Residual{}}
	for _, f := range folds {
		for j, i := range f.at {
			res.Balanced[i] = f.scored[j].Balanced
		}
	}
	c := &res.Calibration
	c.Folds, c.TargetRecall, c.Iterations, c.Nets = opt.Folds, opt.TargetRecall, opt.Iterations, opt.Nets
	for _, t := range tagger.ThresholdGrid() {
		tagged, _ := at(t)
		recall, precision, _ := experiment.CharRecallPrecision(docs, tagged)
		c.Curve = append(c.Curve, tagger.RecallPoint{Threshold: t, CharRecall: recall, SpanPrecision: precision})
	}
	c.Threshold = choose(c.Curve, opt.TargetRecall)
	res.Privacy, res.Nets = at(c.Threshold)
	for _, p := range []struct {
		point tagger.OperatingPoint
		docs  []pipeline.Document
	}{{tagger.Balanced, res.Balanced}, {tagger.Privacy, res.Privacy}} {
		r, err := experiment.Leaks(docs, p.docs, opt.Policy, experiment.RiskOptions{Seed: opt.Seed, Bootstrap: opt.Bootstrap})
		if err != nil {
			return nil, fmt.Errorf("calibration: %s point: %w", p.point, err)
		}
		res.Leaks[p.point] = r
		c.Risk = append(c.Risk, HeldOut(p.point, r))
	}
	c.Risk[1].TargetRecall = opt.TargetRecall
	c.Seconds = time.Since(started).Seconds()
	return res, nil
}

// HeldOut is a point's held-out risk from the residual figures.
func HeldOut(p tagger.OperatingPoint, r experiment.Residual) tagger.HeldOutRisk {
	per1000 := func(x float64) float64 { return 1000 * x }
	return tagger.HeldOutRisk{
		Point: p, Documents: r.Documents, Values: r.GoldSpans,
		ValuesLeakedPer1000: per1000(r.LeakRate), ValuesLeakedPer1000CI: scale(r.LeakCI, 1000),
		NoteLeakRate: r.DocumentLeakRate, NoteLeakRateCI: r.DocumentCI,
		NoteDirectRate: r.DirectLeakRate, NoteDirectRateCI: r.DirectCI,
		CharRecall: r.CharRecall, SpanPrecision: r.SpanPrecision,
	}
}

// choose returns the lowest threshold (the fewest false alarms) whose
// recall reaches target or, when none does, the one of highest recall.
func choose(curve []tagger.RecallPoint, target float64) float64 {
	best := curve[0]
	for _, p := range curve {
		switch {
		case p.CharRecall >= target && (best.CharRecall < target || p.Threshold < best.Threshold):
			best = p
		case best.CharRecall < target && p.CharRecall > best.CharRecall:
			best = p
		}
	}
	return best.Threshold
}

func scale(i evaluate.Interval, k float64) evaluate.Interval {
	return evaluate.Interval{Low: k * i.Low, High: k * i.High}
}
