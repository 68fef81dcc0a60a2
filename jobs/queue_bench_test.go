package jobs_test

import (
	"context"
	"testing"
	"time"

	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/store/storetest"
)

// BenchmarkQueue measures the queue itself with trivial (ping) jobs on each
// database: enqueue-to-start latency of a lone job, and throughput of a batch
// of 200 enqueued at once, worked 4 at a time.
func BenchmarkQueue(b *testing.B) {
	for _, backend := range storetest.Backends(b) {
		b.Run(string(backend)+"/latency", func(b *testing.B) {
			ctx := context.Background()
			st := storetest.Open(b, backend)
			m := newManager(b, st, nil, jobs.Options{Concurrency: 4})
			var total time.Duration
			for i := 0; i < b.N; i++ {
				j, err := m.Enqueue(ctx, jobs.PingParams{}, "", nil)
				if err != nil {
					b.Fatal(err)
				}
				done, err := m.Wait(ctx, []int{j.ID})
				if err != nil || done[0].Status != job.StatusSucceeded {
					b.Fatal(err, done)
				}
				total += done[0].StartedAt.Sub(done[0].CreatedAt)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-start")
		})
		b.Run(string(backend)+"/throughput", func(b *testing.B) {
			ctx := context.Background()
			st := storetest.Open(b, backend)
			m := newManager(b, st, nil, jobs.Options{Concurrency: 4})
			const batch = 200
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				ids := make([]int, batch)
				for k := range ids {
					j, err := m.Enqueue(ctx, jobs.PingParams{}, "", nil)
					if err != nil {
						b.Fatal(err)
					}
					ids[k] = j.ID
				}
				if _, err := m.Wait(ctx, ids); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "jobs/s")
		})
	}
}
