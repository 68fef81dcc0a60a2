package jobs

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"deidcorpus/apperr"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/experiment"
	"deidcorpus/pipeline/phi"
	"deidcorpus/pipeline/tagger"
	"deidcorpus/store"
	"deidcorpus/version"
)

// ExperimentParams are an experiment job's parameters. Corpus is the corpus
// tested on; Other is the second corpus: the outside training corpus X of
// "cross" and "curve" (train on X, test on Corpus), or the resynthesized twin
// R of "or" (Corpus is then the original O).
type ExperimentParams struct {
	Kind   string `json:"kind"` // cv, cross, curve, or or residual-risk
	Corpus string `json:"corpus"`
	Other  string `json:"other,omitempty"`
	Set    string `json:"set,omitempty"` // gold annotation set of Corpus; default gold
	// Done keeps, of Corpus's documents, those marked done in Set (an
	// annotation set's progress): cv and curve then score a tagger trained
	// on what has been annotated so far, the learning curve as annotation
	// proceeds.
	Done     bool   `json:"done,omitempty"`
	OtherSet string `json:"otherSet,omitempty"` // of Other; default gold
	// TrainSplit is the split of Corpus the experiment draws on: default
	// train, "all" for every document. TestSplit, when set, is its test
	// split; when not, TestFraction (default 0.2) of TrainSplit's documents,
	// whole patients chosen by Seed, is held out for testing (cross, curve
	// and or; cv folds TrainSplit itself).
	TrainSplit   string  `json:"trainSplit,omitempty"`
	TestSplit    string  `json:"testSplit,omitempty"`
	TestFraction float64 `json:"testFraction,omitempty"`
	// OtherSplit is the split of Other used for training in cross and curve
	// (default train, "all" for every document). In or, Other's documents
	// are split exactly as Corpus's, by document id.
	OtherSplit string `json:"otherSplit,omitempty"`
	K          int    `json:"k,omitempty"`     // cv folds; default 10
	Steps      int    `json:"steps,omitempty"` // curve steps; default 10 (10%, 20%, ...)
	// Shares of Corpus's training documents added to Other's in cross
	// (Deleger Figures 2-4), e.g. [0.1, 0.5].
	Shares []float64 `json:"shares,omitempty"`
	Seed   uint64    `json:"seed"`
	// Mapping and OtherMapping map Corpus's and Other's spans to a common
	// label set: a built-in mapping's name, or (MappingText,
	// OtherMappingText) a mapping file's text, which MappingLabel and
	// OtherMappingLabel name in errors (the command line's file paths). In
	// or, Mapping maps both.
	Mapping           string `json:"mapping,omitempty"`
	MappingText       string `json:"mappingText,omitempty"`
	MappingLabel      string `json:"mappingLabel,omitempty"`
	OtherMapping      string `json:"otherMapping,omitempty"`
	OtherMappingText  string `json:"otherMappingText,omitempty"`
	OtherMappingLabel string `json:"otherMappingLabel,omitempty"`
	// Config is the tagger configuration over tagger.DefaultConfig (e.g.
	// {"training": {"max_iterations": 30}}).
	Config map[string]any `json:"config,omitempty"`
	// Model tags the notes of a residual-risk experiment; without one, K
	// patient folds (default 5) each tag theirs with a model trained on
	// the others. Policy is the resynthesis policy (default
	// surrogate.DefaultPolicy).
	Model string `json:"model,omitempty"`
	// System names an annotation set of the corpus that a residual-risk
	// experiment scores as it stands (an earlier run's kept set, or an
	// external tagger's output imported beside gold) instead of tagging:
	// the same misses measured under another policy.
	System    string `json:"system,omitempty"`
	Policy    any    `json:"policy,omitempty"`
	Bootstrap int    `json:"bootstrap,omitempty"` // default 1,000
	// OperatingPoint is the rule the residual-risk experiment's tagger
	// tags at: "balanced" (default) or "privacy" (folds calibrate it as
	// training does, on their own held-out tags; a model uses its own
	// calibration).
	OperatingPoint string `json:"operatingPoint,omitempty"`
	Shuffles       int    `json:"shuffles,omitempty"` // default 9,999
}

// maxRuns bounds the folds (k), curve points (steps) and shares an
// experiment may ask for: each trains a tagger of its own, minutes of a
// worker on a real corpus.
const maxRuns = 20

