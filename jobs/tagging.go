package jobs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/model"
	"deidcorpus/internal/jsonmap"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/tagger"
	"deidcorpus/store"
	"deidcorpus/version"
)

// TrainParams are a training job's parameters.
type TrainParams struct {
	Corpus string         `json:"corpus"`
	Split  string         `json:"split,omitempty"` // default train; a list ("train,dev"), or "all" for every split
	Set    string         `json:"set,omitempty"`   // default gold
	Model  string         `json:"model"`
	Config map[string]any `json:"config,omitempty"` // over tagger.DefaultConfig
}

// train fits the built-in hybrid tagger on a corpus split and stores it.
func train(ctx context.Context, run *Run) (Result, error) {
	var p TrainParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	if p.Model == "" {
		return nil, apperr.New(apperr.Invalid, "a model name is required")
	}
	if p.Set == "" {
		p.Set = "gold"
	}
	if p.Split == "" {
		p.Split = "train"
	}
	cfg, err := taggerConfig(p.Config)
	if err != nil {
		return nil, err
	}
	c, err := run.Store.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return nil, err
	}
	run.Progress(0, 1, "loading "+p.Corpus)
	docs, err := loadSplits(ctx, run.Store, c, p.Set, p.Split)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	m, err := tagger.Train(ctx, docs, cfg, func(pr tagger.Progress) {
		msg := pr.Stage
		if pr.Stage == "train" {
			msg = fmt.Sprintf("training: iteration %d, loss %.1f", pr.Done, pr.Loss)
		}
		run.Progress(pr.Done, pr.Total, msg)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		return nil, err
	}
	types := make([]string, len(m.Types))
	for i, t := range m.Types {
		types[i] = t.Type
	}
	metrics := map[string]any{
		"documents": m.Meta.Documents, "tokens": m.Meta.Tokens, "spans": m.Meta.Spans,
		"attributes": m.Meta.Attributes, "features": m.Meta.Features, "iterations": m.Meta.Iterations,
		"loss": m.Meta.Loss, "seconds": time.Since(start).Seconds(), "codeVersion": version.String(),
	}
	saved, err := run.Store.SaveModel(ctx, run.Job.ID, p.Model, func(mc *ent.ModelCreate) *ent.ModelCreate {
		return mc.SetKind(model.KindCrf).SetLabels(types).SetConfig(toJSONObject(cfg)).
			SetTrainingCorpus(p.Corpus).SetTrainingCorpusID(c.ID).SetTrainingSplit(p.Split).SetTrainingSet(p.Set).
			SetMetrics(metrics).SetHash(m.Hash()).SetFormat(fmt.Sprintf("deidtag/%d", tagger.FormatVersion)).
			SetArtifact(buf.Bytes()).SetCreatedBy(run.Job.CreatedBy)
	})
	if err != nil {
		return nil, err
	}
	return Result{"model": saved.ID, "modelName": saved.Name, "hash": saved.Hash, "metrics": metrics}, nil
}

// loadSplits loads the documents of a comma-separated list of splits
// ("train,dev"), or of every split for "all", with the spans of set.
func loadSplits(ctx context.Context, st *store.Store, c *ent.Corpus, set, splits string) ([]pipeline.Document, error) {
	names := strings.Split(splits, ",")
	if splits == "all" {
		names = []string{""} // LoadSplit's every document
	}
	var docs []pipeline.Document
	seen := map[string]bool{}
	for _, split := range names {
		split = strings.TrimSpace(split)
		if split == "" && splits != "all" {
			return nil, apperr.New(apperr.Invalid, "split list %q: an empty split (name splits, or \"all\")", splits)
		}
		if seen[split] {
			continue
		}
		seen[split] = true
		ds, err := st.LoadSplit(ctx, c, set, split)
		if err != nil {
			return nil, err
		}
		if len(ds) == 0 {
			return nil, apperr.New(apperr.Invalid, "corpus %q has no documents in split %q", c.Name, cmp.Or(split, "all"))
		}
		docs = append(docs, ds...)
	}
	return docs, nil
}

