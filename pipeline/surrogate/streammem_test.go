package surrogate

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
)

// BenchmarkStreamState measures what a Stream keeps across a corpus (the
// part of resynthesis's memory that grows with it), per patient of a
// synthetic corpus: the live heap once every batch is observed and the plan
// drawn (what pass 2 keeps), and the peak of the live heap through the
// first pass and the plan, sampled with the collector run at every 5% of
// growth. Run it with -benchtime 2x: the last run's figures leave out what a
// process loads once (the language pack's lists). On 28 November: 2,269 and
// 4,641 bytes (patients' frozen sets of 32-bit hashes, the plan's patients
// of a word by its hash), against 2,607 and 5,321 the same day before. On
// 26 November: 2,607 and 4,900-5,200 bytes; 4,697 and 11,400-11,800 before the sets kept their
// keys' hashes instead of the keys and the plan its values compact; 14,500
// after the plan (once, pack included) before the patients' value sets were
// frozen and the plan's own state let go.
func BenchmarkStreamState(b *testing.B) {
	const patients = 6000
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	for b.Loop() {
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		peak, stop := livePeak()
		s, err := New(DefaultPolicy(), nil, 7).Stream(Store{})
		if err != nil {
			b.Fatal(err)
		}
		observeSynthetic(b, s, patients)
		if _, err := s.Plan(nil); err != nil {
			b.Fatal(err)
		}
		stop()
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/patients, "live-B/patient")
		b.ReportMetric(float64(peak.Load()-before.HeapAlloc)/patients, "peak-live-B/patient")
		runtime.KeepAlive(s)
	}
}

// observeSynthetic has s observe a synthetic corpus of some patients
// (synth seed 7), 140 patients a batch.
func observeSynthetic(b *testing.B, s *Stream, patients int) {
	var batch []pipeline.Document
	n := 0
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if err := s.Observe(batch, nil); err != nil {
			b.Fatal(err)
		}
		batch, n = nil, 0
	}
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
}

// livePeak samples the live heap (as of the last collection) every
// millisecond until stop, keeping the largest.
func livePeak() (peak *atomic.Uint64, stop func()) {
	peak = new(atomic.Uint64)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak.Store(max(peak.Load(), sample[0].Value.Uint64()))
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return peak, func() { close(done); <-stopped }
}
