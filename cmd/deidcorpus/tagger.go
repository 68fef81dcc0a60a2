package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/model"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/tagger"
	"deidcorpus/store"
)

func init() {
	register(&command{
		name:    "train",
		summary: "train the built-in hybrid CRF tagger on a corpus split",
		args:    "--corpus NAME --model NAME [--split train|train,dev|all] [--set gold] [--config FILE] [--target-recall R] [--calibration-folds K] [--no-calibration] [--async] | --print-config",
		examples: []string{
			"deidcorpus train --corpus demo --model crf1",
			"deidcorpus train --print-config > tagger.json   # the defaults, to edit",
			"deidcorpus train --corpus meddocan --split train --model crf2 --config tagger.json --async",
			"deidcorpus train --corpus meddocan --split train,dev --model crf-all",
		},
		setup: setupTrain,
	})
	register(&command{
		name:    "tag",
		summary: "tag a corpus with a model (or files with a model file, offline) and score it against gold",
		args:    "--model NAME --corpus NAME [--split SPLIT] [--set NAME] [--curve B1,B2,...] [--operating-point balanced|privacy] [--target-recall R] [--async] | --model-file FILE --in PATH --out DIR [--format i2b2] [--operating-point ...]",
		examples: []string{
			"deidcorpus tag --model crf1 --corpus demo --split test",
			"deidcorpus tag --model crf1 --corpus notes --operating-point privacy   # recall first, for a release",
			"deidcorpus tag --model-file crf1.model --in notes/ --out tagged/",
		},
		setup: setupTag,
	})
	register(&command{
		name:    "features",
		summary: "write a corpus's tagger features in CRFsuite's text format",
		args:    "--corpus NAME [--split SPLIT] [--set gold] [--config FILE] --out FILE",
		examples: []string{
			"deidcorpus features --corpus demo --split train --out train.crfsuite",
		},
		setup: setupFeatures,
	})
	register(&command{
		name:    "models",
		summary: "the taggers: list them (as models list does), register an external one, export a model file",
		args:    "[--json]",
		// Alone, it lists, as corpora does.
		examples: []string{"deidcorpus models"},
		setup:    setupModelsList,
		subs: []*command{{
			name:     "list",
			summary:  "list the models: built-in CRFs with their training corpus, external taggers with their endpoint",
			args:     "[--json]",
			examples: []string{"deidcorpus models list", "deidcorpus models list --json   # every label of each"},
			setup:    setupModelsList,
		}, {
			name:    "register",
			summary: "register an external tagger reached over HTTP (curators)",
			args:    "--name NAME --endpoint URL [--labels A,B]",
			examples: []string{
				"deidcorpus models register --name mymodel --endpoint http://tagger.internal:9000/tag",
				"deidcorpus models register --name philter --endpoint https://philter.example/deid --labels NAME,DATE,ID",
			},
			setup: setupModelsRegister,
		}, {
			name:     "export",
			summary:  "write a built-in model to a file, for offline tagging (tag --model-file)",
			args:     "--model NAME --out FILE",
			examples: []string{"deidcorpus models export --model crf1 --out crf1.model"},
			setup:    setupModelsExport,
		}, {
			name:    "calibrate",
			summary: "find a built-in model's privacy operating point on held-out patient folds of its training data (a model trained without it)",
			args:    "--model NAME [--target-recall R] [--folds K] [--iterations N] [--seed N] [--async] [--json]",
			examples: []string{
				"deidcorpus models calibrate --model crf1",
				"deidcorpus models calibrate --model crf1 --target-recall 0.999 --folds 5",
			},
			setup: setupModelsCalibrate,
		}},
	})
}

