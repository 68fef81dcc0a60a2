package calibrate

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/experiment"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/tagger"
)

func readMeddocan(tb testing.TB, split string) []pipeline.Document {
	tb.Helper()
	files, err := formats.ReadPaths(shared.Path(tb, "meddocan/corpus/"+split+"/xml"))
	if err != nil {
		tb.Fatal(err)
	}
	f, err := formats.Lookup("i2b2")
	if err != nil {
		tb.Fatal(err)
	}
	docs, err := f.Read(files, formats.ReadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return docs
}

func envInt(tb testing.TB, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return n
}

func printLeaks(tb testing.TB, label string, r experiment.Residual) {
	tb.Logf("%s: char recall %.4f, span precision %.4f (%d spans); values leaked %d of %d (%.1f per 1,000); notes with a leak %.1f%% [%.1f, %.1f], with a direct identifier %.1f%% [%.1f, %.1f]",
		label, r.CharRecall, r.SpanPrecision, r.SystemSpans, r.Leaked, r.GoldSpans, 1000*r.LeakRate,
		100*r.DocumentLeakRate, 100*r.DocumentCI.Low, 100*r.DocumentCI.High, 100*r.DirectLeakRate, 100*r.DirectCI.Low, 100*r.DirectCI.High)
	line := "  leaked by type:"
	for _, t := range r.ByType {
		if t.Leaked > 0 {
			line += fmt.Sprintf(" %s %d/%d", t.Label, t.Leaked, t.Gold)
		}
	}
	tb.Log(line)
}

// TestMeddocanCalibration measures the privacy point on MEDDOCAN train: a
// calibration of DEIDCORPUS_CAL_FOLDS (default 5) patient folds of models
// trained with DEIDCORPUS_CAL_ITER steps (default 150, the full model's),
// threshold and risk on the same held-out tags. Minutes: DEIDCORPUS_LONG=1.
func TestMeddocanCalibration(t *testing.T) {
	shared.Long(t, "calibrate on MEDDOCAN train")
	train := readMeddocan(t, "train")
	started := time.Now()
	res, err := Run(context.Background(), train, tagger.DefaultConfig(), Options{
		Folds: envInt(t, "DEIDCORPUS_CAL_FOLDS", 5), Iterations: envInt(t, "DEIDCORPUS_CAL_ITER", 150),
		Nets: tagger.DefaultNets(), Seed: 1,
		Progress: func(done, total int, msg string) { t.Logf("%s (%s)", msg, time.Since(started).Round(time.Second)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	report(t, res)
}

func report(t *testing.T, res *Result) {
	c := res.Calibration
	for _, p := range c.Curve {
		t.Logf("threshold %g: char recall %.4f, span precision %.4f", p.Threshold, p.CharRecall, p.SpanPrecision)
	}
	t.Logf("chosen threshold %g for target %g; nets added %+v; %.0f s", c.Threshold, c.TargetRecall, res.Nets, c.Seconds)
	printLeaks(t, "held-out balanced", res.Leaks[tagger.Balanced])
	printLeaks(t, "held-out privacy", res.Leaks[tagger.Privacy])
}

// TestMeddocanDevPrivacy trains the default model on MEDDOCAN train with
// its default calibration, tags dev at both points, and measures the
// release's leaks on dev, what each safety net buys, and tagging time.
// Minutes: DEIDCORPUS_LONG=1.
func TestMeddocanDevPrivacy(t *testing.T) {
	shared.Long(t, "train and calibrate on MEDDOCAN train, measure on dev")
	ctx := context.Background()
	train, dev := readMeddocan(t, "train"), readMeddocan(t, "dev")
	started := time.Now()
	cfg := tagger.DefaultConfig()
	cfg.Training.MaxIterations = envInt(t, "DEIDCORPUS_TRAIN_ITER", cfg.Training.MaxIterations)
	m, err := tagger.Train(ctx, train, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	trained := time.Since(started)
	t.Logf("trained in %s", time.Since(started).Round(time.Second))
	res, err := Run(ctx, train, cfg, Options{Nets: tagger.DefaultNets(), Seed: 1,
		Folds: envInt(t, "DEIDCORPUS_CAL_FOLDS", DefaultFolds), Iterations: envInt(t, "DEIDCORPUS_CAL_ITER", DefaultIterations)})
	if err != nil {
		t.Fatal(err)
	}
	m.Meta.Calibration = &res.Calibration
	t.Logf("training %s, calibration %.0f s", trained.Round(time.Second), res.Calibration.Seconds)
	report(t, res)
	if path := os.Getenv("DEIDCORPUS_MODEL_OUT"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Save(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	stripped := experiment.Stripped(dev)
	timed := func(opt tagger.TagOptions) ([]pipeline.Document, tagger.NetReport, time.Duration) {
		s := time.Now()
		out, rep, err := m.TagReport(ctx, stripped, opt)
		if err != nil {
			t.Fatal(err)
		}
		return out, rep, time.Since(s)
	}
	for range envInt(t, "DEIDCORPUS_TIMINGS", 2) { // the last run of each is the one timed: caches warm
		bal, _, tb := timed(tagger.TagOptions{})
		priv, rep, tp := timed(tagger.TagOptions{Point: tagger.Privacy})
		t.Logf("tagging dev: balanced %s, privacy %s (%.2fx); nets added %+v", tb.Round(time.Millisecond), tp.Round(time.Millisecond), tp.Seconds()/tb.Seconds(), rep)
		for _, x := range []struct {
			label string
			docs  []pipeline.Document
		}{{"dev balanced", bal}, {"dev privacy", priv}} {
			r, err := experiment.Leaks(dev, x.docs, nil, experiment.RiskOptions{Seed: 1, Bootstrap: 200})
			if err != nil {
				t.Fatal(err)
			}
			printLeaks(t, x.label, r)
		}
	}
	for _, n := range []struct {
		label string
		nets  tagger.Nets
	}{{"no nets", tagger.Nets{}}, {"patterns only", tagger.Nets{Patterns: true}}, {"lists only", tagger.Nets{Lists: true}},
		{"propagation only", tagger.Nets{Propagation: true}}} {
		out, rep, _ := timed(tagger.TagOptions{Point: tagger.Privacy, Nets: &n.nets})
		r, err := experiment.Leaks(dev, out, nil, experiment.RiskOptions{Seed: 1, Bootstrap: 200})
		if err != nil {
			t.Fatal(err)
		}
		printLeaks(t, fmt.Sprintf("dev privacy, %s %+v", n.label, rep), r)
	}
}
