package experiment

import (
	"fmt"
	"io"
	"strings"
)

// Anchors are the figures of the studies the residual-risk experiment
// simulates, for the tables beside ours.
var Anchors = []struct{ Study, Attack, Figures string }{
	{"Carrell et al. 2013 (pilot, human readers)", "readers look for real identifiers", "about 90% of residual identifiers concealed"},
	{"Carrell et al. 2019", "parrot attack", "recall 0.68, precision 0.52 (211 of 310 leaks, 191 false alarms)"},
	{"Carrell et al. 2020", "human readers", "recall 0.268, precision 0.372"},
}

// RenderRisk writes a residual-risk experiment's figures as Markdown: the
// leaks with their intervals, the parrot attack and distinguishability, each
// by type, and the anchors' figures.
func RenderRisk(w io.Writer, r *RiskResult) error {
	var b strings.Builder
	res, p, d := r.Residual, r.Parrot, r.Distinguishability
	pc := r.Confidence * 100
	fmt.Fprintf(&b, "Residual risk of %s (system set %s)\n\n", r.Released, r.System)
	b.WriteString("| Measure | Value |\n|---|---:|\n")
	fmt.Fprintf(&b, "| gold spans | %d |\n| leaked spans (partly: %d) | %d |\n", res.GoldSpans, res.Partial, res.Leaked)
	fmt.Fprintf(&b, "| leak rate [%g%% CI] | %.4f [%.4f, %.4f] |\n", pc, res.LeakRate, res.LeakCI.Low, res.LeakCI.High)
	fmt.Fprintf(&b, "| documents with a leak | %d of %d |\n", res.DocumentsWithLeak, res.Documents)
	fmt.Fprintf(&b, "| document leak rate [%g%% CI] | %.4f [%.4f, %.4f] |\n", pc, res.DocumentLeakRate, res.DocumentCI.Low, res.DocumentCI.High)
	fmt.Fprintf(&b, "| expected leaks in %d notes [%g%% CI] | %.0f [%.0f, %.0f] |\n", res.Expected.Documents, pc,
		res.Expected.Leaks, res.Expected.LeaksCI.Low, res.Expected.LeaksCI.High)
	fmt.Fprintf(&b, "| parrot attack: leaks, hypothesized, true positives | %d, %d, %d |\n", p.Leaks, p.Hypothesized, p.TruePositives)
	fmt.Fprintf(&b, "| parrot attack recall, precision | %.3f, %.3f |\n", p.Recall, p.Precision)
	fmt.Fprintf(&b, "| distinguishability AUC (%d originals, %d surrogates, %d patient folds) | %.3f |\n", d.Originals, d.Surrogates, d.Folds, d.AUC)
	for _, f := range d.Features {
		fmt.Fprintf(&b, "| AUC from the type and %s alone | %.3f |\n", f.Label, f.AUC)
	}
	b.WriteString("\n| Type | Gold | Leaked | Leak rate | Parrot hypothesized | Parrot TP | Parrot recall | Parrot precision | AUC |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	pt, at := map[string]ParrotCount{}, map[string]AUC{}
	for _, x := range p.ByType {
		pt[x.Type] = x
	}
	for _, x := range d.ByType {
		at[x.Label] = x
	}
	for _, t := range res.ByType {
		auc := "–"
		if a, ok := at[t.Label]; ok {
			auc = fmt.Sprintf("%.3f", a.AUC)
		}
		x := pt[t.Label]
		fmt.Fprintf(&b, "| %s | %d | %d | %.4f | %d | %d | %.3f | %.3f | %s |\n", t.Label, t.Gold, t.Leaked, t.Rate,
			x.Hypothesized, x.TruePositives, x.Recall, x.Precision, auc)
	}
	b.WriteString("\nAnchors: ")
	for i, a := range Anchors {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s, %s: %s", a.Study, a.Attack, a.Figures)
	}
	fmt.Fprintf(&b, ".\nIntervals: percentile bootstrap over patients, %d resamples (seed %d).\n", r.Bootstrap, r.Seed)
	_, err := io.WriteString(w, b.String())
	return err
}
