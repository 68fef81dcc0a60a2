package tagger

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/experiment"
	"deidcorpus/pipeline/formats"
)

// TestMeddocanCrossValidation is how the default configuration was chosen:
// patient-grouped k-fold cross-validation on MEDDOCAN train alone (dev is
// scored once, by TestMeddocanDevAccuracy, the test split never). It trains k
// models, so it runs only with DEIDCORPUS_LONG=1 (as every long test); DEIDCORPUS_CV_CONFIG is a
// JSON configuration over the defaults (as `train --config`), DEIDCORPUS_CV_K
// the number of folds (default 5), DEIDCORPUS_CV_RUNS how many of them to run
// (default all: fewer is a quicker screen), DEIDCORPUS_CV_CURVE recall biases ("0,0.4,1") to score each fold's model at
// as well (the recall-bias curve of cross-validation). It prints the pooled strict micro scores
// with 95% bootstrap intervals and the per-type table; DEIDCORPUS_CV_ERRORS names a file for the
// folds' errors in context, DEIDCORPUS_CV_PRED one for their predictions as JSONL (to compare two
// runs span by span).
func TestMeddocanCrossValidation(t *testing.T) {
	shared.Long(t, "cross-validate on MEDDOCAN train")
	cfg := DefaultConfig()
	if c := os.Getenv("DEIDCORPUS_CV_CONFIG"); c != "" {
		var err error
		if cfg, err = ReadConfig(strings.NewReader(c)); err != nil {
			t.Fatal(err)
		}
	}
	k := 5
	if s := os.Getenv("DEIDCORPUS_CV_K"); s != "" {
		var err error
		if k, err = strconv.Atoi(s); err != nil {
			t.Fatalf("DEIDCORPUS_CV_K: %v", err)
		}
	}
	train := readMeddocan(t, "train")
	plan, err := experiment.CrossValidation("MEDDOCAN train", train, k, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := os.Getenv("DEIDCORPUS_CV_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > k {
			t.Fatalf("DEIDCORPUS_CV_RUNS %q: want 1 to %d", s, k)
		}
		c := &plan.Configurations[0]
		c.Runs = c.Runs[:n]
	}
	var biases []float64
	if s := os.Getenv("DEIDCORPUS_CV_CURVE"); s != "" {
		for _, f := range strings.Split(s, ",") {
			b, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				t.Fatalf("DEIDCORPUS_CV_CURVE: %v", err)
			}
			biases = append(biases, b)
		}
	}
	var (
		mu         sync.Mutex
		gold, pred []pipeline.Document
		curve      = make([][]pipeline.Document, len(biases))
	)
	for _, r := range plan.Configurations[0].Runs {
		gold = append(gold, r.Test...)
	}
	fit := func(ctx context.Context, docs []pipeline.Document) (experiment.TagFunc, error) {
		m, err := Train(ctx, docs, cfg, nil)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, docs []pipeline.Document) ([]pipeline.Document, error) {
			out, err := m.Tag(ctx, docs, TagOptions{})
			if err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			pred = append(pred, out...)
			for i, b := range biases {
				biased, err := m.Tag(ctx, docs, TagOptions{RecallBias: map[string]float64{"*": b}})
				if err != nil {
					return nil, err
				}
				curve[i] = append(curve[i], biased...)
			}
			return out, nil
		}, nil
	}
	res, err := experiment.Run(context.Background(), plan, fit, experiment.Options{Seed: 1,
		Progress: func(done, total int, msg string) { t.Logf("%d/%d %s", done, total, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	t.Logf("%d-fold CV, strict micro: P %.4f [%.4f, %.4f] R %.4f [%.4f, %.4f] F1 %.4f [%.4f, %.4f] (%.0f s)",
		k, r.Precision, r.PrecisionCI.Low, r.PrecisionCI.High, r.Recall, r.RecallCI.Low, r.RecallCI.High,
		r.F1, r.F1CI.Low, r.F1CI.High, r.Seconds)
	t.Log(perType(t, gold, pred))
	for i, b := range biases {
		sc := strictF1(t, gold, curve[i])
		t.Logf("recall bias %g: P %.4f R %.4f F1 %.4f", b, sc.Precision, sc.Recall, sc.F1)
	}
	if path := os.Getenv("DEIDCORPUS_CV_PRED"); path != "" {
		files, err := formats.WriteJSONL(pred)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, files[0].Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if path := os.Getenv("DEIDCORPUS_CV_ERRORS"); path != "" {
		if err := os.WriteFile(path, []byte(spanErrors(gold, pred)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// spanErrors lists, per document, the gold spans the system missed (-) and
// the spans it found that gold lacks (+), with some context.
func spanErrors(gold, system []pipeline.Document) string {
	sys := map[string]pipeline.Document{}
	for _, d := range system {
		sys[d.ID] = d
	}
	type key struct {
		s, e int
		t    string
	}
	var b strings.Builder
	for _, g := range gold {
		runes := []rune(g.Text)
		ctx := func(s, e int) string {
			l, r := max(0, s-30), min(len(runes), e+30)
			return strings.ReplaceAll(string(runes[l:s])+"[["+string(runes[s:e])+"]]"+string(runes[e:r]), "\n", " ")
		}
		in := func(spans []pipeline.Span) map[key]bool {
			m := map[key]bool{}
			for _, s := range spans {
				m[key{s.Start, s.End, s.Type}] = true
			}
			return m
		}
		gs, ss := in(g.Spans), in(sys[g.ID].Spans)
		for _, s := range g.Spans {
			if !ss[key{s.Start, s.End, s.Type}] {
				fmt.Fprintf(&b, "- %s\t%s\t%s\n", g.ID, s.Type, ctx(s.Start, s.End))
			}
		}
		for _, s := range sys[g.ID].Spans {
			if !gs[key{s.Start, s.End, s.Type}] {
				fmt.Fprintf(&b, "+ %s\t%s\t%s\n", g.ID, s.Type, ctx(s.Start, s.End))
			}
		}
	}
	return b.String()
}

// perType is the strict per-type table of system against gold, biggest types
// first.
func perType(tb testing.TB, gold, system []pipeline.Document) string {
	tb.Helper()
	pairs, _, _, err := evaluate.PairDocuments(gold, system)
	if err != nil {
		tb.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range gold {
		for _, s := range d.Spans {
			seen[s.Type] = true
		}
	}
	var specs []evaluate.Spec
	for ty := range seen {
		specs = append(specs, evaluate.Spec{Label: ty, Mode: evaluate.Strict, Type: ty})
	}
	ms, err := evaluate.NewScorer(pairs, false).Run(specs)
	if err != nil {
		tb.Fatal(err)
	}
	sort.Slice(ms, func(i, j int) bool {
		gi, gj := ms[i].Counts.TP+ms[i].Counts.FN, ms[j].Counts.TP+ms[j].Counts.FN
		return gi > gj || gi == gj && ms[i].Label < ms[j].Label
	})
	var b strings.Builder
	b.WriteString("\n| type | gold | P | R | F1 |\n|---|---:|---:|---:|---:|\n")
	for _, m := range ms {
		c := m.Counts
		fmt.Fprintf(&b, "| %s | %d | %.4f | %.4f | %.4f |\n", m.Label, c.TP+c.FN, m.MicroPrecision, m.MicroRecall, m.MicroF1)
	}
	return b.String()
}
