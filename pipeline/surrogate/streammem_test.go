package surrogate

import (
	"runtime"
	"testing"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
)

// BenchmarkStreamState measures what a Stream keeps for pass 2 (the part of
// resynthesis's memory that grows with the corpus): the live heap, per
// patient, once every batch of a synthetic corpus is observed and the plan
// drawn. 14,500 bytes a patient before the patients' value sets were frozen
// and the plan's own state let go.
func BenchmarkStreamState(b *testing.B) {
	const patients = 6000
	for b.Loop() {
		s, err := New(DefaultPolicy(), nil, 7).Stream(Store{})
		if err != nil {
			b.Fatal(err)
		}
		var batch []pipeline.Document
		n := 0
		flush := func() {
			if err := s.Observe(batch, nil); err != nil {
				b.Fatal(err)
			}
			batch, n = nil, 0
		}
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := synth.Generate(synth.Options{Patients: patients, Seed: 7}, func(p synth.Patient) error {
			batch = append(batch, p.Docs...)
			if n++; n == 140 {
				flush()
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		flush()
		if _, err := s.Plan(nil); err != nil {
			b.Fatal(err)
		}
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/patients, "live-B/patient")
		runtime.KeepAlive(s)
	}
}