// TagParams are a tagging job's parameters.
type TagParams struct {
	Model  string `json:"model"`
	Corpus string `json:"corpus"`
	Split  string `json:"split,omitempty"` // "" for every document
	// Set names the system annotation set written; default "system-" + model.
	Set        string             `json:"set,omitempty"`
	RecallBias map[string]float64 `json:"recallBias,omitempty"`
	// Curve asks for the model's precision/recall at each of these recall
	// biases on the gold set (built-in models, corpora with gold only); it is
	// kept in the evaluation's report.
	Curve []float64 `json:"curve,omitempty"`
	// Gold, when the corpus has it, is scored against; default "gold".
	Gold string `json:"gold,omitempty"`
}

// tagBatch is how many documents (whole patients at a time) are tagged,
// written and scored together: the job holds one batch, whatever the size
// of the corpus.
const tagBatch = 200

// tagTest lets tests cut a tag job's batches small and interrupt it after a
// batch has been written (tagging_export_test.go).
type tagTest struct {
	batch int
	after func(done int) error
}

var tagTesting atomic.Pointer[tagTest]

// maxCurveDocuments bounds the split a recall-bias curve is asked on: the
// curve tags the whole split once per bias and keeps it in memory, which
// suits a dev split, not a hospital's corpus.
const maxCurveDocuments = 5000

