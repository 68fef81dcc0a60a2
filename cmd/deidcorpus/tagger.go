package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/tagger"
)

func init() {
	register("train", "train the built-in hybrid CRF tagger on a corpus split", runTrain)
	register("tag", "tag a corpus with a model (or files with a model file, offline)", runTag)
	register("features", "write a corpus's tagger features in CRFsuite's text format", runFeatures)
	register("models", "list models, register an external tagger, or export a model file", runModels)
}

func runTrain(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "train", "--corpus NAME [--split train] [--set gold] --model NAME [--config FILE] [--async]")
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "corpus to train on (required)")
	split := fs.String("split", "train", `split to train on ("all" for every document)`)
	set := fs.String("set", "gold", "annotation set holding the training spans")
	name := fs.String("model", "", "name of the model to create (required)")
	configFile := fs.String("config", "", "tagger configuration (JSON over the defaults: features, training, post, recall_bias)")
	async := fs.Bool("async", false, "queue the job, print its id and return")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *corpus == "" || *name == "" {
		fs.Usage()
		return apperr.New(apperr.Invalid, "--corpus and --model are required")
	}
	p := jobs.TrainParams{Corpus: *corpus, Split: *split, Set: *set, Model: *name}
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
	j, err := runJob(ctx, e, st, "train", p, *async)
	if err != nil || *async {
		return err
	}
	fmt.Fprintf(e.stdout, "trained model %q (hash %v) in job %d: %s\n", *name, j.Result["hash"], j.ID, compactJSON(j.Result["metrics"]))
	return nil
}

func runTag(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "tag", "--model NAME --corpus NAME [--split SPLIT] [--set NAME] [--async] | --model-file FILE --in DIR --out DIR [--format i2b2]")
	db := dbFlag(fs, e)
	name := fs.String("model", "", "stored model to tag with")
	corpus := fs.String("corpus", "", "corpus to tag")
	split := fs.String("split", "", "only this split (default: every document)")
	set := fs.String("set", "", `annotation set to write (default "system-MODEL")`)
	async := fs.Bool("async", false, "queue the job, print its id and return")
	modelFile := fs.String("model-file", "", "offline: a model file (deidcorpus models export), no database")
	in := fs.String("in", "", "offline: input files or directory")
	out := fs.String("out", "", "offline: output directory")
	format := fs.String("format", "i2b2", "offline: file format of --in and --out")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *modelFile != "" {
		return tagOffline(ctx, e, *modelFile, *in, *out, *format)
	}
	if *name == "" || *corpus == "" {
		fs.Usage()
		return apperr.New(apperr.Invalid, "--model and --corpus are required (or --model-file, --in and --out)")
	}
	st, ctx, err := openStore(ctx, e, *db, "cli.tag", map[string]any{"corpus": *corpus, "model": *name})
	if err != nil {
		return err
	}
	defer st.Close()
	j, err := runJob(ctx, e, st, "tag", jobs.TagParams{Model: *name, Corpus: *corpus, Split: *split, Set: *set}, *async)
	if err != nil || *async {
		return err
	}
	fmt.Fprintf(e.stdout, "tagged %s documents into set %v (job %d)", number(j.Result["documents"]), j.Result["setName"], j.ID)
	if f1, ok := j.Result["f1"].(float64); ok {
		fmt.Fprintf(e.stdout, "; against gold: strict micro P %.4f R %.4f F1 %.4f (evaluation %s)",
			j.Result["precision"], j.Result["recall"], f1, number(j.Result["evaluation"]))
	}
	fmt.Fprintln(e.stdout)
	return nil
}

// tagOffline tags files with a model file, without a database.
func tagOffline(ctx context.Context, e *env, modelFile, in, out, format string) error {
	if in == "" || out == "" {
		return apperr.New(apperr.Invalid, "--in and --out are required with --model-file")
	}
	f, err := formats.Lookup(format)
	if err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	mf, err := os.Open(modelFile)
	if err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	defer mf.Close()
	m, err := tagger.Load(mf)
	if err != nil {
		return apperr.New(apperr.Invalid, "%s: %v", modelFile, err)
	}
	files, err := formats.ReadPaths(in)
	if err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	docs, err := f.Read(files, formats.ReadOptions{AllowOverlap: true})
	if err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	tagged, err := m.Tag(ctx, docs, tagger.TagOptions{})
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
	fmt.Fprintf(e.stdout, "tagged %d documents (%d spans) into %s\n", len(tagged), n, out)
	return nil
}

func runFeatures(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "features", "--corpus NAME [--split SPLIT] [--set gold] [--config FILE] --out FILE")
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "corpus (required)")
	split := fs.String("split", "", "only this split")
	set := fs.String("set", "gold", "annotation set giving the labels")
	configFile := fs.String("config", "", "tagger configuration (JSON), for its feature options")
	out := fs.String("out", "", "output file (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *corpus == "" || *out == "" {
		fs.Usage()
		return apperr.New(apperr.Invalid, "--corpus and --out are required")
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
	f, err := os.Create(*out)
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
	fmt.Fprintf(e.stdout, "wrote the features of %d documents to %s (CRFsuite format)\n", len(docs), *out)
	return nil
}

func runModels(ctx context.Context, e *env, args []string) error {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	fs := newFlags(e, "models "+sub, "list | register --name NAME --endpoint URL [--labels A,B] | export --model NAME --out FILE")
	db := dbFlag(fs, e)
	name := fs.String("name", "", "register: the external model's name")
	endpoint := fs.String("endpoint", "", "register: URL the documents are POSTed to (see README, external taggers)")
	labels := listFlag{}
	fs.Var(&labels, "labels", "register: the span labels the model predicts")
	model := fs.String("model", "", "export: the model")
	out := fs.String("out", "", "export: the file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	op, opArgs := "cli.models", map[string]any{"subcommand": sub}
	switch sub {
	case "register":
		op, opArgs["name"], opArgs["endpoint"] = "cli.models.register", *name, *endpoint
	case "export":
		op, opArgs["model"] = "cli.models.export", *model
	}
	st, ctx, err := openStore(ctx, e, *db, op, opArgs)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "list":
		ms, err := st.Client.Model.Query().All(ctx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			where := m.TrainingCorpus + "/" + m.TrainingSplit
			if m.Endpoint != "" {
				where = m.Endpoint
			}
			fmt.Fprintf(e.stdout, "%s\t%s\t%s\t%s\t%s\n", m.Name, m.Kind, where, strings.Join(m.Labels, ","), m.Hash)
		}
		return nil
	case "register":
		if *name == "" || *endpoint == "" {
			return apperr.New(apperr.Invalid, "--name and --endpoint are required")
		}
		m, err := st.RegisterExternalModel(ctx, *name, *endpoint, labels, auth.Name(ctx))
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "registered external model %q at %s\n", m.Name, m.Endpoint)
		return nil
	case "export":
		m, err := st.ModelByName(ctx, *model)
		if err != nil {
			return err
		}
		if len(m.Artifact) == 0 {
			return apperr.New(apperr.Invalid, "model %q has no file (external models live at their endpoint)", *model)
		}
		if *out == "" {
			return apperr.New(apperr.Invalid, "--out is required")
		}
		return os.WriteFile(*out, m.Artifact, 0o644)
	}
	return apperr.New(apperr.Invalid, "unknown models subcommand %q (list, register, export)", sub)
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

func compactJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
