package experiment

import (
	"fmt"
	"io"
	"strings"
)

// RenderMarkdown writes an experiment's table as Markdown: a row per
// configuration with precision, recall and F1 and their bootstrap intervals,
// then the significance tests (over all tags, with the categories whose
// difference is significant).
func RenderMarkdown(w io.Writer, r *Result) error {
	var b strings.Builder
	ci := func(x float64, lo, hi float64) string { return fmt.Sprintf("%.4f [%.4f, %.4f]", x, lo, hi) }
	fmt.Fprintf(&b, "| Configuration | Train | Test | Train docs (a run's) | Test docs (all runs') | P [%g%% CI] | R [%g%% CI] | F1 [%g%% CI] |\n",
		r.Confidence*100, r.Confidence*100, r.Confidence*100)
	b.WriteString("|---|---|---|---:|---:|---|---|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s | %s | %s |\n", row.Configuration, row.Train, row.Test,
			row.TrainDocuments, row.TestDocuments, ci(row.Precision, row.PrecisionCI.Low, row.PrecisionCI.High),
			ci(row.Recall, row.RecallCI.Low, row.RecallCI.High), ci(row.F1, row.F1CI.Low, row.F1CI.High))
	}
	fmt.Fprintf(&b, "\nStrict micro scores; intervals: percentile bootstrap over test documents, %d resamples (seed %d).\n",
		r.Bootstrap, r.Seed)
	if len(r.Tests) > 0 {
		fmt.Fprintf(&b, "\n| A | B | F1 A | F1 B | B − A | p (ALL) | Bonferroni threshold | Significant | Significant categories |\n")
		b.WriteString("|---|---|---:|---:|---:|---:|---:|---|---|\n")
		for _, s := range r.Tests {
			var cats []string
			for _, t := range s.Tests[min(1, len(s.Tests)):] {
				if t.Significant {
					cats = append(cats, fmt.Sprintf("%s (%+.4f, p=%.4f)", t.Scope, t.Diff, t.P))
				}
			}
			sig := "no"
			if s.Significant {
				sig = "yes"
			}
			list := strings.Join(cats, ", ")
			if list == "" {
				list = "none"
			}
			fmt.Fprintf(&b, "| %s | %s | %.4f | %.4f | %+.4f | %.4f | %.4f | %s | %s |\n", s.A, s.B, s.F1A, s.F1B, s.Diff,
				s.P, s.Threshold, sig, list)
		}
		fmt.Fprintf(&b, "\nApproximate randomization over documents, %d shuffles, over all tags and per category, Bonferroni-corrected across each comparison's tests.\n", r.Shuffles)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