// Validate checks an experiment's parameters before it is queued.
func (p ExperimentParams) Validate() error {
	needOther := p.Kind == "cross" || p.Kind == "or"
	switch {
	case p.Corpus == "":
		return required("corpus")
	case !slices.Contains([]string{"cv", "cross", "curve", "or", "residual-risk"}, p.Kind):
		return fmt.Errorf("kind: unknown experiment kind %q (known: cv, cross, curve, or, residual-risk)", p.Kind)
	case needOther && p.Other == "":
		return fmt.Errorf("other: the %s experiment needs a second corpus", p.Kind)
	case p.Kind != "cv" && p.TestSplit != "" && (p.TestSplit == cmp.Or(p.TrainSplit, "train") || p.TestSplit == "all" || p.TrainSplit == "all"):
		return fmt.Errorf("testSplit: %q overlaps the training split %q: the tagger would be tested on documents it was trained on",
			p.TestSplit, cmp.Or(p.TrainSplit, "train"))
	case p.Other != "" && p.Other == p.Corpus:
		return fmt.Errorf("other: the second corpus must differ from the first")
	case (p.Kind == "cv" || p.Kind == "residual-risk") && p.Other != "":
		return fmt.Errorf("other: the %s experiment takes one corpus", p.Kind)
	case p.Model != "" && p.K != 0:
		return fmt.Errorf("model: a given model tags every note; folds (k) train their own")
	case p.System != "" && (p.Model != "" || p.K != 0):
		return fmt.Errorf("system: the annotation set is scored as it stands; neither a model nor folds (k) tag the notes")
	case p.System != "" && p.System == cmp.Or(p.Set, "gold"):
		return fmt.Errorf("system: %q is the gold set itself: a release made from gold leaks nothing to measure", p.System)
	case p.System != "" && p.OperatingPoint != "":
		return fmt.Errorf("operatingPoint: the annotation set is scored as it stands; no tagger tags the notes")
	case p.K < 0 || p.K == 1:
		return fmt.Errorf("k: cross-validation needs at least 2 folds, not %d", p.K)
	case p.K > maxRuns:
		return fmt.Errorf("k: %d folds, at most %d (each trains a model)", p.K, maxRuns)
	case p.Steps < 0:
		return fmt.Errorf("steps: %d is negative", p.Steps)
	case p.Steps > maxRuns:
		return fmt.Errorf("steps: %d points of the curve, at most %d (each trains a model)", p.Steps, maxRuns)
	case len(p.Shares) > maxRuns:
		return fmt.Errorf("shares: %d shares, at most %d (each trains a model)", len(p.Shares), maxRuns)
	case p.TestFraction < 0 || p.TestFraction >= 1:
		return fmt.Errorf("testFraction: %g is not a share in (0, 1)", p.TestFraction)
	}
	for field, split := range map[string]string{"trainSplit": p.TrainSplit, "testSplit": p.TestSplit, "otherSplit": p.OtherSplit} {
		if strings.Contains(split, ",") {
			return fmt.Errorf("%s: one split name or \"all\", not a list (%q)", field, split)
		}
	}
	if err := evaluate.CheckResamples(p.Shuffles, p.Bootstrap); err != nil {
		return err
	}
	if unread := p.unread(); len(unread) > 0 {
		return fmt.Errorf("%s: the %s experiment does not read it", unread[0], p.Kind)
	}
	if _, _, err := p.mappings(); err != nil {
		return err
	}
	if _, err := tagger.ParseOperatingPoint(p.OperatingPoint); err != nil {
		return fmt.Errorf("operatingPoint: %v", err)
	}
	if _, _, err := (ResynthesizeParams{Policy: p.Policy}).policy(); err != nil {
		return err
	}
	_, err := taggerConfig(p.Config)
	return err
}

// experimentFieldKinds are the kinds that read each parameter only some
// kinds read.
var experimentFieldKinds = map[string][]string{
	"k": {"cv", "residual-risk"}, "steps": {"curve"}, "done": {"cv", "curve"}, "model": {"residual-risk"}, "system": {"residual-risk"}, "policy": {"residual-risk"}, "operatingPoint": {"residual-risk"}, "shares": {"cross"}, "otherSplit": {"cross", "curve"},
	"otherMapping": {"cross", "curve"}, "testSplit": {"cross", "curve", "or"}, "testFraction": {"cross", "curve", "or"},
}

