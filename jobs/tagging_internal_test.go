package jobs

import (
	"testing"

	"deidcorpus/pipeline/tagger"
)

// A training job's bar only moves forward across its stages, and ends full.
func TestTrainProgressOnlyMovesForward(t *testing.T) {
	stages := []tagger.Progress{
		{Stage: "features", Done: 1, Total: 3}, {Stage: "features", Done: 3, Total: 3},
		{Stage: "train", Done: 0, Total: 10}, {Stage: "train", Done: 5, Total: 10}, {Stage: "train", Done: 10, Total: 10},
		{Stage: "post", Done: 0, Total: 1}, {Stage: "post", Done: 1, Total: 1},
	}
	last := -1
	for _, pr := range stages {
		done, msg := trainProgress(pr)
		if done < last || done > trainScale {
			t.Errorf("%+v: progress %d after %d (scale %d)", pr, done, last, trainScale)
		}
		if msg == "" {
			t.Errorf("%+v: no message", pr)
		}
		last = done
	}
	if last != trainScale {
		t.Errorf("progress ends at %d, want %d", last, trainScale)
	}
}
