package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/surrogate"
)

// Residual risk (SPEC section 10). When a tagger, not gold, drives
// resynthesis, the PHI it missed stays in the released text. With gold for
// the same notes the experiment counts those leaks, simulates the parrot
// attack of Carrell et al. 2019 (an attacker annotates every PHI-like string
// of half the release, trains a tagger on it, tags the other half and takes
// what it misses as leaks) and measures how well a classifier that knows some
// answers tells a leaked original from a surrogate.

// RiskInput is one resynthesized release and what it was made from, document
// for document: the gold annotation, the system annotation resynthesis
// replaced (same texts) and the released documents with the occurrences
// resynthesis propagated to.
type RiskInput struct {
	Gold, System, Released []pipeline.Document
	Propagated             []surrogate.Propagation
	// GoldReleased is the gold annotation resynthesized with the same
	// policy: a gold span it writes back as it was is a value the policy
	// keeps (Carried.Kept). Nil: the policy replaces every span.
	GoldReleased []pipeline.Document
}

// RiskOptions tune ResidualRisk.
type RiskOptions struct {
	Seed       uint64
	Bootstrap  int     // patient resamples; default 1,000
	Confidence float64 // interval coverage; default 0.95
	// CorpusDocuments is the size of the corpus the expected counts are
	// given for; default 1,000,000 notes.
	CorpusDocuments int
	Progress        func(done, total int, message string)
}

// RiskResult is a residual-risk experiment's figures, with how they were
// drawn.
type RiskResult struct {
	Kind       string  `json:"kind"` // residual-risk
	Seed       uint64  `json:"seed"`
	Bootstrap  int     `json:"bootstrap"`
	Confidence float64 `json:"confidence"`
	RiskFigures
	Seconds float64 `json:"seconds"`
}

// RiskFigures are what a residual-risk experiment measured. System and
// Released name the annotation set and the corpus (the job fills them in).
type RiskFigures struct {
	System             string             `json:"system"`
	Released           string             `json:"released"`
	Residual           Residual           `json:"residual"`
	Parrot             Parrot             `json:"parrot"`
	Distinguishability Distinguishability `json:"distinguishability"`
}

// Residual counts the gold spans that leaked: a letter or digit of theirs
// stands in the released text as it was.
type Residual struct {
	// GoldSpans are the gold spans whose values the policy replaces;
	// KeptByPolicy those it leaves as they are (no leak when missed).
	GoldSpans    int               `json:"goldSpans"`
	KeptByPolicy int               `json:"keptByPolicy"`
	Leaked       int               `json:"leaked"`
	Partial      int               `json:"partial"` // leaked spans of which part was replaced
	LeakRate     float64           `json:"leakRate"`
	LeakCI       evaluate.Interval `json:"leakRateCI"`
	Documents    int               `json:"documents"`
	Patients     int               `json:"patients"`
	// DocumentsWithLeak have a leaked span at least.
	DocumentsWithLeak int               `json:"documentsWithLeak"`
	DocumentLeakRate  float64           `json:"documentLeakRate"`
	DocumentCI        evaluate.Interval `json:"documentLeakRateCI"`
	LeaksPerDocument  float64           `json:"leaksPerDocument"`
	// DocumentsWithDirectLeak have a leaked direct identifier at least (a
	// name, id, contact, street or date: DirectIdentifier).
	DocumentsWithDirectLeak int               `json:"documentsWithDirectLeak"`
	DirectLeakRate          float64           `json:"directLeakRate"`
	DirectCI                evaluate.Interval `json:"directLeakRateCI"`
	// SystemSpans are the spans resynthesis replaced; SpanPrecision the
	// share of them that touch a gold span (merged precision: a false
	// alarm only puts a surrogate where a word was). CharRecall is the
	// share of the gold spans' letters and digits inside a system span.
	SystemSpans   int     `json:"systemSpans"`
	SpanPrecision float64 `json:"spanPrecision"`
	CharRecall    float64 `json:"charRecall"`
	// Expected is what a corpus of CorpusDocuments such notes would leak.
	Expected   Expected    `json:"expected"`
	ByType     []LeakCount `json:"byType"`
	ByCategory []LeakCount `json:"byCategory"`
}

// Expected scales the leaks to a corpus of a given size.
type Expected struct {
	Documents           int               `json:"documents"`
	Leaks               float64           `json:"leaks"`
	LeaksCI             evaluate.Interval `json:"leaksCI"`
	DocumentsWithLeak   float64           `json:"documentsWithLeak"`
	DocumentsWithLeakCI evaluate.Interval `json:"documentsWithLeakCI"`
}