func setupTrain(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "corpus to train on (required)")
	split := fs.String("split", "train", `split(s) to train on: "train", a list such as "train,dev", or "all"`)
	set := fs.String("set", "gold", "annotation set holding the training spans")
	name := fs.String("model", "", "name of the model to create (required)")
	configFile := fs.String("config", "", "tagger configuration `FILE`: JSON naming the options it changes (--print-config shows the defaults)")
	async := fs.Bool("async", false, "queue the job, print its id and return")
	asJSON := jsonFlag(fs)
	printConfig := fs.Bool("print-config", false, "print the default configuration as JSON and exit")
	var cal jobs.CalibrationParams
	calibrationFlags(fs, &cal)
	noCal := fs.Bool("no-calibration", false, "skip the privacy point's calibration (the model then tags at the balanced point only, until models calibrate)")
	return func(ctx context.Context, args []string) error {
		if *printConfig {
			data, err := json.MarshalIndent(tagger.DefaultConfig(), "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(e.stdout, "%s\n", data)
			return err
		}
		if *corpus == "" || *name == "" {
			return usageErr("--corpus and --model are required")
		}
		p := jobs.TrainParams{Corpus: *corpus, Split: *split, Set: *set, Model: *name, Calibration: cal, NoCalibration: *noCal}
		if *configFile != "" {
			var err error
			if _, p.Config, err = readTaggerConfig(*configFile); err != nil {
				return err
			}
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.train", map[string]any{"corpus": *corpus, "model": *name})
		if err != nil {
			return err
		}
		defer st.Close()
		j, err := runJob(ctx, e, st, p, *async)
		if err != nil || *async {
			return err
		}
		return finished(e, j, *asJSON)
	}
}

func setupTag(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	name := fs.String("model", "", "stored model to tag with")
	corpus := fs.String("corpus", "", "corpus to tag")
	split := fs.String("split", "", "only this split (default: every document)")
	set := fs.String("set", "", `annotation set to write (default "system-MODEL")`)
	curve := fs.String("curve", "", `recall biases to score the model at on the gold set, e.g. "-1,0,0.4,1,2,4": a precision/recall curve`)
	async := fs.Bool("async", false, "queue the job, print its id and return")
	asJSON := jsonFlag(fs)
	modelFile := fs.String("model-file", "", "offline: a model file (deidcorpus models export), no database")
	in := fs.String("in", "", "offline: input files or directory")
	out := fs.String("out", "", "offline: output directory")
	format := fs.String("format", formats.Default, "offline: file format of --in and --out")
	point := fs.String("operating-point", "balanced", `the model's decision rule: "balanced" (best F1) or "privacy" (recall first, calibrated on held-out folds: for a release)`)
	target := fs.Float64("target-recall", 0, "privacy point: the recall of PHI characters to reach (default: the model's calibrated one, 0.995)")
	return func(ctx context.Context, args []string) error {
		pt, err := tagger.ParseOperatingPoint(*point)
		if err != nil {
			return usageErr("--operating-point: %v", err)
		}
		if *target != 0 && pt != tagger.Privacy {
			return usageErr("--target-recall: only with --operating-point privacy")
		}
		if *modelFile != "" {
			if *name != "" || *corpus != "" {
				return usageErr("--model-file tags files offline: give --in and --out, not --model or --corpus")
			}
			return tagOffline(ctx, e, *modelFile, *in, *out, *format, tagger.TagOptions{Point: pt, TargetRecall: *target})
		}
		if *name == "" || *corpus == "" {
			return usageErr("--model and --corpus are required (or --model-file, --in and --out)")
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.tag", map[string]any{"corpus": *corpus, "model": *name})
		if err != nil {
			return err
		}
		defer st.Close()
		p := jobs.TagParams{Model: *name, Corpus: *corpus, Split: *split, Set: *set, OperatingPoint: string(pt), TargetRecall: *target}
		if *curve != "" {
			if p.Curve, err = parseFloats(*curve); err != nil {
				return usageErr("--curve: %v", err)
			}
		}
		j, err := runJob(ctx, e, st, p, *async)
		if err != nil || *async {
			return err
		}
		return finished(e, j, *asJSON)
	}
}

// parseFloats reads a comma-separated list of numbers.
func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// tagOffline tags files with a model file, without a database.
func tagOffline(ctx context.Context, e *env, modelFile, in, out, format string, opt tagger.TagOptions) error {
	if in == "" || out == "" {
		return usageErr("--in and --out are required with --model-file")
	}
	if err := newOutDir(out); err != nil {
		return err
	}
	f, err := formatFlag(format)
	if err != nil {
		return err
	}
	mf, err := os.Open(modelFile)
	if err != nil {
		return fileError(err)
	}
	defer mf.Close()
	m, err := tagger.Load(mf)
	if err != nil {
		return apperr.New(apperr.Invalid, "%s: %v", modelFile, err)
	}
	if opt.Point == tagger.Privacy {
		if opt.Threshold, err = m.PrivacyThreshold(opt.TargetRecall, modelFile); err != nil {
			return apperr.Wrap(apperr.Invalid, err)
		}
	}
	docs, err := readDocuments(f, in)
	if err != nil {
		return err
	}
	tagged, nets, err := m.TagReport(ctx, docs, opt)
	if err != nil {
		return err
	}
	written, err := f.Write(tagged)
	if err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	if err := formats.WriteDir(out, written); err != nil {
		return err
	}
	n := 0
	for _, d := range tagged {
		n += len(d.Spans)
	}
	fmt.Fprintf(e.stdout, "tagged %s (%s) into %s\n", counted(len(tagged), "document"), counted(n, "span"), out)
	if opt.Point == tagger.Privacy {
		fmt.Fprintf(e.stdout, "privacy point, threshold %g; safety nets added %d (patterns), %d (lists), %d (propagation)\n",
			opt.Threshold, nets.Patterns, nets.Lists, nets.Propagation)
	}
	return nil
}

func setupFeatures(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "corpus (required)")
	split := fs.String("split", "", "only this split")
	set := fs.String("set", "gold", "annotation set giving the labels")
	configFile := fs.String("config", "", "tagger configuration `FILE` (JSON), for its feature options")
	out := fs.String("out", "", "output file (required)")
	return func(ctx context.Context, args []string) error {
		if *corpus == "" || *out == "" {
			return usageErr("--corpus and --out are required")
		}
		cfg := tagger.DefaultConfig()
		if *configFile != "" {
			var err error
			if cfg, _, err = readTaggerConfig(*configFile); err != nil {
				return err
			}
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.features", map[string]any{"corpus": *corpus, "set": *set})
		if err != nil {
			return err
		}
		defer st.Close()
		c, err := st.CorpusByName(ctx, *corpus)
		if err != nil {
			return err
		}
		docs, err := st.LoadSplit(ctx, c, *set, *split)
		if err != nil {
			return err
		}
		f, err := formats.CreatePrivate(*out) // the features hold the notes' words
		if err != nil {
			return err
		}
		if err := tagger.WriteCRFsuite(ctx, f, docs, cfg); err != nil {
			f.Close()
			os.Remove(*out)
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote the features of %s to %s (CRFsuite format)\n", counted(len(docs), "document"), *out)
		return nil
	}
}

func setupModelsList(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	asJSON := fs.Bool("json", false, "print the models as JSON, every label of each")
	return func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usageErr("models list takes no arguments")
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.models", map[string]any{"subcommand": "list"})
		if err != nil {
			return err
		}
		defer st.Close()
		ms, err := st.Models(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			type listed struct {
				Name           string    `json:"name"`
				Kind           string    `json:"kind"`
				Labels         []string  `json:"labels"`
				TrainingCorpus string    `json:"trainingCorpus,omitempty"`
				TrainingSplit  string    `json:"trainingSplit,omitempty"`
				TrainingSet    string    `json:"trainingSet,omitempty"`
				Endpoint       string    `json:"endpoint,omitempty"`
				Hash           string    `json:"hash,omitempty"`
				Created        time.Time `json:"created"`
			}
			out := make([]listed, len(ms))
			for i, m := range ms {
				out[i] = listed{Name: m.Name, Kind: string(m.Kind), Labels: m.Labels, TrainingCorpus: m.TrainingCorpus,
					TrainingSplit: m.TrainingSplit, TrainingSet: m.TrainingSet, Endpoint: shownEndpoint(ctx, m), Hash: m.Hash, Created: m.CreatedAt}
			}
			return writeJSON(e.stdout, out)
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tKIND\tTRAINED ON / ENDPOINT\tLABELS\tHASH")
		for _, m := range ms {
			where := m.TrainingCorpus + "/" + m.TrainingSplit
			if m.Kind == model.KindExternal {
				where = cmp.Or(shownEndpoint(ctx, m), "(external)")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Name, m.Kind, where, someLabels(m.Labels), m.Hash)
		}
		return tw.Flush()
	}
}

// shownEndpoint is what the command's viewer reads of an external model's
// endpoint (store.ShownEndpoint): masked, or "" when it may not.
func shownEndpoint(ctx context.Context, m *ent.Model) string {
	if e := store.ShownEndpoint(ctx, m); e != nil {
		return *e
	}
	return ""
}

// someLabels shows a model's labels in a column: how many, and the first
// three (a CRF of a tag set predicts dozens; --json lists them all).
func someLabels(labels []string) string {
	if len(labels) <= 3 {
		return strings.Join(labels, ",")
	}
	return fmt.Sprintf("%d: %s, ...", len(labels), strings.Join(labels[:3], ", "))
}

func setupModelsRegister(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	name := fs.String("name", "", "the external model's name (required)")
	endpoint := fs.String("endpoint", "", "URL the documents are POSTed to, see docs/tagger.md, external taggers (required)")
	labels := listFlag{}
	fs.Var(&labels, "labels", "the span `LABELS` the model predicts, comma-separated (or the flag repeated)")
	return func(ctx context.Context, args []string) error {
		if *name == "" || *endpoint == "" || len(args) > 0 {
			return usageErr("--name and --endpoint are required, and nothing else")
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.models.register", map[string]any{"subcommand": "register", "name": *name, "endpoint": *endpoint})
		if err != nil {
			return err
		}
		defer st.Close()
		m, err := st.RegisterExternalModel(ctx, *name, *endpoint, labels, auth.Name(ctx))
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "registered external model %q at %s\n", m.Name, m.Endpoint)
		return nil
	}
}

func setupModelsExport(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	model := fs.String("model", "", "the model (required)")
	out := fs.String("out", "", "the file to write (required)")
	return func(ctx context.Context, args []string) error {
		if *model == "" || *out == "" || len(args) > 0 {
			return usageErr("--model and --out are required, and nothing else")
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.models.export", map[string]any{"subcommand": "export", "model": *model})
		if err != nil {
			return err
		}
		defer st.Close()
		m, err := st.ModelByName(ctx, *model)
		if err != nil {
			return err
		}
		if len(m.Artifact) == 0 {
			return apperr.New(apperr.Invalid, "model %q has no file (external models live at their endpoint)", *model)
		}
		// A model learnt from notes holds their words (features, lexicons).
		f, err := formats.CreatePrivate(*out)
		if err != nil {
			return err
		}
		_, err = f.Write(m.Artifact)
		if err = errors.Join(err, f.Close()); err != nil {
			os.Remove(*out) // a partial model would fail to load later, far from here
			return err
		}
		fmt.Fprintf(e.stdout, "wrote model %s (%d bytes) to %s\n", m.Name, len(m.Artifact), *out)
		return nil
	}
}

// readTaggerConfig reads a tagger configuration file: the configuration it
// gives over the defaults, and the file's own object (what a job stores).
func readTaggerConfig(path string) (tagger.Config, map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return tagger.Config{}, nil, apperr.Wrap(apperr.Invalid, err)
	}
	cfg, err := tagger.ReadConfig(bytes.NewReader(data))
	if err != nil {
		return cfg, nil, apperr.New(apperr.Invalid, "%s: %v", path, err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return cfg, nil, apperr.New(apperr.Invalid, "%s: %v", path, err)
	}
	return cfg, raw, nil
}

// calibrationFlags are the flags of a privacy point's calibration.
func calibrationFlags(fs *flag.FlagSet, p *jobs.CalibrationParams) {
	fs.Float64Var(&p.TargetRecall, "target-recall", 0, "privacy point: the recall of PHI characters calibration aims at (default 0.995)")
	fs.IntVar(&p.Folds, "calibration-folds", 0, "privacy point: held-out patient folds (default 3)")
	fs.IntVar(&p.Iterations, "calibration-iterations", 0, "privacy point: the fold models' L-BFGS steps (default 80)")
}

func setupModelsCalibrate(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	name := fs.String("model", "", "the built-in model (required)")
	var p jobs.CalibrateParams
	fs.Float64Var(&p.TargetRecall, "target-recall", 0, "the recall of PHI characters to reach (default 0.995)")
	fs.IntVar(&p.Folds, "folds", 0, "held-out patient folds (default 3)")
	fs.IntVar(&p.Iterations, "iterations", 0, "the fold models' L-BFGS steps (default 80)")
	fs.Uint64Var(&p.Seed, "seed", 0, "seed of the patient folds")
	async := fs.Bool("async", false, "queue the job, print its id and return")
	asJSON := jsonFlag(fs)
	return func(ctx context.Context, args []string) error {
		if *name == "" || len(args) > 0 {
			return usageErr("--model is required, and nothing else")
		}
		p.Model = *name
		st, ctx, err := openStore(ctx, e, *db, "cli.models", map[string]any{"subcommand": "calibrate", "model": *name})
		if err != nil {
			return err
		}
		defer st.Close()
		j, err := runJob(ctx, e, st, p, *async)
		if err != nil || *async {
			return err
		}
		return finished(e, j, *asJSON)
	}
}
