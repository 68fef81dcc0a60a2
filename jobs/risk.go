package jobs

import (
	"cmp"
	"context"
	"fmt"

	"deidcorpus/apperr"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/calibrate"
	"deidcorpus/pipeline/experiment"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/pipeline/tagger"
	"deidcorpus/store"
	"deidcorpus/version"
)

// riskFolds is the residual-risk experiment's default number of folds.
const riskFolds = 5

// runResidualRisk measures what a release made from a tagger's annotation
// leaks (SPEC section 10): it tags every gold note with a model that never
// saw it (patient folds, or the given model), keeps that annotation set on
// the corpus, resynthesizes it with the job's policy and seed (the surrogate
// corpus a resynthesis job of that set writes) and scores the release
// against gold with experiment.ResidualRisk.
func runResidualRisk(ctx context.Context, run *Run, p ExperimentParams) (Result, error) {
	cfg, err := taggerConfig(p.Config)
	if err != nil {
		return nil, err
	}
	pol, _, err := ResynthesizeParams{Policy: p.Policy}.policy()
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	c, err := run.Store.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return nil, err
	}
	split := cmp.Or(p.TrainSplit, "train")
	run.Progress(0, 4, fmt.Sprintf("loading %s (%s)", p.Corpus, split))
	gold, err := loadSplits(ctx, run.Store, c, cmp.Or(p.Set, "gold"), split)
	if err != nil {
		return nil, err
	}
	if len(gold) == 0 {
		return nil, run.Store.NoDocumentsIn(ctx, c, split)
	}
	train, progress := trainerWithProgress(run, cfg)
	setName := p.systemSet()
	var system []pipeline.Document
	threshold := 0.0 // the privacy point's, when folds calibrated it
	switch {
	case p.System != "":
		progress(0, 4, fmt.Sprintf("loading the annotation set %s", p.System))
		if system, err = loadSplits(ctx, run.Store, c, p.System, split); err != nil {
			return nil, err
		}
		for i := range system {
			if i >= len(gold) || system[i].ID != gold[i].ID {
				return nil, apperr.New(apperr.Invalid, "system: the annotation set %q does not hold the notes of %s (%s) that gold does", p.System, p.Corpus, split)
			}
		}
		if len(system) != len(gold) {
			return nil, apperr.New(apperr.Invalid, "system: the annotation set %q does not hold the notes of %s (%s) that gold does", p.System, p.Corpus, split)
		}
	case p.Model != "":
		row, err := run.Store.ModelByName(ctx, p.Model)
		if err != nil {
			return nil, err
		}
		tag, _, err := run.manager.modelTagger(row, tagRule{Point: p.point()}, c)
		if err != nil {
			return nil, err
		}
		progress(0, 4, fmt.Sprintf("tagging %d notes with model %s", len(gold), p.Model))
		system, err = tag(ctx, experiment.Stripped(gold))
		if err != nil {
			return nil, err
		}
	case p.point() == tagger.Privacy:
		res, err := calibrate.Run(ctx, gold, cfg, calibrate.Options{Folds: p.riskFolds(), Iterations: cfg.Training.MaxIterations,
			Seed: p.Seed, Nets: tagger.DefaultNets(), Bootstrap: p.Bootstrap, Progress: func(done, total int, msg string) { progress(0, 4, msg) }})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, apperr.Wrap(apperr.Invalid, err)
		}
		system, threshold = res.Privacy, res.Calibration.Threshold
	default:
		system, err = experiment.TagHeldOut(ctx, gold, p.riskFolds(), p.Seed, train, func(done, total int, msg string) {
			progress(0, 4, msg)
		})
		if err != nil {
			return nil, apperr.Wrap(apperr.Invalid, err)
		}
	}
	if p.System == "" {
		prov := map[string]any{"source": "residual-risk", "job": run.Job.ID, "split": split, "model": p.Model,
			"folds": p.riskFolds(), "seed": p.Seed, "operatingPoint": string(p.point()), "codeVersion": version.String()}
		if threshold > 0 {
			prov["threshold"] = threshold
		}
		if _, err := run.Store.SaveAnnotations(ctx, c, setName, "system", prov, run.Job.ID, system); err != nil {
			return nil, err
		}
	}
	progress(1, 4, "resynthesizing "+setName)
	released, err := surrogate.New(pol, nil, p.Seed).Run(system, surrogate.Store{})
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	// The gold resynthesized alike tells the values the policy keeps.
	goldReleased, err := surrogate.New(pol, nil, p.Seed).Run(gold, surrogate.Store{})
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	res, err := experiment.ResidualRisk(ctx, experiment.RiskInput{Gold: gold, System: system, Released: released.Docs,
		Propagated: released.Propagated, GoldReleased: goldReleased.Docs}, train, experiment.RiskOptions{Seed: p.Seed, Bootstrap: p.Bootstrap,
		Progress: func(done, total int, msg string) { progress(1+done*3/total, 4, msg) }})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	res.System, res.Released = setName, fmt.Sprintf("%s resynthesized with seed %d", setName, p.Seed)
	return resultOf(ExperimentResult{
		Result:      experiment.Result{Kind: res.Kind, Seed: res.Seed, Bootstrap: res.Bootstrap, Confidence: res.Confidence, Seconds: res.Seconds},
		RiskFigures: &res.RiskFigures, Corpus: p.Corpus, CodeVersion: version.String(), Tagger: toJSONObject(cfg),
	})
}

// systemSet names the annotation set a residual-risk experiment keeps (or
// scores, when given).
func (p ExperimentParams) systemSet() string {
	if p.System != "" {
		return p.System
	}
	suffix := ""
	if p.point() == tagger.Privacy {
		suffix = "-privacy"
	}
	if p.Model != "" {
		return fmt.Sprintf("residual-%s-seed%d%s", p.Model, p.Seed, suffix)
	}
	return fmt.Sprintf("residual-cv%d-seed%d%s", p.riskFolds(), p.Seed, suffix)
}

// point is the experiment's operating point (validated).
func (p ExperimentParams) point() tagger.OperatingPoint {
	point, _ := tagger.ParseOperatingPoint(p.OperatingPoint)
	return point
}

func (p ExperimentParams) riskFolds() int { return cmp.Or(p.K, riskFolds) }

// riskPrecondition refuses, before any tagging, a residual-risk experiment
// whose annotation set exists (a run with the same seed kept it), whose
// given set does not, or whose model is unknown.
func (p ExperimentParams) riskPrecondition(ctx context.Context, st *store.Store) error {
	c, err := st.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return err
	}
	if p.System != "" {
		_, err := st.AnnotationSet(ctx, c, p.System)
		return err
	}
	if _, err := st.AnnotationSet(ctx, c, p.systemSet()); err == nil {
		return apperr.New(apperr.Conflict, "corpus %q already has the annotation set %q of a residual-risk experiment with seed %d: choose another seed",
			p.Corpus, p.systemSet(), p.Seed)
	} else if apperr.CodeOf(err) != apperr.NotFound {
		return err
	}
	if p.Model != "" {
		_, err = st.ModelByName(ctx, p.Model)
	}
	return err
}
