package evaluate

import "testing"

// BenchmarkEvaluate scores 10,000 generated notes (about 15 PHI tags each)
// under every metric: the i2b2 script's 42 evaluations (token, strict,
// relaxed, label-blind, per category) with per-type scores and the
// analyses, the MEDDOCAN measures, and the PhysioNet overlap rule.
func BenchmarkEvaluate(b *testing.B) {
	gold, sys := generate(10000, 42)
	b.ResetTimer()
	for b.Loop() {
		for _, m := range Metrics() {
			if _, err := Evaluate(gold, sys, Options{Metric: m}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCompare is significance and bootstrap intervals on 10,000 notes
// with the default 9,999 shuffles and 1,000 resamples.
func BenchmarkCompare(b *testing.B) {
	gold, sys := generate(10000, 42)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Compare(gold, sys, gold, CompareOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