// unread lists the parameters given that p's kind does not read (a curve
// with k would otherwise run as if it had none).
func (p ExperimentParams) unread() []string {
	given := map[string]bool{"k": p.K != 0, "steps": p.Steps != 0, "shares": len(p.Shares) > 0, "otherSplit": p.OtherSplit != "",
		"otherMapping": p.OtherMapping != "" || p.OtherMappingText != "", "testSplit": p.TestSplit != "", "testFraction": p.TestFraction != 0,
		"model": p.Model != "", "system": p.System != "", "policy": p.Policy != nil, "done": p.Done,
		"operatingPoint": p.OperatingPoint != ""}
	var out []string
	for _, field := range slices.Sorted(maps.Keys(experimentFieldKinds)) {
		if given[field] && !slices.Contains(experimentFieldKinds[field], p.Kind) {
			out = append(out, field)
		}
	}
	return out
}

// precondition checks the corpora, sets and splits the experiment reads.
func (p ExperimentParams) precondition(ctx context.Context, st *store.Store) error {
	set := cmp.Or(p.Set, "gold")
	if err := sourcePrecondition(ctx, st, p.Corpus, set, cmp.Or(p.TrainSplit, "train")); err != nil {
		return err
	}
	if p.Kind == "cv" || p.Kind == "residual-risk" && p.Model == "" && p.System == "" {
		if err := p.enoughPatients(ctx, st); err != nil {
			return err
		}
	}
	if p.Kind == "residual-risk" {
		if err := p.riskPrecondition(ctx, st); err != nil {
			return err
		}
	}
	if p.TestSplit != "" {
		if err := sourcePrecondition(ctx, st, p.Corpus, set, p.TestSplit); err != nil {
			return err
		}
	}
	if p.Other != "" {
		if err := sourcePrecondition(ctx, st, p.Other, cmp.Or(p.OtherSet, "gold"), cmp.Or(p.otherSplit(), "train")); err != nil {
			return err
		}
	}
	return p.mappedLabels(ctx, st)
}

// mappedLabels refuses, as the job is queued, a mapping without a rule for
// some of its corpus's labels (store.MappedLabels), and, with a second
// corpus, two corpora with no label in common once their mappings are
// applied (MEDDOCAN's FECHAS against i2b2's DATE, say): the runs that train
// on the second corpus would score 0, as if the tagger had failed.
func (p ExperimentParams) mappedLabels(ctx context.Context, st *store.Store) error {
	mapping, otherMapping, err := p.mappings()
	if err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	labelsOf := func(name, set string, m *phi.Mapping) ([]string, error) {
		c, err := st.CorpusByName(ctx, name)
		if err != nil {
			return nil, err
		}
		return st.MappedLabels(ctx, c, cmp.Or(set, "gold"), m)
	}
	ours, err := labelsOf(p.Corpus, p.Set, mapping)
	if err != nil || p.Other == "" {
		return err
	}
	theirs, err := labelsOf(p.Other, p.OtherSet, otherMapping)
	if err != nil {
		return err
	}
	for _, l := range ours {
		if _, found := slices.BinarySearch(theirs, l); found {
			return nil
		}
	}
	first := func(ls []string) string {
		switch {
		case len(ls) == 0:
			return "no label"
		case len(ls) > 4:
			return strings.Join(ls[:4], ", ") + ", ..."
		}
		return strings.Join(ls, ", ")
	}
	return apperr.New(apperr.Invalid, "other: corpora %q (%s) and %q (%s) share no label, so the runs trained on %q would score 0; "+
		"map one onto the other's labels with a mapping (--other-mapping or --mapping; in GraphQL otherMapping or mapping): built-in %s, or a mapping file",
		p.Corpus, first(ours), p.Other, first(theirs), p.Other, strings.Join(phi.BuiltinMappings(), ", "))
}

// mappings resolves the mappings of Corpus and of Other ("or" maps both by
// Mapping).
func (p ExperimentParams) mappings() (mapping, otherMapping *phi.Mapping, err error) {
	if mapping, err = phi.ResolveMapping(p.Mapping, p.MappingText, cmp.Or(p.MappingLabel, "mapping")); err != nil {
		return nil, nil, err
	}
	if p.Kind == "or" {
		return mapping, mapping, nil
	}
	otherMapping, err = phi.ResolveMapping(p.OtherMapping, p.OtherMappingText, cmp.Or(p.OtherMappingLabel, "other mapping"))
	return mapping, otherMapping, err
}

// folds is the number of folds of a cv experiment.
func (p ExperimentParams) folds() int {
	if p.Kind == "residual-risk" {
		return p.riskFolds()
	}
	return cmp.Or(p.K, 10)
}

