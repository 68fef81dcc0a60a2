package jobs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent"
)

// TestDecide: a job attempt's outcome from its handler's error, why its
// context ended and how many attempts it had.
func TestDecide(t *testing.T) {
	internal := errors.New("disk full")
	invalid := apperr.New(apperr.Invalid, "no split %q", "tset")
	checkFailed := &CheckFailed{Message: "2 leaks"}
	gone := creatorGone{apperr.New(apperr.Unauthorized, "account disabled")}
	for _, c := range []struct {
		name string
		a    attempt
		want outcome
	}{
		{"success", attempt{attempts: 1, maxAttempts: 3}, succeeded},
		{"success as the worker shuts down", attempt{shutdown: true, attempts: 1, maxAttempts: 3}, succeeded},
		{"output saved, check failed", attempt{err: fmt.Errorf("resynthesis: %w", checkFailed), attempts: 1, maxAttempts: 3}, outputFailed},
		{"taken over by another worker", attempt{err: internal, cause: errSuperseded, attempts: 1, maxAttempts: 3}, superseded},
		{"taken over, even having succeeded", attempt{cause: errSuperseded, attempts: 1, maxAttempts: 3}, superseded},
		{"account disabled while it ran", attempt{err: internal, cause: gone, attempts: 1, maxAttempts: 3}, creatorLost},
		{"cancelled by a user", attempt{err: errors.New("context canceled"), cause: errCancelRequested, attempts: 1, maxAttempts: 3}, cancelled},
		{"cancelled during a shutdown", attempt{err: internal, cause: errCancelRequested, shutdown: true, attempts: 1, maxAttempts: 3}, cancelled},
		{"worker shutdown", attempt{err: internal, shutdown: true, attempts: 3, maxAttempts: 3}, handedBack},
		{"bad input fails at once", attempt{err: invalid, attempts: 1, maxAttempts: 3}, failed},
		{"internal error with attempts left", attempt{err: internal, attempts: 2, maxAttempts: 3}, retried},
		{"internal error, out of attempts", attempt{err: internal, attempts: 3, maxAttempts: 3}, failed},
		{"final error", attempt{err: &apperr.Error{Code: apperr.Internal, Err: errFinal, Msg: "part 2 failed"}, attempts: 1, maxAttempts: 3}, failed},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, decide(c.a))
		})
	}
}

// A job made of stages (deidentify) has one bar: each stage's progress,
// on its own scale, moves the job's between the stage's bounds, never past
// them, so that the bar only moves forward and its time left holds.
func TestStagesShareOneBar(t *testing.T) {
	run := &Run{Job: &ent.Job{ID: 1, Params: map[string]any{}}}
	tag, err := run.stage(TagParams{Model: "m", Corpus: "c"}, 0, 10, 30)
	require.NoError(t, err)
	assert.Equal(t, "m", tag.Job.Params["model"], "a stage reads its own kind's parameters")
	assert.Empty(t, run.Job.Params, "the job's own are unchanged")
	resynth, err := run.stage(ResynthesizeParams{Corpus: "c", Out: "o"}, 10, 20, 30)
	require.NoError(t, err)
	for _, step := range []struct {
		r           *Run
		done, total int
		msg         string
		want        int
		wantMsg     string
	}{
		{tag, 0, 10, "tagging", 0, "tagging"}, {tag, 5, 10, "", 5, "tagging"}, {tag, 10, 10, "", 10, "tagging"},
		{resynth, 0, 0, "planning", 10, "planning"}, {resynth, 3, 6, "reading", 20, "reading"},
		{resynth, 9, 6, "", 30, "reading"}, // a stage never moves the bar past its bounds
	} {
		step.r.Progress(step.done, step.total, step.msg)
		done, total, msg := run.snapshot()
		assert.Equal(t, step.want, done, "%+v", step)
		assert.Equal(t, 30, total)
		assert.Equal(t, step.wantMsg, msg)
	}
}
