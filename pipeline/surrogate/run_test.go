package surrogate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A run counts against each earlier job what it took over from it, not
// what it drew itself; a run split into parts counts the same once the
// parts' counts are merged.
func TestReuseCounter(t *testing.T) {
	jane := Mapping{Scope: ScopeCorpus, Category: "NAME", Type: "PATIENT", Original: "Jane", Surrogate: "Ada"}
	boston := Mapping{Scope: ScopeCorpus, Category: "LOCATION", Type: "CITY", Original: "Boston", Surrogate: "Lyon"}
	own := Mapping{Scope: PatientScope("p2"), Category: "NAME", Type: "DOCTOR", Original: "Lee", Surrogate: "Kim"}
	prior := PriorState{Store: Store{Mappings: []Mapping{jane, boston}, Shifts: []PatientShift{{Patient: "p1", Days: 3}}},
		MappingJobs: []int{4, 9}, ShiftJobs: []int{4}}
	drawn := Mapping{Scope: ScopeCorpus, Category: "NAME", Type: "PATIENT", Original: "Ann", Surrogate: "Eve", New: true}
	batch1 := &Result{Mappings: []Mapping{jane, drawn}, Shifts: []PatientShift{{Patient: "p1", Days: 3}, {Patient: "p3", Days: 5, New: true}}}
	batch2 := &Result{Mappings: []Mapping{boston, jane, own}}

	whole := prior.Reuse()
	whole.Batch(PriorState{Store: Store{Mappings: []Mapping{own}}, MappingJobs: []int{7}})
	whole.Add(batch1)
	whole.Add(batch2)
	want := []Reuse{{Job: 4, Mappings: 2, Shifts: 1}, {Job: 7, Mappings: 1}, {Job: 9, Mappings: 1}}
	assert.Equal(t, want, whole.Counts())

	part1, part2, finish := prior.Reuse(), prior.Reuse(), prior.Reuse()
	part1.Add(batch1)
	part2.Batch(PriorState{Store: Store{Mappings: []Mapping{own}}, MappingJobs: []int{7}})
	part2.Add(batch2)
	finish.Merge(part1.Counts())
	finish.Merge(part2.Counts())
	assert.Equal(t, want, finish.Counts())

	got := finish.Reused(func(job int) (any, string, bool) {
		if job == 7 {
			return nil, "", false // deleted since
		}
		return uint64(job * 10), "out", true
	})
	assert.Equal(t, []Reuse{{Job: 4, Seed: uint64(40), Out: "out", Mappings: 2, Shifts: 1}, {Job: 7, Mappings: 1},
		{Job: 9, Seed: uint64(90), Out: "out", Mappings: 1}}, got)
}
