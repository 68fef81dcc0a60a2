package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
)

// TagFunc tags documents: it returns copies of them whose Spans are the
// predictions, one for each document given, with the same ids.
type TagFunc func(ctx context.Context, docs []pipeline.Document) ([]pipeline.Document, error)

// TrainFunc trains a tagger on documents with gold spans and returns its
// tagging function.
type TrainFunc func(ctx context.Context, train []pipeline.Document) (TagFunc, error)

// Options tune Run. Zero values take the defaults of evaluate.Compare.
type Options struct {
	Seed       uint64  // seeds the bootstrap and the randomization tests
	Bootstrap  int     // bootstrap resamples; default 1,000
	Shuffles   int     // approximate randomization shuffles; default 9,999
	Confidence float64 // interval coverage; default 0.95
	Alpha      float64 // significance level before Bonferroni; default 0.05
	// Progress, when set, is told of every step: done of total steps, and
	// what is starting.
	Progress func(done, total int, message string)
}

// Result is an experiment's table.
type Result struct {
	Kind       string         `json:"kind"`
	Mode       evaluate.Mode  `json:"mode"` // always strict
	Seed       uint64         `json:"seed"`
	Bootstrap  int            `json:"bootstrap"`
	Shuffles   int            `json:"shuffles"`
	Confidence float64        `json:"confidence"`
	Rows       []Row          `json:"rows"`
	Tests      []Significance `json:"significance,omitempty"`
	Seconds    float64        `json:"seconds"`
}

// Row is one configuration's strict micro scores over its pooled test
// predictions, with bootstrap intervals over test documents.
type Row struct {
	Configuration string `json:"configuration"`
	Train         string `json:"train"`
	Test          string `json:"test"`
	Runs          int    `json:"runs"`
	// TrainDocuments is the number of training documents of a run (the
	// mean over folds in cross-validation); TestDocuments counts all runs'.
	TrainDocuments int               `json:"trainDocuments"`
	TestDocuments  int               `json:"testDocuments"`
	Counts         evaluate.Counts   `json:"counts"`
	Precision      float64           `json:"precision"`
	Recall         float64           `json:"recall"`
	F1             float64           `json:"f1"`
	PrecisionCI    evaluate.Interval `json:"precisionCI"`
	RecallCI       evaluate.Interval `json:"recallCI"`
	F1CI           evaluate.Interval `json:"f1CI"`
	Categories     []CategoryScore   `json:"categories,omitempty"`
	Seconds        float64           `json:"seconds"` // training and tagging time
}

// CategoryScore is one PHI category's strict micro scores in a row.
type CategoryScore struct {
	Category  string          `json:"category"`
	Counts    evaluate.Counts `json:"counts"`
	Precision float64         `json:"precision"`
	Recall    float64         `json:"recall"`
	F1        float64         `json:"f1"`
}

// Significance is the approximate-randomization comparison of two
// configurations tested on the same gold documents: over all tags and per
// category, Bonferroni-corrected across those tests (Deleger section 3.2.1).
// The headline fields repeat the "ALL" test.
type Significance struct {
	A           string                      `json:"a"`
	B           string                      `json:"b"`
	Documents   int                         `json:"documents"`
	F1A         float64                     `json:"f1A"`
	F1B         float64                     `json:"f1B"`
	Diff        float64                     `json:"diff"` // F1 of B minus F1 of A
	P           float64                     `json:"p"`
	Threshold   float64                     `json:"threshold"` // alpha over the number of tests
	Significant bool                        `json:"significant"`
	Tests       []evaluate.SignificanceTest `json:"tests"`
}

// outcome is a configuration's pooled gold and predictions.
type outcome struct {
	gold, pred []pipeline.Document
	train      int
	seconds    float64
}