// tag runs a model over a corpus (or one split of it), writes its output as a
// system annotation set and, where the corpus has gold spans, evaluates it.
//
// It streams: each batch of whole patients is read with its gold spans,
// tagged, written to the set in a transaction of its own and scored by an
// evaluate.Accumulator; the evaluation is saved at the end. Until then the
// set is marked as being written (store.BeginAnnotations), and a retried
// attempt skips the patients an earlier one wrote, scoring their stored
// spans: it ends with the same set and the same evaluation.
func tag(ctx context.Context, run *Run) (Result, error) {
	var p TagParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	if p.Set == "" {
		p.Set = "system-" + p.Model
	}
	if p.Gold == "" {
		p.Gold = "gold"
	}
	st := run.Store
	mrow, err := st.ModelByName(ctx, p.Model)
	if err != nil {
		return nil, err
	}
	c, err := st.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return nil, err
	}
	total, err := st.CountDocuments(ctx, c, p.Split)
	if err != nil {
		return nil, err
	}
	gold := p.Gold
	if _, err := st.AnnotationSet(ctx, c, p.Gold); apperr.CodeOf(err) == apperr.NotFound {
		gold = "" // no gold to score against
	} else if err != nil {
		return nil, err
	}
	if len(p.Curve) > maxCurvePoints {
		return nil, apperr.New(apperr.Invalid, "curve: %d biases, at most %d", len(p.Curve), maxCurvePoints)
	}
	if len(p.Curve) > 0 {
		switch {
		case mrow.Kind == model.KindExternal:
			return nil, apperr.New(apperr.Invalid, "curve: model %s is external; a recall-bias curve needs a built-in model", p.Model)
		case gold == "":
			return nil, apperr.New(apperr.NotFound, "curve: corpus %q has no annotation set %q", c.Name, p.Gold)
		case total > maxCurveDocuments:
			return nil, apperr.New(apperr.Invalid, "curve: the split has %d documents; a recall-bias curve is meant for a dev split of at most %d", total, maxCurveDocuments)
		}
	}
	tagFn, tm, err := modelTagger(mrow, p.RecallBias, run.External)
	if err != nil {
		return nil, err
	}
	prov := map[string]any{"source": "tagging", "model": p.Model, "modelHash": mrow.Hash, "job": run.Job.ID,
		"split": p.Split, "recallBias": p.RecallBias, "codeVersion": version.String()}
	set, err := st.BeginAnnotations(ctx, c, p.Set, "system", prov, run.Job.ID)
	if err != nil {
		return nil, err
	}
	written := store.Written(set)
	var acc *evaluate.Accumulator
	if gold != "" {
		if acc, err = evaluate.NewAccumulator(evaluate.Options{Summary: true}); err != nil {
			return nil, err
		}
	}
	var curveGold []pipeline.Document // the whole split, only for a curve (bounded above)
	done, after := 0, ""
	size, test := tagBatch, tagTesting.Load()
	if test != nil {
		size = test.batch
	}
	run.Progress(0, total, fmt.Sprintf("tagging with %s", p.Model))
	err = st.EachBatch(ctx, c, gold, p.Split, size, func(batch []pipeline.Document) error {
		var todo, old []pipeline.Document
		for _, d := range batch {
			d.Spans = nil // the model sees the text only
			if written(d.Patient) {
				old = append(old, d)
			} else {
				todo = append(todo, d)
			}
		}
		var tagged []pipeline.Document
		if len(todo) > 0 {
			var err error
			if tagged, err = tagFn(ctx, todo); err != nil {
				return err
			}
			if err := st.AppendAnnotations(ctx, c, set, after, tagged); err != nil {
				return err
			}
		}
		if acc != nil {
			stored, err := st.SetSpans(ctx, set, old)
			if err != nil {
				return err
			}
			if err := acc.Add(batch, append(tagged, stored...)); err != nil {
				return apperr.Wrap(apperr.Invalid, err)
			}
		}
		if len(p.Curve) > 0 {
			curveGold = append(curveGold, batch...)
		}
		after = batch[len(batch)-1].Patient
		done += len(batch)
		run.Progress(done, total, fmt.Sprintf("tagging with %s", p.Model))
		if test != nil {
			return test.after(done)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if set, err = st.FinishAnnotations(ctx, set); err != nil {
		return nil, err
	}
	res := Result{"annotationSet": set.ID, "setName": set.Name, "documents": done}
	if acc == nil {
		return res, nil
	}
	report, err := acc.Report()
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	if len(p.Curve) > 0 {
		if report.RecallBiasCurve, err = recallCurve(ctx, tm, curveGold, p.Curve, run.Progress); err != nil {
			return nil, err
		}
		res["curve"] = report.RecallBiasCurve
	}
	ev, err := st.SaveEvaluation(ctx, store.EvaluationInput{CorpusID: c.ID, Gold: p.Gold, System: p.Set,
		Options: evaluate.Options{Summary: true}, JobID: run.Job.ID, CreatedBy: run.Job.CreatedBy, Report: report})
	if err != nil {
		return nil, err
	}
	res["evaluation"], res["precision"], res["recall"], res["f1"] = ev.ID, ev.Precision, ev.Recall, ev.F1
	return res, nil
}

// modelTagger returns the tagging function of a stored model and, for a
// built-in one, the model itself.
func modelTagger(m *ent.Model, bias map[string]float64, ext *ExternalClient) (func(context.Context, []pipeline.Document) ([]pipeline.Document, error), *tagger.Model, error) {
	switch m.Kind {
	case model.KindExternal:
		return func(ctx context.Context, docs []pipeline.Document) ([]pipeline.Document, error) {
			return ext.Tag(ctx, m.Endpoint, docs)
		}, nil, nil
	default:
		tm, err := tagger.Load(bytes.NewReader(m.Artifact))
		if err != nil {
			return nil, nil, apperr.New(apperr.Internal, "model %s: %v", m.Name, err)
		}
		return func(ctx context.Context, docs []pipeline.Document) ([]pipeline.Document, error) {
			return tm.Tag(ctx, docs, tagger.TagOptions{RecallBias: bias})
		}, tm, nil
	}
}

// taggerConfig reads a job's tagger configuration (JSON object over the
// defaults; nil for the defaults).
func taggerConfig(m map[string]any) (tagger.Config, error) {
	if m == nil {
		return tagger.DefaultConfig(), nil
	}
	data, err := json.Marshal(m)
	if err != nil {
		return tagger.Config{}, apperr.New(apperr.Invalid, "tagger config: %v", err)
	}
	cfg, err := tagger.ReadConfig(bytes.NewReader(data))
	return cfg, apperr.Wrap(apperr.Invalid, err)
}

// toJSONObject records a configuration as the JSON object stored with a
// model or result; a Config always encodes.
func toJSONObject(v any) map[string]any {
	m, _ := jsonmap.Of(v)
	return m
}
