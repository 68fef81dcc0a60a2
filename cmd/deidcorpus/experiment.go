package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/phi"
)

func init() {
	register(&command{
		name:    "experiment",
		summary: "cross-validation, cross-corpus, learning-curve, original/resynthesized and residual-risk experiments",
		args:    "--kind cv|cross|curve|or|residual-risk --corpus NAME [--other NAME] [flags] [--json] [--async]",
		examples: []string{
			"deidcorpus experiment --kind or --corpus meddocan --other meddocan-r --seed 1",
			"deidcorpus experiment --kind cv --corpus demo --k 5",
			"deidcorpus experiment --kind residual-risk --corpus meddocan --folds 5 --policy policy.json --json",
			"deidcorpus experiment --kind residual-risk --corpus meddocan --folds 5 --operating-point privacy --json",
		},
		setup: setupExperiment,
	})
}

func setupExperiment(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	var p jobs.ExperimentParams
	fs.StringVar(&p.Kind, "kind", "", "cv (k-fold by patient), cross (train on --other, test on --corpus), curve (learning curve in 10% steps), "+
		"or (O=>O, R=>R, O=>R, R=>O with --other the resynthesized twin) or residual-risk (what a release resynthesized from a tagger's spans leaks, against gold)")
	fs.StringVar(&p.Set, "set", "", "the gold annotation set of --corpus (default gold)")
	fs.BoolVar(&p.Done, "done", false, "cv, curve: only the documents marked done in --set (an annotator's or adjudicated set): accuracy as annotation proceeds")
	fs.StringVar(&p.Model, "model", "", "residual-risk: the model that tags the notes (default: --folds patient folds, each tagged by a model trained on the others)")
	fs.StringVar(&p.System, "system", "", "residual-risk: score this annotation `SET` of the corpus as it stands (an earlier run's kept set, or an external tagger's output) instead of tagging the notes")
	folds := fs.Int("folds", 0, "residual-risk: patient folds (default 5)")
	fs.StringVar(&p.OperatingPoint, "operating-point", "", `residual-risk: the tagger's decision rule, "balanced" (default) or "privacy" (folds calibrate it on their held-out tags; --model uses its calibration)`)
	policyFile := fs.String("policy", "", "residual-risk: resynthesis policy `FILE` (JSON; default: the built-in policy)")
	fs.StringVar(&p.Corpus, "corpus", "", "the corpus tested on (required)")
	fs.StringVar(&p.Other, "other", "", "the second corpus (cross, curve with added data, or)")
	fs.StringVar(&p.TrainSplit, "train-split", "", `split drawn on (default train; "all" for every document)`)
	fs.StringVar(&p.TestSplit, "test-split", "", "test split; when empty, --test-fraction of the patients is held out")
	fs.Float64Var(&p.TestFraction, "test-fraction", 0, "share of patients held out for testing (default 0.2)")
	fs.StringVar(&p.OtherSplit, "other-split", "", "split of --other used for training (default train)")
	fs.IntVar(&p.K, "k", 10, "cv: folds, at least 2")
	fs.IntVar(&p.Steps, "steps", 10, "curve: steps, at least 1")
	shares := listFlag{}
	fs.Var(&shares, "shares", "cross: `SHARES` of --corpus's training patients added to --other's, e.g. 0.1,0.5")
	fs.Uint64Var(&p.Seed, "seed", 1, "seed of the splits, bootstrap and shuffles")
	mapping := fs.String("mapping", "", "tag-set mapping applied to --corpus (both corpora in or): a built-in one ("+
		strings.Join(phi.BuiltinMappings(), ", ")+") or a mapping file")
	otherMapping := fs.String("other-mapping", "", "tag-set mapping applied to --other: a built-in one or a mapping file")
	configFile := fs.String("config", "", "tagger configuration `FILE`: JSON naming the options it changes (deidcorpus train --print-config shows the defaults)")
	async := fs.Bool("async", false, "queue the job, print its id and return")
	asJSON := jsonFlag(fs)
	return func(ctx context.Context, args []string) error {
		if p.Kind == "" || p.Corpus == "" {
			return usageErr("--kind and --corpus are required")
		}
		switch {
		case p.Kind == "cv" && p.K < 2:
			return usageErr("--k: cross-validation needs at least 2 folds, not %d", p.K)
		case p.Kind == "curve" && p.Steps < 1:
			return usageErr("--steps: a learning curve needs at least 1 step, not %d", p.Steps)
		}
		// The job's parameters hold only what its kind reads: the flags'
		// defaults go, and a flag given that the kind does not read is
		// refused by the job's checks.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if p.Kind != "cv" && !set["k"] {
			p.K = 0
		}
		if set["folds"] {
			if p.Kind != "residual-risk" {
				return usageErr("--folds: only the residual-risk experiment reads it (cross-validation: --k)")
			}
			p.K = *folds
		}
		if *policyFile != "" {
			policy, err := readPolicyFile(*policyFile)
			if err != nil {
				return err
			}
			p.Policy = policy
		}
		if p.Kind != "curve" && !set["steps"] {
			p.Steps = 0
		}
		for _, s := range shares {
			var f float64
			if err := json.Unmarshal([]byte(s), &f); err != nil {
				return apperr.New(apperr.Invalid, "--shares: %q is not a number", s)
			}
			p.Shares = append(p.Shares, f)
		}
		// The files are read here and sent as text: a job never reads a path.
		for _, m := range []struct {
			arg               string
			name, text, label *string
		}{{*mapping, &p.Mapping, &p.MappingText, &p.MappingLabel}, {*otherMapping, &p.OtherMapping, &p.OtherMappingText, &p.OtherMappingLabel}} {
			if m.arg == "" {
				continue
			}
			name, text, label, err := phi.ReadMappingArg(m.arg)
			if err == nil {
				_, err = phi.ResolveMapping(name, text, label) // a bad file fails here, naming its line
			}
			if err != nil {
				return apperr.Wrap(apperr.Invalid, err)
			}
			*m.name, *m.text, *m.label = name, text, label
		}
		if *configFile != "" {
			var err error
			if _, p.Config, err = readTaggerConfig(*configFile); err != nil {
				return err
			}
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.experiment", map[string]any{"corpus": p.Corpus, "other": p.Other, "kind": p.Kind})
		if err != nil {
			return err
		}
		defer st.Close()
		j, err := runJob(ctx, e, st, p, *async)
		if err != nil || *async {
			return flagNamed(err, experimentFlags)
		}
		return finished(e, j, *asJSON)
	}
}

// experimentFlags are the flags of the job parameters an experiment's errors
// begin with (the names GraphQL and the job know them by).
var experimentFlags = map[string]string{
	"kind": "--kind", "corpus": "--corpus", "other": "--other", "k": "--k", "steps": "--steps", "shares": "--shares",
	"testFraction": "--test-fraction", "trainSplit": "--train-split", "testSplit": "--test-split", "otherSplit": "--other-split",
	"otherMapping": "--other-mapping", "model": "--model", "system": "--system", "policy": "--policy", "set": "--set", "done": "--done",
}

// flagNamed rewrites an error about a job parameter ("testFraction: 1.5 is
// not a share") to name the flag that set it ("--test-fraction: ...").
func flagNamed(err error, flags map[string]string) error {
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		return err
	}
	field, rest, ok := strings.Cut(err.Error(), ": ")
	if flag, known := flags[field]; ok && known {
		return apperr.New(ae.Code, "%s: %s", flag, rest)
	}
	return err
}
