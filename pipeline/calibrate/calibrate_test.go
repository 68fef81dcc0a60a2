package calibrate

import (
	"context"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
	"deidcorpus/pipeline/tagger"
)

// The threshold chosen is the lowest that reaches the target, or the one of
// highest recall when none does.
func TestChoose(t *testing.T) {
	curve := []tagger.RecallPoint{{Threshold: 0.5, CharRecall: 0.9}, {Threshold: 0.9, CharRecall: 0.996}, {Threshold: 0.99, CharRecall: 0.999}}
	for _, c := range []struct{ target, want float64 }{{0.995, 0.9}, {0.8, 0.5}, {0.998, 0.99}, {0.9999, 0.99}} {
		if got := choose(curve, c.target); got != c.want {
			t.Errorf("target %g: %g, want %g", c.target, got, c.want)
		}
	}
}

// Calibration on held-out folds gives a threshold of the grid, a recall
// that rises with the threshold, and the risk at both points, the privacy
// point leaking no more than the balanced one.
func TestRunOnSynthetic(t *testing.T) {
	var docs []pipeline.Document
	if err := synth.Generate(synth.Options{Patients: 6, Seed: 3}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cfg := tagger.DefaultConfig()
	cfg.Training.MaxIterations = 10
	res, err := Run(context.Background(), docs, cfg, Options{Folds: 2, Seed: 1, Nets: tagger.DefaultNets(), Bootstrap: 20})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Calibration
	if c.Folds != 2 || c.Iterations != 10 || c.TargetRecall != DefaultTargetRecall || len(c.Curve) != len(tagger.ThresholdGrid()) {
		t.Fatalf("calibration %+v", c)
	}
	for i := 1; i < len(c.Curve); i++ {
		if c.Curve[i].CharRecall+1e-9 < c.Curve[i-1].CharRecall-0.02 {
			t.Errorf("recall fell from %v to %v", c.Curve[i-1], c.Curve[i])
		}
	}
	bal, ok1 := (&tagger.Model{Meta: tagger.Meta{Calibration: &c}}).HeldOutRisk(tagger.Balanced)
	priv, ok2 := (&tagger.Model{Meta: tagger.Meta{Calibration: &c}}).HeldOutRisk(tagger.Privacy)
	if !ok1 || !ok2 || priv.TargetRecall != DefaultTargetRecall || bal.Documents != len(docs) {
		t.Fatalf("risk %+v", c.Risk)
	}
	if priv.CharRecall < bal.CharRecall || priv.ValuesLeakedPer1000 > bal.ValuesLeakedPer1000 || priv.NoteLeakRate > bal.NoteLeakRate {
		t.Errorf("the privacy point leaks more than the balanced one: %+v vs %+v", priv, bal)
	}
	if len(res.Privacy) != len(docs) || res.Privacy[0].ID != docs[0].ID {
		t.Errorf("held-out privacy tags not in input order")
	}
	if _, err := Run(context.Background(), docs, cfg, Options{Folds: 1}); err == nil {
		t.Error("one fold accepted")
	}
	if _, err := Run(context.Background(), docs, cfg, Options{TargetRecall: 0.3}); err == nil {
		t.Error("target recall 0.3 accepted")
	}
}