// enoughPatients refuses a cv experiment with more folds than the split it
// folds has patients: each fold holds whole patients.
func (p ExperimentParams) enoughPatients(ctx context.Context, st *store.Store) error {
	c, err := st.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return err
	}
	split := cmp.Or(p.TrainSplit, "train")
	names, err := splitNames(split)
	if err != nil {
		return err
	}
	patients, err := st.CountPatients(ctx, c, names[0])
	if err != nil {
		return err
	}
	if patients < p.folds() {
		return apperr.New(apperr.Invalid, "k: %d folds, but split %s of corpus %q has %d patients: each fold needs one at least",
			p.folds(), split, p.Corpus, patients)
	}
	return nil
}

// otherSplit is the split of Other an experiment reads: all of it in "or",
// which splits it like the original, by id.
func (p ExperimentParams) otherSplit() string {
	if p.Kind == "or" {
		return "all"
	}
	return p.OtherSplit
}

// runExperiment runs one of the evaluation designs of pipeline/experiment
// with the built-in tagger and returns its table: a row per configuration
// (strict micro P, R, F1 with bootstrap intervals) and significance tests
// between configurations. It writes nothing, so a retried job simply runs
// again.
func runExperiment(ctx context.Context, run *Run) (Result, error) {
	var p ExperimentParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	if p.Kind == "residual-risk" {
		return runResidualRisk(ctx, run, p)
	}
	if p.TestFraction == 0 {
		p.TestFraction = 0.2
	}
	cfg, err := taggerConfig(p.Config)
	if err != nil {
		return nil, err
	}
	run.Progress(0, 1, "loading "+p.Corpus)
	plan, err := experimentPlan(ctx, run, &p)
	if err != nil {
		return nil, err
	}

	train, progress := trainerWithProgress(run, cfg)
	res, err := experiment.Run(ctx, plan, train, experiment.Options{Seed: p.Seed, Bootstrap: p.Bootstrap,
		Shuffles: p.Shuffles, Progress: progress})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return resultOf(ExperimentResult{Result: *res, Corpus: p.Corpus, Other: p.Other, CodeVersion: version.String(),
		Tagger: toJSONObject(cfg)})
}

// experimentPlan loads the documents and builds the plan a job asks for.
func experimentPlan(ctx context.Context, run *Run, p *ExperimentParams) (*experiment.Plan, error) {
	mapping, otherMapping, err := p.mappings()
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	load := func(name, set, split string, m *phi.Mapping) ([]pipeline.Document, error) {
		c, err := run.Store.CorpusByName(ctx, name)
		if err != nil {
			return nil, err
		}
		if set == "" {
			set = "gold"
		}
		switch split {
		case "":
			split = "train"
		case "all":
			split = ""
		}
		docs, err := run.Store.LoadSplit(ctx, c, set, split)
		if err != nil {
			return nil, err
		}
		if len(docs) == 0 {
			return nil, run.Store.NoDocumentsIn(ctx, c, split)
		}
		docs, err = experiment.Harmonize(docs, m)
		if err != nil {
			return nil, apperr.Wrap(apperr.Invalid, err)
		}
		return docs, nil
	}
	docs, err := load(p.Corpus, p.Set, p.TrainSplit, mapping)
	if err != nil {
		return nil, err
	}
	if p.Done {
		if docs, err = keepDone(ctx, run.Store, p.Corpus, cmp.Or(p.Set, "gold"), docs); err != nil {
			return nil, err
		}
	}
	if p.Kind == "cv" {
		plan, err := experiment.CrossValidation(p.Corpus, docs, p.folds(), p.Seed)
		return plan, apperr.Wrap(apperr.Invalid, err)
	}
	y := experiment.Data{Name: p.Corpus}
	from := cmp.Or(p.TrainSplit, "train")
	if p.TestSplit != "" {
		y.Train = docs
		if y.Test, err = load(p.Corpus, p.Set, p.TestSplit, mapping); err != nil {
			return nil, err
		}
		y.TrainLabel, y.TestLabel = p.Corpus+" "+from, p.Corpus+" "+p.TestSplit
	} else {
		if y.Train, y.Test, err = experiment.SplitByPatient(docs, p.TestFraction, p.Seed); err != nil {
			return nil, apperr.Wrap(apperr.Invalid, err)
		}
		held := fmt.Sprintf("%g%% of its patients", p.TestFraction*100)
		y.TrainLabel = fmt.Sprintf("%s %s, less %s", p.Corpus, from, held)
		y.TestLabel = fmt.Sprintf("%s %s, held-out %s", p.Corpus, from, held)
	}
	var x *experiment.Data
	if p.Other != "" {
		odocs, err := load(p.Other, p.OtherSet, p.otherSplit(), otherMapping)
		if err != nil {
			return nil, err
		}
		x = &experiment.Data{Name: p.Other, Train: odocs, TrainLabel: p.Other + " " + cmp.Or(p.OtherSplit, "train")}
		if p.Kind == "or" {
			if err := pairTwins(ctx, run.Store, p.Corpus, p.Other, &y, odocs); err != nil {
				return nil, err
			}
			x.Train, x.Test = experiment.PartitionLike(odocs, y)
			x.TrainLabel = strings.Replace(y.TrainLabel, p.Corpus, p.Other, 1)
			x.TestLabel = strings.Replace(y.TestLabel, p.Corpus, p.Other, 1)
		}
	}
	var plan *experiment.Plan
	switch p.Kind {
	case "cross":
		plan, err = experiment.Cross(*x, y, p.Shares, p.Seed)
	case "curve":
		steps := p.Steps
		if steps == 0 {
			steps = 10
		}
		plan, err = experiment.LearningCurve(y, x, steps, p.Seed)
	case "or":
		plan, err = experiment.OriginalResynthesized(y, *x)
	}
	return plan, apperr.Wrap(apperr.Invalid, err)
}