// LeakCount is one type's or category's gold spans and leaks.
type LeakCount struct {
	Label    string  `json:"label"`
	Category string  `json:"category,omitempty"`
	Gold     int     `json:"gold"`
	Leaked   int     `json:"leaked"`
	Rate     float64 `json:"rate"`
}

// Parrot is the simulated parrot attack: its hypothesized leaks (PHI-like
// strings its tagger did not tag) against the true leaks.
type Parrot struct {
	Leaks         int           `json:"leaks"`
	Hypothesized  int           `json:"hypothesized"`
	TruePositives int           `json:"truePositives"`
	Recall        float64       `json:"recall"`
	Precision     float64       `json:"precision"`
	ByType        []ParrotCount `json:"byType"`
}

// ParrotCount is the parrot attack's figures for one type.
type ParrotCount struct {
	Type          string  `json:"type"`
	Strings       int     `json:"strings"`
	Leaks         int     `json:"leaks"`
	Hypothesized  int     `json:"hypothesized"`
	TruePositives int     `json:"truePositives"`
	Recall        float64 `json:"recall"`
	Precision     float64 `json:"precision"`
}

// TagHeldOut tags every document with a model that never saw its patient:
// k patient-grouped folds, each tagged by a model trained on the others. The
// result is in input order, spans the predictions.
func TagHeldOut(ctx context.Context, docs []pipeline.Document, k int, seed uint64, train TrainFunc, progress func(done, total int, msg string)) ([]pipeline.Document, error) {
	assign, err := AssignFolds(docs, k, seed)
	if err != nil {
		return nil, err
	}
	out := make([]pipeline.Document, len(docs))
	for f := range k {
		var tr, te []pipeline.Document
		var at []int
		for i, d := range docs {
			if assign[i] == f {
				te, at = append(te, d), append(at, i)
			} else {
				tr = append(tr, d)
			}
		}
		if progress != nil {
			progress(f, k, fmt.Sprintf("fold %d of %d: training on %d documents, tagging %d", f+1, k, len(tr), len(te)))
		}
		tag, err := train(ctx, tr)
		if err != nil {
			return nil, fmt.Errorf("experiment: fold %d: training: %w", f+1, err)
		}
		pred, err := tag(ctx, Stripped(te))
		if err != nil {
			return nil, fmt.Errorf("experiment: fold %d: tagging: %w", f+1, err)
		}
		if err := sameDocuments(te, pred); err != nil {
			return nil, fmt.Errorf("experiment: fold %d: %w", f+1, err)
		}
		for j, i := range at {
			out[i] = pred[j]
		}
	}
	return out, nil
}

// ResidualRisk measures a release: the residual PHI, the parrot attack (its
// tagger trained with train on half the patients' released text, tagging the
// other half, and the other way round) and distinguishability.
func ResidualRisk(ctx context.Context, in RiskInput, train TrainFunc, opt RiskOptions) (*RiskResult, error) {
	started := time.Now()
	if len(in.Gold) == 0 {
		return nil, errors.New("experiment: residual risk needs gold documents")
	}
	if len(in.System) != len(in.Gold) || len(in.Released) != len(in.Gold) || in.GoldReleased != nil && len(in.GoldReleased) != len(in.Gold) {
		return nil, fmt.Errorf("experiment: %d gold, %d system and %d released documents: want one of each per note", len(in.Gold), len(in.System), len(in.Released))
	}
	opt.Bootstrap = cmp.Or(opt.Bootstrap, 1000)
	if opt.Confidence <= 0 || opt.Confidence >= 1 {
		opt.Confidence = 0.95
	}
	opt.CorpusDocuments = cmp.Or(opt.CorpusDocuments, 1_000_000)
	step := func(done int, msg string) {
		if opt.Progress != nil {
			opt.Progress(done, 4, msg)
		}
	}
	step(0, "carrying the gold spans into the released text")
	props := map[string][]surrogate.Propagation{}
	for _, p := range in.Propagated {
		props[p.Doc] = append(props[p.Doc], p)
	}
	carried := make([][]Carried, len(in.Gold))
	for i, g := range in.Gold {
		if in.System[i].ID != g.ID {
			return nil, fmt.Errorf("experiment: system document %d is %s, not %s", i, in.System[i].ID, g.ID)
		}
		c, err := CarryGold(g, in.System[i], in.Released[i], props[in.Released[i].ID])
		if err != nil {
			return nil, err
		}
		if in.GoldReleased != nil {
			if err := markKept(c, g, in.GoldReleased[i]); err != nil {
				return nil, err
			}
		}
		carried[i] = c
	}
	res := &RiskResult{Kind: "residual-risk", Seed: opt.Seed, Bootstrap: opt.Bootstrap, Confidence: opt.Confidence}
	res.Residual = residual(in.Gold, carried, opt)
	res.Residual.systemFigures(in.Gold, in.System)
	step(1, "parrot attack: training on half the patients' released text")
	var err error
	if res.Parrot, err = parrot(ctx, in.Released, carried, train, opt.Seed); err != nil {
		return nil, err
	}
	step(3, "distinguishability: classifying leaked originals against surrogates")
	if res.Distinguishability, err = distinguish(ctx, in.Released, carried, opt.Seed); err != nil {
		return nil, err
	}
	step(4, "done")
	res.Seconds = time.Since(started).Seconds()
	return res, nil
}

