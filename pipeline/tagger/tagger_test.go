package tagger

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
)

// strictF1 scores system against gold with the project's evaluator (MEDDOCAN
// subtask 1: span and type exact, micro).
func strictF1(tb testing.TB, gold, system []pipeline.Document) evaluate.Score {
	tb.Helper()
	pairs, _, _, err := evaluate.PairDocuments(gold, system)
	if err != nil {
		tb.Fatal(err)
	}
	return evaluate.Meddocan(pairs).Subtask1
}

// smallConfig trains quickly for the normal test run.
func smallConfig() Config {
	cfg := DefaultConfig()
	cfg.Training.MaxIterations = 30
	return cfg
}

// A small model trained on a slice of MEDDOCAN train must already tag dev
// sensibly.
func TestTrainOnASliceTagsDev(t *testing.T) {
	shared.NotUnderRace(t, "single-threaded tests")
	train := readMeddocan(t, "train")[:60]
	dev := readMeddocan(t, "dev")[:30]
	m, err := Train(context.Background(), train, smallConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Tag(context.Background(), dev, TagOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if err := out[i].Validate(false); err != nil {
			t.Fatalf("%s: %v", out[i].ID, err)
		}
		if out[i].Text != dev[i].Text || len(dev[i].Spans) == 0 {
			t.Fatalf("%s: input changed or output misaligned", out[i].ID)
		}
	}
	s := strictF1(t, dev, out)
	t.Logf("60 train docs, 30 dev docs: strict P %.4f R %.4f F1 %.4f", s.Precision, s.Recall, s.F1)
	if s.F1 < 0.85 {
		t.Errorf("strict F1 %.4f on a slice, want >= 0.85", s.F1)
	}
}

// Same data and options give the same model, and the artifact round-trips.
func TestTrainingIsDeterministicAndArtifactRoundTrips(t *testing.T) {
	docs := readMeddocan(t, "train")[:15]
	cfg := DefaultConfig()
	cfg.Training.MaxIterations = 10
	a, err := Train(context.Background(), docs, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Train(context.Background(), docs, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() != b.Hash() {
		t.Fatalf("two trainings hash %s and %s", a.Hash(), b.Hash())
	}
	if a.Meta.Iterations != 10 {
		t.Errorf("max_iterations 10 took %d L-BFGS steps, want 10 (the starting point is not a step)", a.Meta.Iterations)
	}
	var buf bytes.Buffer
	if err := a.Save(&buf); err != nil {
		t.Fatal(err)
	}
	saved := buf.Bytes()
	c, err := Load(bytes.NewReader(saved))
	if err != nil {
		t.Fatal(err)
	}
	if c.Hash() != a.Hash() || c.Meta != a.Meta {
		t.Fatalf("loaded model: hash %s meta %+v, want %s %+v", c.Hash(), c.Meta, a.Hash(), a.Meta)
	}
	dev := readMeddocan(t, "dev")[:5]
	x, _ := a.Tag(context.Background(), dev, TagOptions{})
	y, _ := c.Tag(context.Background(), dev, TagOptions{Workers: 1})
	for i := range x {
		if len(x[i].Spans) != len(y[i].Spans) {
			t.Fatalf("%s: %d spans before saving, %d after", x[i].ID, len(x[i].Spans), len(y[i].Spans))
		}
		for k := range x[i].Spans {
			if x[i].Spans[k] != y[i].Spans[k] {
				t.Fatalf("%s: span %d differs after loading", x[i].ID, k)
			}
		}
	}
	// Corruption is detected.
	bad := append([]byte(nil), saved...)
	bad[len(bad)-3] ^= 1
	if _, err := Load(bytes.NewReader(bad)); err == nil {
		t.Error("corrupt artifact loaded")
	}
	if _, err := Load(strings.NewReader("not a model")); err == nil {
		t.Error("garbage loaded")
	}
	// Changing an option changes the identity.
	cfg.Training.L2 *= 2
	d, err := Train(context.Background(), docs, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Hash() == a.Hash() {
		t.Error("different options, same hash")
	}
}

func TestTrainHonoursCancellation(t *testing.T) {
	docs := readMeddocan(t, "train")[:10]
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Train(ctx, docs, DefaultConfig(), func(p Progress) {
		if p.Stage == "train" {
			cancel()
		}
	})
	if err == nil || ctx.Err() == nil {
		t.Fatalf("training went on after cancel: %v", err)
	}
}

func TestReadConfig(t *testing.T) {
	cfg, err := ReadConfig(strings.NewReader(`{"training": {"l2": 0.5}, "recall_bias": {"*": 0.3}}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Training.L2 != 0.5 || cfg.Training.MaxIterations != DefaultTraining().MaxIterations || cfg.RecallBias["*"] != 0.3 {
		t.Errorf("config %+v", cfg)
	}
	for _, bad := range []string{`{"training": {"l2": -1}}`, `{"featurez": {}}`, `{"features": {"lexicon": "nope"}}`,
		`{"training": {"margin": -0.5}}`, `{"training": {"missed_margin": 1e9}}`} {
		if _, err := ReadConfig(strings.NewReader(bad)); !errors.Is(err, ErrConfig) {
			t.Errorf("config %s: error %v, want ErrConfig", bad, err)
		}
	}
	// Errors say where, in the file's words.
	for bad, want := range map[string]string{
		`{"training": {"iterations": 20}}`:       "training.iterations: unknown field",
		`{"training": {"max_iterations": "20"}}`: "training.max_iterations: want a whole number, not a string",
		`{"recall_bias": 0.4}`:                   `recall_bias: want an object, not the number 0.4 (a bias per type, "*" for every other: {"*": 0.4})`,
		"{\n\"training\": {,}}":                  "line 2, column 14",
	} {
		if _, err := ReadConfig(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %s: error %v, want %q", bad, err, want)
		}
	}
}

// The recall bias trades precision for recall: a large positive bias finds
// at least as many spans.
func TestRecallBiasRaisesRecall(t *testing.T) {
	shared.NotUnderRace(t, "single-threaded tests")
	docs := readMeddocan(t, "train")[:20]
	cfg := DefaultConfig()
	cfg.Training.MaxIterations = 15
	m, err := Train(context.Background(), docs, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	dev := readMeddocan(t, "dev")[:20]
	count := func(bias map[string]float64) int {
		out, err := m.Tag(context.Background(), dev, TagOptions{RecallBias: bias, NoPostProcess: true})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range out {
			for _, s := range d.Spans {
				n += len([]rune(s.Text))
			}
		}
		return n
	}
	base, biased := count(nil), count(map[string]float64{"*": 3})
	if biased <= base {
		t.Errorf("bias 3 marks %d characters, no bias %d", biased, base)
	}
}

func TestWriteCRFsuite(t *testing.T) {
	docs := []pipeline.Document{
		{ID: "a", Text: "Nombre: Ernesto.\nEdad: 70 años", Spans: []pipeline.Span{
			{Start: 8, End: 15, Category: "NAME", Type: "NOMBRE_SUJETO_ASISTENCIA"},
			{Start: 23, End: 30, Category: "AGE", Type: "EDAD_SUJETO_ASISTENCIA"},
		}},
		{ID: "b", Text: "Sin datos."},
	}
	var buf bytes.Buffer
	if err := WriteCRFsuite(context.Background(), &buf, docs, DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	var labels []string
	blank := 0
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			blank++
			continue
		}
		fields := strings.Split(line, "\t")
		labels = append(labels, fields[0])
		for _, f := range fields[1:] {
			if strings.Contains(strings.ReplaceAll(f, `\:`, ""), ":") {
				t.Errorf("unescaped ':' in attribute %q", f)
			}
		}
		if fields[1] != "bias" {
			t.Errorf("first attribute %q", fields[1])
		}
	}
	want := "O O B-NAME/NOMBRE_SUJETO_ASISTENCIA O O O B-AGE/EDAD_SUJETO_ASISTENCIA I-AGE/EDAD_SUJETO_ASISTENCIA O O O"
	if got := strings.Join(labels, " "); got != want {
		t.Errorf("labels\n%s\nwant\n%s", got, want)
	}
	if blank != 2 {
		t.Errorf("%d blank lines, want one per document", blank)
	}
}

// TestMeddocanDevAccuracy is the accuracy bar: trained on all of MEDDOCAN
// train, strict micro F1 on dev >= 0.965. It takes minutes, so it runs only
// with DEIDCORPUS_LONG=1.
func TestMeddocanDevAccuracy(t *testing.T) {
	shared.Long(t, "train on MEDDOCAN train and score dev")
	train := readMeddocan(t, "train")
	dev := readMeddocan(t, "dev")
	start := time.Now()
	m, err := Train(context.Background(), train, DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trained in %s: %d iterations, %d attributes, %d features, hash %s",
		time.Since(start).Round(time.Second), m.Meta.Iterations, m.Meta.Attributes, m.Meta.Features, m.Hash())
	var withPost evaluate.Score
	for _, post := range []bool{false, true} {
		out, err := m.Tag(context.Background(), dev, TagOptions{NoPostProcess: !post})
		if err != nil {
			t.Fatal(err)
		}
		pairs, _, _, err := evaluate.PairDocuments(dev, out)
		if err != nil {
			t.Fatal(err)
		}
		s := evaluate.Meddocan(pairs).Subtask1
		t.Logf("post-processing %v: strict micro P %.4f R %.4f F1 %.4f", post, s.Precision, s.Recall, s.F1)
		var specs []evaluate.Spec
		for _, ty := range m.Types {
			specs = append(specs, evaluate.Spec{Label: ty.Type, Mode: evaluate.Strict, Type: ty.Type})
		}
		ms, err := evaluate.NewScorer(pairs, false).Run(specs)
		if err != nil {
			t.Fatal(err)
		}
		for _, me := range ms {
			c := me.Counts
			t.Logf("  %-34s gold %4d  P %.4f R %.4f F1 %.4f", me.Label, c.TP+c.FN, me.MicroPrecision, me.MicroRecall, me.MicroF1)
		}
		withPost = s
	}
	// The recall-bias curve on dev, for the README (the default bias was
	// chosen by cross-validation on train, TestMeddocanCrossValidation).
	for _, b := range []float64{-1, 0, 0.4, 0.8, 1.2, 2, 4} {
		out, err := m.Tag(context.Background(), dev, TagOptions{RecallBias: map[string]float64{"*": b}})
		if err != nil {
			t.Fatal(err)
		}
		s := strictF1(t, dev, out)
		t.Logf("recall bias %4g: strict micro P %.4f R %.4f F1 %.4f", b, s.Precision, s.Recall, s.F1)
	}
	if withPost.F1 < 0.965 {
		t.Errorf("strict micro F1 on dev %.4f, want >= 0.965", withPost.F1)
	}
}

// BenchmarkTag measures tagging end to end (tokenizing, features, Viterbi,
// rules and post-processing) on MEDDOCAN dev with one worker, in tokens per
// second per core. The model is DEIDCORPUS_MODEL (a saved artifact, e.g. the
// full MEDDOCAN model) or else one trained on 100 documents.
func BenchmarkTag(b *testing.B) {
	dev, tokens := benchDev(b)
	m := benchModel(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Tag(context.Background(), dev, TagOptions{Workers: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tokens*b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkUncertainty measures scoring documents for the annotation queue
// (tokenizing, features, forward-backward, token entropy) on MEDDOCAN dev
// with one worker, in tokens per second per core; the model as BenchmarkTag's.
func BenchmarkUncertainty(b *testing.B) {
	dev, tokens := benchDev(b)
	m := benchModel(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Uncertainty(context.Background(), dev, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tokens*b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// benchDev reads MEDDOCAN dev and counts its tokens.
func benchDev(b *testing.B) ([]pipeline.Document, int) {
	dev := readMeddocan(b, "dev")
	tokens := 0
	for _, d := range dev {
		tokens += len(Tokenize(d.Text).Tokens)
	}
	return dev, tokens
}

// benchModel is DEIDCORPUS_MODEL or else a model trained on 100 MEDDOCAN
// train documents.
func benchModel(b *testing.B) *Model {
	if path := os.Getenv("DEIDCORPUS_MODEL"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		m, err := Load(f)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	cfg := DefaultConfig()
	cfg.Training.MaxIterations = 30
	m, err := Train(context.Background(), readMeddocan(b, "train")[:100], cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkTrainMeddocan trains the default model on all of MEDDOCAN train
// (minutes; run with -benchtime=1x and DEIDCORPUS_LONG=1). With
// DEIDCORPUS_MODEL_OUT set it saves the model there, for BenchmarkTag.
func BenchmarkTrainMeddocan(b *testing.B) {
	shared.Long(b, "train on all of MEDDOCAN train")
	train := readMeddocan(b, "train")
	for b.Loop() {
		m, err := Train(context.Background(), train, DefaultConfig(), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(m.Meta.Iterations), "iterations")
		if path := os.Getenv("DEIDCORPUS_MODEL_OUT"); path != "" {
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := errors.Join(m.Save(f), f.Close()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// Degenerate inputs: empty documents and a corpus without any span.
func TestEmptyDocumentsAndNoSpans(t *testing.T) {
	docs := []pipeline.Document{{ID: "a", Text: ""}, {ID: "b", Text: "Sin datos personales.\n"}}
	cfg := DefaultConfig()
	cfg.Training.MaxIterations = 5
	m, err := Train(context.Background(), docs, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Tag(context.Background(), append(docs, pipeline.Document{ID: "c", Text: "Paciente de 70 años."}), TagOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range out {
		if len(d.Spans) != 0 {
			t.Errorf("%s: spans %v from a model without labels", d.ID, d.Spans)
		}
	}
	if _, err := Train(context.Background(), nil, cfg, nil); !errors.Is(err, ErrInput) {
		t.Error("training on nothing succeeded")
	}
}

// Pruning keeps exactly the attributes with a weight of at least
// PruneBelow in magnitude, with their features' weights and the
// transitions unchanged, and what is dropped changes no decision here.
func TestPruneBelowDropsOnlyNegligibleAttributes(t *testing.T) {
	shared.NotUnderRace(t, "single-threaded tests")
	docs := readMeddocan(t, "train")[:15]
	cfg := DefaultConfig()
	cfg.Training.MaxIterations = 20
	cfg.Training.PruneBelow = 0
	full, err := Train(context.Background(), docs, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	const eps = 1e-2
	cfg.Training.PruneBelow = eps
	pruned, err := Train(context.Background(), docs, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	weights := func(m *Model) map[string][]float64 {
		out := map[string][]float64{}
		for a, name := range m.attrs {
			out[name] = m.crf.w[m.crf.attrStart[a]:m.crf.attrStart[a+1]]
		}
		return out
	}
	kept, all := weights(pruned), weights(full)
	for name, w := range all {
		large := slices.ContainsFunc(w, func(v float64) bool { return math.Abs(v) >= eps })
		if got, ok := kept[name]; ok != large || ok && !slices.Equal(got, w) {
			t.Fatalf("attribute %q, weights %v: kept %v (%v), want kept %v", name, w, ok, got, large)
		}
	}
	if len(kept) == len(all) || len(kept) == 0 {
		t.Fatalf("%d of %d attributes kept: the test needs some of each", len(kept), len(all))
	}
	if !slices.Equal(pruned.crf.w[pruned.crf.nState():], full.crf.w[full.crf.nState():]) {
		t.Error("transition weights changed")
	}
	if pruned.Meta.Attributes != len(kept) || pruned.Meta.Features != len(pruned.crf.w) {
		t.Errorf("meta %+v for %d attributes and %d weights", pruned.Meta, len(kept), len(pruned.crf.w))
	}
	dev := readMeddocan(t, "dev")[:20]
	x, _ := full.Tag(context.Background(), dev, TagOptions{})
	y, _ := pruned.Tag(context.Background(), dev, TagOptions{})
	for i := range x {
		if !slices.Equal(x[i].Spans, y[i].Spans) {
			t.Errorf("%s: spans %v unpruned, %v pruned", x[i].ID, x[i].Spans, y[i].Spans)
		}
	}
}