// keepDone keeps the documents marked done in a set of corpus.
func keepDone(ctx context.Context, st *store.Store, corpus, set string, docs []pipeline.Document) ([]pipeline.Document, error) {
	c, err := st.CorpusByName(ctx, corpus)
	if err != nil {
		return nil, err
	}
	done, err := st.DoneDocuments(ctx, c, set)
	if err != nil {
		return nil, err
	}
	docs = slices.DeleteFunc(docs, func(d pipeline.Document) bool { return !done[d.ID] })
	if len(docs) == 0 {
		return nil, apperr.New(apperr.Invalid, "done: no document of corpus %q is marked done in set %q yet", corpus, set)
	}
	return docs, nil
}

// pairTwins names the notes of the original of an O/R pair as its
// pseudonymous surrogate twin names them (y holds corpus's notes, odocs
// other's), so that each note meets its surrogate.
func pairTwins(ctx context.Context, st *store.Store, corpus, other string, y *experiment.Data, odocs []pipeline.Document) error {
	original, names, err := st.TwinNames(ctx, corpus, other)
	if err != nil || !names.Pseudonymous() {
		return err
	}
	rename := [][]pipeline.Document{odocs}
	if original == corpus {
		rename = [][]pipeline.Document{y.Train, y.Test}
	}
	for _, docs := range rename {
		for i := range docs {
			names.Rename(&docs[i])
		}
	}
	return nil
}

// trainerWithProgress returns crfTrainer, whose L-BFGS iterations show in
// the job's message after the step the experiment reported last, and the
// progress function that reports those steps.
func trainerWithProgress(run *Run, cfg tagger.Config) (func(context.Context, []pipeline.Document) (experiment.TagFunc, error), func(d, t int, msg string)) {
	var mu sync.Mutex
	var done, total int
	var step string
	progress := func(d, t int, msg string) {
		mu.Lock()
		done, total, step = d, t, msg
		mu.Unlock()
		run.Progress(d, t, msg)
	}
	train := crfTrainer(cfg, func(pr tagger.Progress) {
		if pr.Stage != "train" {
			return
		}
		mu.Lock()
		d, t, msg := done, total, step
		mu.Unlock()
		run.Progress(d, t, fmt.Sprintf("%s: iteration %d of at most %d, loss %.1f", msg, pr.Done, pr.Total, pr.Loss))
	})
	return train, progress
}

// crfTrainer trains the built-in tagger with cfg for an experiment's runs
// (progress may be nil) and tags with it.
func crfTrainer(cfg tagger.Config, progress func(tagger.Progress)) func(context.Context, []pipeline.Document) (experiment.TagFunc, error) {
	return func(ctx context.Context, docs []pipeline.Document) (experiment.TagFunc, error) {
		m, err := tagger.Train(ctx, docs, cfg, progress)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, apperr.Wrap(apperr.Invalid, err)
		}
		return func(ctx context.Context, docs []pipeline.Document) ([]pipeline.Document, error) {
			return m.Tag(ctx, docs, tagger.TagOptions{})
		}, nil
	}
}