// Run executes a plan: it trains each distinct training set once (runs
// sharing a Key share the model, which is dropped after its last use), tags
// each run's test documents with their spans removed, pools each
// configuration's predictions and scores them, then runs the plan's
// comparisons. Cancelling ctx stops it between steps and inside train and
// tag, which get ctx.
func Run(ctx context.Context, plan *Plan, train TrainFunc, opt Options) (*Result, error) {
	started := time.Now()
	if len(plan.Configurations) == 0 {
		return nil, errors.New("experiment: the plan has no configurations")
	}
	byName := map[string]int{}
	lastUse := map[string][2]int{}
	trainings := 0
	runs := 0
	for i, c := range plan.Configurations {
		if _, dup := byName[c.Name]; dup {
			return nil, fmt.Errorf("experiment: two configurations are named %q", c.Name)
		}
		if len(c.Runs) == 0 {
			return nil, fmt.Errorf("experiment: configuration %q has no runs", c.Name)
		}
		byName[c.Name] = i
		for j, r := range c.Runs {
			if _, seen := lastUse[r.Key]; !seen {
				trainings++
			}
			lastUse[r.Key] = [2]int{i, j}
			runs++
		}
	}
	for _, cmp := range plan.Comparisons {
		for _, n := range cmp {
			if _, ok := byName[n]; !ok {
				return nil, fmt.Errorf("experiment: comparison names unknown configuration %q", n)
			}
		}
	}
	total := trainings + runs + len(plan.Configurations) + len(plan.Comparisons)
	done := 0
	step := func(format string, args ...any) {
		if opt.Progress != nil {
			opt.Progress(done, total, fmt.Sprintf(format, args...))
		}
	}

	models := map[string]TagFunc{}
	outcomes := make([]outcome, len(plan.Configurations))
	for i, c := range plan.Configurations {
		out := &outcomes[i]
		t0 := time.Now()
		for j, r := range c.Runs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			tag, ok := models[r.Key]
			if !ok {
				if len(r.Train) == 0 {
					return nil, fmt.Errorf("experiment: %s: no training documents (%s)", c.Name, r.Key)
				}
				step("%s: training on %s (%d documents)", c.Name, r.Key, len(r.Train))
				var err error
				if tag, err = train(ctx, r.Train); err != nil {
					return nil, fmt.Errorf("experiment: %s: training on %s: %w", c.Name, r.Key, err)
				}
				models[r.Key] = tag
				done++
			}
			step("%s: tagging %d test documents (%s)", c.Name, len(r.Test), r.Key)
			pred, err := tag(ctx, Stripped(r.Test))
			if err != nil {
				return nil, fmt.Errorf("experiment: %s: tagging: %w", c.Name, err)
			}
			if err := sameDocuments(r.Test, pred); err != nil {
				return nil, fmt.Errorf("experiment: %s: %w", c.Name, err)
			}
			done++
			if lastUse[r.Key] == [2]int{i, j} {
				delete(models, r.Key)
			}
			out.gold = append(out.gold, r.Test...)
			out.pred = append(out.pred, pred...)
			out.train += len(r.Train)
		}
		out.train = (out.train + len(c.Runs)/2) / len(c.Runs)
		out.seconds = time.Since(t0).Seconds()
	}

	cmpOpt := evaluate.CompareOptions{Mode: evaluate.Strict, Shuffles: opt.Shuffles, Bootstrap: opt.Bootstrap,
		Seed: opt.Seed, Alpha: opt.Alpha, Confidence: opt.Confidence}
	res := &Result{Kind: plan.Kind, Mode: evaluate.Strict, Seed: opt.Seed}
	for i, c := range plan.Configurations {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		step("scoring %s", c.Name)
		row, err := score(c, outcomes[i], cmpOpt)
		if err != nil {
			return nil, fmt.Errorf("experiment: scoring %s: %w", c.Name, err)
		}
		res.Rows = append(res.Rows, row)
		done++
	}
	for _, pair := range plan.Comparisons {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		step("testing %s against %s", pair[1], pair[0])
		a, b := outcomes[byName[pair[0]]], outcomes[byName[pair[1]]]
		if !sameIDs(a.gold, b.gold) {
			return nil, fmt.Errorf("experiment: %s and %s are not tested on the same documents", pair[0], pair[1])
		}
		cmp, err := evaluate.Compare(a.gold, a.pred, b.pred, cmpOpt)
		if err != nil {
			return nil, fmt.Errorf("experiment: comparing %s and %s: %w", pair[0], pair[1], err)
		}
		s := Significance{A: pair[0], B: pair[1], Documents: cmp.Documents, Threshold: cmp.Threshold, Tests: cmp.Tests}
		if len(cmp.Tests) > 0 {
			all := cmp.Tests[0]
			s.F1A, s.F1B, s.Diff, s.P, s.Significant = all.F1A, all.F1B, all.Diff, all.P, all.Significant
		}
		res.Tests = append(res.Tests, s)
		res.Shuffles = cmp.Shuffles
		done++
	}
	if opt.Progress != nil {
		opt.Progress(done, total, "done")
	}
	res.Bootstrap, res.Confidence = cmpOpt.Bootstrap, cmpOpt.Confidence
	if res.Bootstrap <= 0 {
		res.Bootstrap = 1000
	}
	if res.Confidence <= 0 || res.Confidence >= 1 {
		res.Confidence = 0.95
	}
	res.Seconds = time.Since(started).Seconds()
	return res, nil
}

