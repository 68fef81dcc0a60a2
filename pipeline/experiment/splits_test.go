package experiment

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
)

// TestAssignSplits: whole patients per split, near the shares asked (or
// exactly the numbers of patients), the same for a seed and another for
// another seed; parts that add up to neither are refused.
func TestAssignSplits(t *testing.T) {
	var docs []pipeline.Document
	for p := range 20 {
		for n := range 1 + p%3 { // 1 to 3 notes each: 39 notes
			docs = append(docs, pipeline.Document{ID: fmt.Sprintf("%d-%d", p, n), Patient: fmt.Sprint(p)})
		}
	}
	docs = append(docs, pipeline.Document{ID: "alone"}) // a patient of its own

	splits, err := AssignSplits(docs, [3]float64{0.7, 0.1, 0.2}, 7)
	require.NoError(t, err)
	of := map[string]string{}
	n := map[string]int{}
	for i, d := range docs {
		if d.Patient != "" {
			if s, ok := of[d.Patient]; ok {
				assert.Equal(t, s, splits[i], "patient %s in one split", d.Patient)
			}
			of[d.Patient] = splits[i]
		}
		n[splits[i]]++
	}
	assert.InDelta(t, 0.7*40, n["train"], 3, "%v", n)
	assert.InDelta(t, 0.1*40, n["dev"], 3, "%v", n)
	assert.InDelta(t, 0.2*40, n["test"], 3, "%v", n)
	again, err := AssignSplits(docs, [3]float64{0.7, 0.1, 0.2}, 7)
	require.NoError(t, err)
	assert.Equal(t, splits, again, "deterministic for a seed")
	other, err := AssignSplits(docs, [3]float64{0.7, 0.1, 0.2}, 8)
	require.NoError(t, err)
	assert.NotEqual(t, splits, other, "another seed, another cut")

	byCount, err := AssignSplits(docs, [3]float64{15, 0, 6}, 7)
	require.NoError(t, err)
	patients := map[string]map[string]bool{"train": {}, "dev": {}, "test": {}}
	for i, d := range docs {
		patients[byCount[i]][patientKey(d)] = true
	}
	assert.Len(t, patients["train"], 15)
	assert.Empty(t, patients["dev"])
	assert.Len(t, patients["test"], 6)
	all, err := AssignSplits(docs, [3]float64{1, 0, 0}, 7)
	require.NoError(t, err)
	for _, s := range all {
		assert.Equal(t, "train", s)
	}

	_, err = AssignSplits(docs, [3]float64{0.7, 0.1, 0.1}, 7)
	assert.EqualError(t, err, "the shares 0.7, 0.1 and 0.1 add up to 0.9, not 1 (or give numbers of patients that add up to the corpus's 21)")
	_, err = AssignSplits(docs, [3]float64{10, 2, 2}, 7)
	assert.EqualError(t, err, "the numbers of patients 10, 2 and 2 add up to 14; the corpus has 21 patients (or give shares that add up to 1)")
	_, err = AssignSplits(docs, [3]float64{1.2, -0.2, 0}, 7)
	assert.EqualError(t, err, "dev: -0.2 is negative or not a number")
}