// markKept marks the carried spans whose value the policy keeps: gold's
// own resynthesis wrote them back unchanged.
func markKept(carried []Carried, gold, goldReleased pipeline.Document) error {
	if len(goldReleased.Spans) != len(gold.Spans) {
		return fmt.Errorf("experiment: document %s: %d gold spans but %d in its resynthesis", gold.ID, len(gold.Spans), len(goldReleased.Spans))
	}
	for j := range carried {
		if goldReleased.Spans[j].Text == carried[j].Original {
			carried[j].Kept = true
			carried[j].Leaked, carried[j].Partial = false, false
		}
	}
	return nil
}

// residual counts the leaks, with patient-bootstrap intervals.
func residual(gold []pipeline.Document, carried [][]Carried, opt RiskOptions) Residual {
	r := Residual{Documents: len(gold)}
	byType, byCat := map[string]*LeakCount{}, map[string]*LeakCount{}
	perDoc := make([][3]int, len(gold)) // gold spans, leaks, direct leaks
	for i, cs := range carried {
		for _, c := range cs {
			if c.Kept {
				r.KeptByPolicy++
				continue
			}
			t := byType[c.Type]
			if t == nil {
				t = &LeakCount{Label: c.Type, Category: c.Category}
				byType[c.Type] = t
			}
			k := byCat[c.Category]
			if k == nil {
				k = &LeakCount{Label: c.Category}
				byCat[c.Category] = k
			}
			t.Gold++
			k.Gold++
			perDoc[i][0]++
			if c.Leaked {
				t.Leaked++
				k.Leaked++
				perDoc[i][1]++
				if DirectIdentifier(c.Category, c.Type) {
					perDoc[i][2]++
				}
				if c.Partial {
					r.Partial++
				}
			}
		}
		r.GoldSpans += perDoc[i][0]
		r.Leaked += perDoc[i][1]
		if perDoc[i][1] > 0 {
			r.DocumentsWithLeak++
		}
		if perDoc[i][2] > 0 {
			r.DocumentsWithDirectLeak++
		}
	}
	r.ByType, r.ByCategory = sortedCounts(byType), sortedCounts(byCat)
	r.LeakRate = ratio(r.Leaked, r.GoldSpans)
	r.DocumentLeakRate = ratio(r.DocumentsWithLeak, r.Documents)
	r.DirectLeakRate = ratio(r.DocumentsWithDirectLeak, r.Documents)
	r.LeaksPerDocument = float64(r.Leaked) / float64(r.Documents)
	groups := groupByPatient(gold)
	r.Patients = len(groups)

	// Percentile bootstrap over patients: a patient's notes share names and
	// places, so they are resampled together.
	rng := rand.New(rand.NewPCG(opt.Seed, 0x3c6ef372fe94f82b))
	var rates, docRates, directRates, perDocs []float64
	for range opt.Bootstrap {
		var spans, leaks, docs, withLeak, withDirect int
		for range groups {
			g := groups[rng.IntN(len(groups))]
			for _, d := range g.docs {
				spans += perDoc[d][0]
				leaks += perDoc[d][1]
				docs++
				if perDoc[d][1] > 0 {
					withLeak++
				}
				if perDoc[d][2] > 0 {
					withDirect++
				}
			}
		}
		directRates = append(directRates, ratio(withDirect, docs))
		rates = append(rates, ratio(leaks, spans))
		docRates = append(docRates, ratio(withLeak, docs))
		perDocs = append(perDocs, ratio(leaks, docs))
	}
	r.LeakCI = percentiles(rates, opt.Confidence)
	r.DocumentCI = percentiles(docRates, opt.Confidence)
	r.DirectCI = percentiles(directRates, opt.Confidence)
	n := float64(opt.CorpusDocuments)
	pd := percentiles(perDocs, opt.Confidence)
	r.Expected = Expected{Documents: opt.CorpusDocuments, Leaks: n * r.LeaksPerDocument,
		LeaksCI:           evaluate.Interval{Low: n * pd.Low, High: n * pd.High},
		DocumentsWithLeak: n * r.DocumentLeakRate, DocumentsWithLeakCI: evaluate.Interval{Low: n * r.DocumentCI.Low, High: n * r.DocumentCI.High}}
	return r
}

