package surrogate

import (
	"fmt"
	"testing"
	"time"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
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

// BenchmarkStreamRerun measures the first pass of a rerun into a new corpus
// (every note to write, beside the corpus-scope mappings a first run stored),
// per patient of synthetic corpora of growing size; the synthetic notes are
// generated within it. A cost per patient that grows with the corpus is a
// pass that visits the stored mappings for every patient.
func BenchmarkStreamRerun(b *testing.B) {
	for _, patients := range []int{1000, 3000, 10000} {
		b.Run(fmt.Sprintf("patients=%d", patients), func(b *testing.B) {
			var docs []pipeline.Document
			if err := synth.Generate(synth.Options{Patients: patients, Seed: 7}, func(p synth.Patient) error {
				docs = append(docs, p.Docs...)
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			first, err := New(DefaultPolicy(), nil, 7).Run(docs, Store{})
			if err != nil {
				b.Fatal(err)
			}
			docs = nil
			var stored []Mapping
			for _, m := range first.Mappings {
				if m.Scope == ScopeCorpus {
					stored = append(stored, m)
				}
			}
			runs := 0
			start := time.Now()
			for b.Loop() {
				s, err := New(DefaultPolicy(), nil, 8).Stream(Store{Mappings: stored})
				if err != nil {
					b.Fatal(err)
				}
				observeSynthetic(b, s, patients)
				runs++
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(runs*patients), "ns/patient")
		})
	}
}
