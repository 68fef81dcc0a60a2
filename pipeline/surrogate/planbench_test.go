package surrogate

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkStreamPlan measures a stream's plan (the corpus-scope surrogates
// drawn between the passes, on one core) per patient of synthetic corpora of
// growing size: a cost per patient that grows with the corpus is a plan
// whose work grows faster than it.
func BenchmarkStreamPlan(b *testing.B) {
	for _, patients := range []int{3000, 10000, 30000} {
		b.Run(fmt.Sprintf("patients=%d", patients), func(b *testing.B) {
			var plan time.Duration
			runs := 0
			for b.Loop() {
				s, err := New(DefaultPolicy(), nil, 7).Stream(Store{})
				if err != nil {
					b.Fatal(err)
				}
				observeSynthetic(b, s, patients)
				start := time.Now()
				if _, err := s.Plan(nil); err != nil {
					b.Fatal(err)
				}
				plan += time.Since(start)
				runs++
			}
			b.ReportMetric(float64(plan.Nanoseconds())/float64(runs*patients), "plan-ns/patient")
		})
	}
}
