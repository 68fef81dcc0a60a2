package surrogate

import (
	"hash/maphash"
	"maps"
	"slices"
	"time"
)

// A resynthesis run's lifecycle, its database-free parts: where a run
// writing into a surrogate corpus stands (RunState, kept on the corpus for
// a retry to resume from) and what it took over from earlier runs instead
// of drawing it from its own seed (ReuseCounter). The store keeps them; the
// jobs drive the run.

// RunState is where a resynthesis writing into its target corpus stands,
// from its start until it finishes, with the corpus quarantined meanwhile:
// readers never take a half-written corpus for a checked one, and a retried
// attempt of the same job knows where it stands.
type RunState struct {
	Job   int       `json:"job"`
	Since time.Time `json:"since"` // documents written since are the job's
	Redo  bool      `json:"redo"`
	// Redone are the patients whose earlier notes the job rewrites: a retry
	// rewrites them too, although the state that made them stale is dropped.
	Redone []string `json:"redone"`
	// The target's check state before the job, which an incremental run
	// adds its findings to; Created: the job created the target.
	Status   string `json:"status"`
	Findings int    `json:"findings"`
	Created  bool   `json:"created"`
}

// PriorState is what earlier resynthesis jobs decided for a source corpus,
// and which job decided each part: MappingJobs[i] made Mappings[i],
// ShiftJobs[i] drew Shifts[i].
type PriorState struct {
	Store
	MappingJobs, ShiftJobs []int
}

// Reuse is what a resynthesis took over from one earlier job instead of
// drawing it from its own seed.
type Reuse struct {
	Job      int    `json:"job"`
	Seed     any    `json:"seed"`   // the earlier job's seed
	Out      string `json:"corpus"` // the surrogate corpus the earlier job wrote
	Mappings int    `json:"mappings"`
	Shifts   int    `json:"shifts"`
}

// ReuseCounter counts, per earlier job, the mappings and date shifts a run
// used that were that job's rather than drawn by the run: the seed of a run
// governs only what it drew itself. A batched run adds each batch's result.
type ReuseCounter struct {
	mappingJob map[uint64]int // by reuseKey
	batchJob   map[uint64]int // the patient mappings read with the last batch (Batch)
	shiftJob   map[string]int
	byJob      map[int]*Reuse
}

// reuseKey is the hash of a mapping's scope, category, type and original. A
// counter holds one for each stored corpus-scope mapping (1.5 million at a
// million notes), where the four strings' headers cost four times as much;
// two mappings with one hash could only count one's reuse against the
// other's job (odds of about 10^-6 at 5 million mappings).
func reuseKey(m Mapping) uint64 {
	var h maphash.Hash
	h.SetSeed(reuseSeed)
	for _, part := range [...]string{m.Scope, m.Category, m.Type, m.Original} {
		h.WriteString(part)
		h.WriteByte(0)
	}
	return h.Sum64()
}

var reuseSeed = maphash.MakeSeed()

// Reuse starts counting what a run takes over from the state.
func (state PriorState) Reuse() *ReuseCounter {
	c := &ReuseCounter{mappingJob: make(map[uint64]int, len(state.Mappings)), shiftJob: make(map[string]int, len(state.Shifts)),
		byJob: map[int]*Reuse{}}
	for i, m := range state.Mappings {
		c.mappingJob[reuseKey(m)] = state.MappingJobs[i]
	}
	for i, sh := range state.Shifts {
		c.shiftJob[sh.Patient] = state.ShiftJobs[i]
	}
	return c
}

// Batch makes the patient mappings read with a batch known to Add in place
// of the last batch's: a run that reads them a batch at a time counts each
// batch's result against its own.
func (c *ReuseCounter) Batch(state PriorState) {
	c.batchJob = make(map[uint64]int, len(state.Mappings))
	for i, m := range state.Mappings {
		c.batchJob[reuseKey(m)] = state.MappingJobs[i]
	}
}

// Add counts a result's (or a batch's) mappings and shifts.
func (c *ReuseCounter) Add(res *Result) {
	for _, m := range res.Mappings {
		k := reuseKey(m)
		job, ok := c.mappingJob[k]
		if !ok {
			job, ok = c.batchJob[k]
		}
		if ok && !m.New {
			c.of(job).Mappings++
		}
	}
	for _, sh := range res.Shifts {
		if job, ok := c.shiftJob[sh.Patient]; ok && !sh.New {
			c.of(job).Shifts++
		}
	}
}

// of is the count of an earlier job, begun at zero.
func (c *ReuseCounter) of(job int) *Reuse {
	if c.byJob[job] == nil {
		c.byJob[job] = &Reuse{Job: job}
	}
	return c.byJob[job]
}

// Counts are what the counter counted, per earlier job, without the jobs'
// seeds and corpora: what a part of a run rewritten in another process
// gives the process that finishes the run (Merge).
func (c *ReuseCounter) Counts() []Reuse {
	out := make([]Reuse, 0, len(c.byJob))
	for _, id := range c.Jobs() {
		out = append(out, Reuse{Job: id, Mappings: c.byJob[id].Mappings, Shifts: c.byJob[id].Shifts})
	}
	return out
}

// Merge adds counts another counter made (Counts).
func (c *ReuseCounter) Merge(counts []Reuse) {
	for _, r := range counts {
		c.of(r.Job).Mappings += r.Mappings
		c.of(r.Job).Shifts += r.Shifts
	}
}

// Jobs are the earlier jobs the counter counted something of, in order.
func (c *ReuseCounter) Jobs() []int { return slices.Sorted(maps.Keys(c.byJob)) }

// Reused tells, per earlier job in order, what a run took over (as
// counted), with the job's seed and the surrogate corpus it wrote as about
// gives them (ok false: the job is gone, and they stay empty).
func (c *ReuseCounter) Reused(about func(job int) (seed any, out string, ok bool)) []Reuse {
	ids := c.Jobs()
	out := make([]Reuse, len(ids))
	for i, id := range ids {
		out[i] = *c.byJob[id]
		if seed, corpus, ok := about(id); ok {
			out[i].Seed, out[i].Out = seed, corpus
		}
	}
	return out
}
