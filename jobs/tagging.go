package jobs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/model"
	"deidcorpus/internal/jsonmap"
	"deidcorpus/internal/seqs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/phi"
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
	// Calibration tunes the privacy point's calibration, which training
	// runs unless NoCalibration (a model that then tags at the balanced
	// point only, until models calibrate).
	Calibration   CalibrationParams `json:"calibration,omitzero"`
	NoCalibration bool              `json:"noCalibration,omitempty"`
}

// Validate checks a training job's parameters before it is queued.
func (p TrainParams) Validate() error {
	switch {
	case p.Corpus == "":
		return required("corpus")
	case p.Model == "":
		return required("model")
	}
	if _, err := splitNames(p.Split); err != nil {
		return err
	}
	if err := p.Calibration.Validate(); err != nil {
		return err
	}
	_, err := taggerConfig(p.Config)
	return err
}

// train fits the built-in hybrid tagger on a corpus split and stores it.
func train(ctx context.Context, run *Run) (Result, error) {
	var p TrainParams
	if err := run.Params(&p); err != nil {
		return nil, err
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
	if err := run.Store.ModelNameFree(ctx, p.Model, run.Job.ID); err != nil {
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
	calibrate, uncalibrated, err := p.calibrates(docs)
	if err != nil {
		return nil, err
	}
	// With calibration, training is the first half of the bar.
	scale := trainScale
	if calibrate {
		scale *= 2
	}
	m, err := tagger.Train(ctx, docs, cfg, func(pr tagger.Progress) {
		done, msg := trainProgress(pr)
		run.Progress(done, scale, msg)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	if calibrate {
		if err := calibrateModel(ctx, m, docs, p.Calibration, func(done int, msg string) { run.Progress(trainScale+done, scale, msg) }); err != nil {
			return nil, err
		}
		m.Meta.Duration = time.Since(start)
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		return nil, err
	}
	types := make([]string, len(m.Types))
	for i, t := range m.Types {
		types[i] = t.Type
	}
	metrics := TrainMetrics{Documents: m.Meta.Documents, Tokens: m.Meta.Tokens, Spans: m.Meta.Spans,
		Attributes: m.Meta.Attributes, Features: m.Meta.Features, Iterations: m.Meta.Iterations,
		Loss: m.Meta.Loss, Seconds: time.Since(start).Seconds(), CodeVersion: version.String(), Uncalibrated: uncalibrated}
	saved, err := run.Store.SaveModel(ctx, run.Job.ID, p.Model, func(mc *ent.ModelCreate) *ent.ModelCreate {
		return mc.SetKind(model.KindCrf).SetLabels(types).SetConfig(toJSONObject(cfg)).
			SetTrainingCorpus(p.Corpus).SetTrainingCorpusID(c.ID).SetTrainingSplit(p.Split).SetTrainingSet(p.Set).
			SetMetrics(toJSONObject(metrics)).SetHash(m.Hash()).SetFormat(fmt.Sprintf("deidtag/%d", tagger.FormatVersion)).
			SetArtifact(buf.Bytes()).SetCreatedBy(run.Job.CreatedBy)
	})
	if err != nil {
		return nil, err
	}
	return resultOf(TrainResult{Model: saved.ID, ModelName: saved.Name, Hash: saved.Hash, Metrics: metrics})
}

// trainScale is the progress total of a training job: its stages share one
// scale so that the bar only moves forward (features to 5%, L-BFGS to 98%,
// the learnt rules to the end).
const trainScale = 1000

// trainProgress places a training stage's progress on trainScale and says
// what the stage is doing.
func trainProgress(pr tagger.Progress) (int, string) {
	frac := 0.0
	if pr.Total > 0 {
		frac = min(float64(pr.Done)/float64(pr.Total), 1)
	}
	switch pr.Stage {
	case "features":
		return int(50 * frac), fmt.Sprintf("features: %d of %d documents", pr.Done, pr.Total)
	case "train":
		return 50 + int(930*frac), fmt.Sprintf("training: iteration %d of at most %d, loss %.1f", pr.Done, pr.Total, pr.Loss)
	default: // "post"
		return 980 + int(20*frac), "learning the post-processing rules"
	}
}

// splitNames reads a comma-separated list of splits ("train,dev"), without
// repeats; "all" is every document (the one name ""), and "" is no list,
// which the caller defaults.
func splitNames(splits string) ([]string, error) {
	if splits == "all" {
		return []string{""}, nil // LoadSplit's every document
	}
	var names []string
	if splits == "" {
		return names, nil
	}
	for _, split := range strings.Split(splits, ",") {
		split = strings.TrimSpace(split)
		if split == "" {
			return nil, apperr.New(apperr.Invalid, "split: %q has an empty split name (name splits, or \"all\")", splits)
		}
		if !slices.Contains(names, split) {
			names = append(names, split)
		}
	}
	return names, nil
}

// loadSplits loads the documents of a comma-separated list of splits
// ("train,dev"), or of every split for "all", with the spans of set.
func loadSplits(ctx context.Context, st *store.Store, c *ent.Corpus, set, splits string) ([]pipeline.Document, error) {
	names, err := splitNames(splits)
	if err != nil {
		return nil, err
	}
	var docs []pipeline.Document
	for _, split := range names {
		ds, err := st.LoadSplit(ctx, c, set, split)
		if err != nil {
			return nil, err
		}
		if len(ds) == 0 {
			return nil, st.NoDocumentsIn(ctx, c, split)
		}
		docs = append(docs, ds...)
	}
	return docs, nil
}

func (p TrainParams) precondition(ctx context.Context, st *store.Store) error {
	if err := st.ModelNameFree(ctx, p.Model, 0); err != nil {
		return err
	}
	return sourcePrecondition(ctx, st, p.Corpus, cmp.Or(p.Set, "gold"), cmp.Or(p.Split, "train"))
}

// precondition also refuses the output set where the plan would
// (store.AnnotationSetFree). It runs only when a job is queued: a retried or
// requeued job is not queued anew, and its plan resumes the set its earlier
// attempt made.
func (p TagParams) precondition(ctx context.Context, st *store.Store) error {
	t, err := p.load(ctx, st)
	if err != nil {
		return err
	}
	if err := t.checkPoint(); err != nil {
		return err
	}
	return st.AnnotationSetFree(ctx, t.c, t.p.Set)
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
	// OperatingPoint is the model's decision rule: "balanced" (default)
	// or "privacy"; TargetRecall, with privacy, asks for a recall of PHI
	// characters other than the one the model was calibrated at.
	OperatingPoint string  `json:"operatingPoint,omitempty"`
	TargetRecall   float64 `json:"targetRecall,omitempty"`
}

// Validate checks a tagging job's parameters before it is queued.
func (p TagParams) Validate() error {
	switch {
	case p.Model == "":
		return required("model")
	case p.Corpus == "":
		return required("corpus")
	case len(p.Curve) > maxCurvePoints:
		return fmt.Errorf("curve: %d biases, at most %d", len(p.Curve), maxCurvePoints)
	}
	point, err := tagger.ParseOperatingPoint(p.OperatingPoint)
	if err != nil {
		return err
	}
	if p.TargetRecall != 0 {
		if point != tagger.Privacy {
			return fmt.Errorf("targetRecall: only with operating point %q", tagger.Privacy)
		}
		return tagger.ValidTargetRecall(p.TargetRecall)
	}
	return nil
}

// tagBatch is how many documents (whole patients at a time) are tagged and
// written together: a worker holds one batch, whatever the size of the
// corpus. tagPart is how many a part of the job tags: the unit the workers
// share.
const (
	tagBatch = 200
	tagPart  = 2000
)

// tagTest lets tests cut a tag job's batches and parts small and interrupt
// it after a batch has been written (tagging_export_test.go).
type tagTest struct {
	batch, part int
	after       func(done int) error
}

var tagTesting atomic.Pointer[tagTest]

// maxCurveDocuments bounds the split a recall-bias curve is asked on: the
// curve tags the whole split once per bias and keeps it in memory, which
// suits a dev split, not a hospital's corpus.
const maxCurveDocuments = 5000

// tagSplit runs a model over a corpus (or one split of it), writes its
// output as a system annotation set and, where the corpus has gold spans,
// evaluates it. It is split into parts of whole patients that every worker
// takes: the plan creates the set, marked as being written
// (store.BeginAnnotations); a part tags its patients a batch at a time,
// each batch written in a transaction of its own, skipping the patients an
// earlier attempt wrote; the finish opens the set and scores it against gold
// a batch at a time (evaluate.Accumulator). Interrupted anywhere and
// retried, it ends with the same set and the same evaluation.
var tagSplit = Split{Plan: planTag, Part: tagPatients, Finish: finishTag}

// tagJob is what every step of a tag job reads.
type tagJob struct {
	p     TagParams
	model *ent.Model
	c     *ent.Corpus
	gold  string // the gold set's name; "" when the corpus has none
	total int    // documents to tag
}

// loadTagJob reads a tag job's parameters, with their defaults, and what
// they name, and checks them.
func loadTagJob(ctx context.Context, st *store.Store, params map[string]any) (*tagJob, error) {
	var p TagParams
	if err := decodeParams(params, &p); err != nil {
		return nil, apperr.New(apperr.Invalid, "tag job parameters: %v", err)
	}
	if err := validate(p); err != nil {
		return nil, err
	}
	return p.load(ctx, st)
}

// load reads what a tag job's parameters name, with their defaults, and
// checks them: when the job is queued and again when it starts.
func (p TagParams) load(ctx context.Context, st *store.Store) (*tagJob, error) {
	if p.Set == "" {
		p.Set = "system-" + p.Model
	}
	if p.Gold == "" {
		p.Gold = "gold"
	}
	t := &tagJob{p: p}
	var err error
	if t.model, err = st.ModelByName(ctx, p.Model); err != nil {
		return nil, err
	}
	if t.c, err = st.CorpusByName(ctx, p.Corpus); err != nil {
		return nil, err
	}
	if t.total, err = st.CountDocuments(ctx, t.c, p.Split); err != nil {
		return nil, err
	}
	if t.total == 0 { // nothing to tag: an empty set and an evaluation of nothing
		return nil, st.NoDocumentsIn(ctx, t.c, p.Split)
	}
	t.gold = p.Gold
	if _, err := st.AnnotationSet(ctx, t.c, p.Gold); apperr.CodeOf(err) == apperr.NotFound {
		t.gold = "" // no gold to score against
	} else if err != nil {
		return nil, err
	}
	if len(p.Curve) > 0 {
		switch {
		case t.model.Kind == model.KindExternal:
			return nil, apperr.New(apperr.Invalid, "curve: model %s is external; a recall-bias curve needs a built-in model", p.Model)
		case t.gold == "":
			return nil, apperr.New(apperr.NotFound, "curve: corpus %q has no annotation set %q", t.c.Name, p.Gold)
		case t.total > maxCurveDocuments:
			return nil, apperr.New(apperr.Invalid, "curve: the split has %d documents; a recall-bias curve is meant for a dev split of at most %d", t.total, maxCurveDocuments)
		}
	}
	return t, nil
}

// set returns the job's annotation set, which the plan made.
func (t *tagJob) set(ctx context.Context, st *store.Store, jobID int) (*ent.AnnotationSet, error) {
	prov := map[string]any{"source": "tagging", "model": t.p.Model, "modelHash": t.model.Hash, "job": jobID,
		"split": t.p.Split, "recallBias": t.p.RecallBias, "operatingPoint": cmp.Or(t.p.OperatingPoint, string(tagger.Balanced)),
		"targetRecall": t.p.TargetRecall, "codeVersion": version.String()}
	return st.BeginAnnotations(ctx, t.c, t.p.Set, "system", prov, jobID)
}

func planTag(ctx context.Context, run *Run) ([]map[string]any, error) {
	t, err := loadTagJob(ctx, run.Store, run.Job.Params)
	if err != nil {
		return nil, err
	}
	if _, err := t.set(ctx, run.Store, run.Job.ID); err != nil {
		return nil, err
	}
	size := tagPart
	if test := tagTesting.Load(); test != nil {
		size = test.part
	}
	groups, docs, err := run.Store.PatientGroups(ctx, t.c, t.p.Split, size, nil)
	if err != nil {
		return nil, err
	}
	parts := make([]map[string]any, len(groups))
	for i := range groups {
		parts[i] = map[string]any{"patients": groups[i], "documents": docs[i]}
	}
	return parts, nil
}

// tagPatients is a part of a tag job: it tags the patients of the part that
// are not written yet.
func tagPatients(ctx context.Context, run *Run, parent *ent.Job, part map[string]any) (Result, error) {
	st := run.Store
	t, err := loadTagJob(ctx, st, parent.Params)
	if err != nil {
		return nil, err
	}
	set, err := t.set(ctx, st, parent.ID)
	if err != nil {
		return nil, err
	}
	var spec struct {
		Patients  []int `json:"patients"`
		Documents int   `json:"documents"`
	}
	if err := decodeParams(part, &spec); err != nil || len(spec.Patients) == 0 {
		return nil, apperr.New(apperr.Invalid, "part of job %d: no patients (%v)", parent.ID, err)
	}
	var nets tagger.NetReport
	tagFn, _, err := run.manager.modelTagger(t.model, t.rule(&nets), t.c)
	if err != nil {
		return nil, err
	}
	written := store.Written(set)
	done, after := 0, ""
	size, test := tagBatch, tagTesting.Load()
	if test != nil {
		size = test.batch
	}
	message := fmt.Sprintf("tagging with %s", t.p.Model)
	run.Progress(0, spec.Documents, message)
	// A batch is written while the next is tagged.
	type tagged struct {
		docs []pipeline.Document // the batch's notes not written yet, tagged
		last string              // the batch's last patient
		read int                 // the notes of the batch
	}
	err = seqs.Ahead(ctx, func(ctx context.Context, send func(tagged) error) error {
		return st.EachBatchOf(ctx, t.c, "", t.p.Split, spec.Patients, size, func(batch []pipeline.Document) error {
			var todo []pipeline.Document
			for _, d := range batch {
				if !written(d.Patient) {
					todo = append(todo, d)
				}
			}
			b := tagged{last: batch[len(batch)-1].Patient, read: len(batch)}
			if len(todo) > 0 {
				var err error
				if b.docs, err = tagFn(ctx, todo); err != nil {
					return err
				}
			}
			return send(b)
		})
	}, func(b tagged) error {
		if len(b.docs) > 0 {
			if err := st.AppendAnnotations(ctx, t.c, set, after, b.docs); err != nil {
				return err
			}
		}
		after = b.last
		done += b.read
		run.Progress(done, spec.Documents, message)
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
	return Result{"documents": done, "nets": nets}, nil
}

// finishTag opens the set and scores it against gold.
func finishTag(ctx context.Context, run *Run, parts []Result) (Result, error) {
	st := run.Store
	t, err := loadTagJob(ctx, st, run.Job.Params)
	if err != nil {
		return nil, err
	}
	set, err := t.set(ctx, st, run.Job.ID)
	if err != nil {
		return nil, err
	}
	if set, err = st.FinishAnnotations(ctx, set); err != nil {
		return nil, err
	}
	documents := 0
	for _, r := range parts {
		n, _ := r["documents"].(float64)
		documents += int(n)
	}
	res := TagResult{AnnotationSet: set.ID, SetName: set.Name, Documents: documents, Nets: partNets(parts)}
	if t.gold == "" {
		return resultOf(res)
	}
	var curveGold []pipeline.Document // the whole split, only for a curve (bounded above)
	var keep func([]pipeline.Document)
	if len(t.p.Curve) > 0 {
		keep = func(gold []pipeline.Document) { curveGold = append(curveGold, gold...) }
	}
	opt := evaluate.Options{Metric: evaluate.MetricFor(t.c.Tagset), Summary: true}
	report, err := scoreSets(ctx, run, t.c, t.gold, t.p.Split, set, opt, keep)
	if err != nil {
		return nil, err
	}
	if len(t.p.Curve) > 0 {
		_, tm, err := run.manager.modelTagger(t.model, tagRule{Bias: t.p.RecallBias}, t.c)
		if err != nil {
			return nil, err
		}
		if report.RecallBiasCurve, err = recallCurve(ctx, tm, curveGold, t.p.Curve, run.Progress); err != nil {
			return nil, err
		}
		res.Curve = report.RecallBiasCurve
	}
	ev, err := st.SaveEvaluation(ctx, store.EvaluationInput{CorpusID: t.c.ID, Gold: t.p.Gold, System: t.p.Set,
		Options: opt, JobID: run.Job.ID, CreatedBy: run.Job.CreatedBy, Report: report})
	if err != nil {
		return nil, err
	}
	res.Evaluation, res.Precision, res.Recall, res.F1 = &ev.ID, &ev.Precision, &ev.Recall, &ev.F1
	return resultOf(res)
}

// modelTagger returns the tagging function of a stored model under rule
// and, for a built-in one, the model itself (an external one's labels read
// against corpus c's tag set). A built-in model is decoded once per
// process and kept while the next job uses it too (every part of a tag job
// would decode it again).
func (m *Manager) modelTagger(row *ent.Model, rule tagRule, c *ent.Corpus) (func(context.Context, []pipeline.Document) ([]pipeline.Document, error), *tagger.Model, error) {
	if row.Kind == model.KindExternal {
		if rule.Point == tagger.Privacy {
			return nil, nil, apperr.New(apperr.Invalid, "operatingPoint: model %s is external; only a built-in model has a privacy point", row.Name)
		}
		ts, _ := phi.Lookup(c.Tagset)
		endpoint, err := m.store.ExternalEndpoint(row)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, docs []pipeline.Document) ([]pipeline.Document, error) {
			// Audited before it leaves: a batch sent and then failed was sent.
			if err := m.store.AuditExternalSend(ctx, c, row, docs); err != nil {
				return nil, err
			}
			return m.external.Tag(ctx, endpoint, row.Name, ts, docs)
		}, nil, nil
	}
	tm, err := m.builtinModel(row)
	if err != nil {
		return nil, nil, err
	}
	opt, err := rule.options(tm, row.Name)
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context, docs []pipeline.Document) ([]pipeline.Document, error) {
		out, rep, err := tm.TagReport(ctx, docs, opt)
		if rule.Nets != nil {
			*rule.Nets = rule.Nets.Add(rep)
		}
		return out, err
	}, tm, nil
}

// builtinModel decodes a built-in model's artifact, or returns the one
// decoded last when its artifact is the same bytes (a calibration rewrites
// the artifact of a model, not its hash).
func (m *Manager) builtinModel(row *ent.Model) (*tagger.Model, error) {
	m.lastModel.Lock()
	defer m.lastModel.Unlock()
	if m.lastModel.id != row.ID || !bytes.Equal(m.lastModel.artifact, row.Artifact) {
		tm, err := tagger.Load(bytes.NewReader(row.Artifact))
		if err != nil {
			return nil, apperr.New(apperr.Internal, "model %s: %v", row.Name, err)
		}
		m.lastModel.id, m.lastModel.artifact, m.lastModel.model = row.ID, row.Artifact, tm
	}
	return m.lastModel.model, nil
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
	if err != nil {
		return cfg, apperr.New(apperr.Invalid, "config: %v", err)
	}
	return cfg, nil
}

// toJSONObject records a configuration as the JSON object stored with a
// model or result; a Config always encodes.
func toJSONObject(v any) map[string]any {
	m, _ := jsonmap.Of(v)
	return m
}