func sortedCounts(m map[string]*LeakCount) []LeakCount {
	out := make([]LeakCount, 0, len(m))
	for _, c := range m {
		c.Rate = ratio(c.Leaked, c.Gold)
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b LeakCount) int { return cmp.Or(cmp.Compare(b.Gold, a.Gold), cmp.Compare(a.Label, b.Label)) })
	return out
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// percentiles is the central interval of the given coverage of xs.
func percentiles(xs []float64, confidence float64) evaluate.Interval {
	if len(xs) == 0 {
		return evaluate.Interval{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(q * float64(len(s)-1))
		return s[min(max(i, 0), len(s)-1)]
	}
	tail := (1 - confidence) / 2
	return evaluate.Interval{Low: at(tail), High: at(1 - tail)}
}

// parrot simulates the parrot attack. The attacker's annotation of a
// released document is every carried gold span (surrogates and leaks alike,
// by their gold type); half the patients' documents train a tagger that tags
// the other half, and the other way round, so every string is attacked once.
// A string no predicted span overlaps is a hypothesized leak.
func parrot(ctx context.Context, released []pipeline.Document, carried [][]Carried, train TrainFunc, seed uint64) (Parrot, error) {
	attacked := make([]pipeline.Document, len(released))
	for i, d := range released {
		d.Spans = make([]pipeline.Span, len(carried[i]))
		for j, c := range carried[i] {
			d.Spans[j] = c.Span
		}
		d.SortSpans()
		attacked[i] = d
	}
	assign, err := AssignFolds(attacked, 2, seed^0x9e3779b97f4a7c15)
	if err != nil {
		return Parrot{}, fmt.Errorf("experiment: parrot attack: %w", err)
	}
	tagged := make([]pipeline.Document, len(attacked))
	for half := range 2 {
		var tr, te []pipeline.Document
		var at []int
		for i, d := range attacked {
			if assign[i] == half {
				te, at = append(te, d), append(at, i)
			} else {
				tr = append(tr, d)
			}
		}
		tag, err := train(ctx, tr)
		if err != nil {
			return Parrot{}, fmt.Errorf("experiment: parrot attack: training: %w", err)
		}
		pred, err := tag(ctx, Stripped(te))
		if err != nil {
			return Parrot{}, fmt.Errorf("experiment: parrot attack: tagging: %w", err)
		}
		if err := sameDocuments(te, pred); err != nil {
			return Parrot{}, fmt.Errorf("experiment: parrot attack: %w", err)
		}
		for j, i := range at {
			tagged[i] = pred[j]
		}
	}
	var p Parrot
	byType := map[string]*ParrotCount{}
	for i, cs := range carried {
		for _, c := range cs {
			t := byType[c.Type]
			if t == nil {
				t = &ParrotCount{Type: c.Type}
				byType[c.Type] = t
			}
			t.Strings++
			missed := !overlapsAny(tagged[i].Spans, c.Start, c.End)
			if c.Leaked {
				p.Leaks++
				t.Leaks++
			}
			if missed {
				p.Hypothesized++
				t.Hypothesized++
				if c.Leaked {
					p.TruePositives++
					t.TruePositives++
				}
			}
		}
	}
	p.Recall, p.Precision = ratio(p.TruePositives, p.Leaks), ratio(p.TruePositives, p.Hypothesized)
	for _, t := range byType {
		t.Recall, t.Precision = ratio(t.TruePositives, t.Leaks), ratio(t.TruePositives, t.Hypothesized)
		p.ByType = append(p.ByType, *t)
	}
	slices.SortFunc(p.ByType, func(a, b ParrotCount) int {
		return cmp.Or(cmp.Compare(b.Strings, a.Strings), cmp.Compare(a.Type, b.Type))
	})
	return p, nil
}

func overlapsAny(spans []pipeline.Span, start, end int) bool {
	for _, s := range spans {
		if s.Start < end && start < s.End {
			return true
		}
	}
	return false
}