// score computes a configuration's row.
func score(c Configuration, out outcome, opt evaluate.CompareOptions) (Row, error) {
	row := Row{Configuration: c.Name, Train: c.Train, Test: c.Test, Runs: len(c.Runs),
		TrainDocuments: out.train, TestDocuments: len(out.gold), Seconds: out.seconds}
	pairs, _, _, err := evaluate.PairDocuments(out.gold, out.pred)
	if err != nil {
		return row, err
	}
	sc := evaluate.NewScorer(pairs, opt.PaperHIPAA)
	specs := []evaluate.Spec{{Label: "Strict", Mode: evaluate.Strict}}
	for _, cat := range sc.Categories() {
		specs = append(specs, evaluate.Spec{Label: cat + " Strict", Mode: evaluate.Strict, Category: cat})
	}
	ms, err := sc.Run(specs)
	if err != nil {
		return row, err
	}
	row.Counts = ms[0].Counts
	row.Precision, row.Recall, row.F1 = ms[0].MicroPrecision, ms[0].MicroRecall, ms[0].MicroF1
	for _, m := range ms[1:] {
		if m.Counts == (evaluate.Counts{}) {
			continue
		}
		row.Categories = append(row.Categories, CategoryScore{Category: m.Category, Counts: m.Counts,
			Precision: m.MicroPrecision, Recall: m.MicroRecall, F1: m.MicroF1})
	}
	// The intervals: a comparison of the predictions with themselves does no
	// shuffling work (no document differs) and bootstraps them.
	ci := opt
	ci.Shuffles = 1
	self, err := evaluate.Compare(out.gold, out.pred, out.pred, ci)
	if err != nil {
		return row, err
	}
	row.PrecisionCI, row.RecallCI, row.F1CI = self.A.Precision, self.A.Recall, self.A.F1
	return row, nil
}

// Stripped returns copies of documents without their spans, for tagging.
func Stripped(docs []pipeline.Document) []pipeline.Document {
	out := make([]pipeline.Document, len(docs))
	for i, d := range docs {
		d.Spans = nil
		out[i] = d
	}
	return out
}

// sameDocuments checks that a tagger returned one document for each it was given.
func sameDocuments(in, out []pipeline.Document) error {
	if len(in) != len(out) || !sameIDs(in, out) {
		return fmt.Errorf("the tagger returned %d documents for %d, or other ids", len(out), len(in))
	}
	return nil
}
