package jobs

import (
	"testing"

	"deidcorpus/auth"
)

// Every kind a mutation queues names that mutation's rule, and the rule
// exists: a misspelt one would refuse every job of the kind when it starts.
func TestQueuedByNamesExistingRules(t *testing.T) {
	for kind := range Handlers() {
		op, ok := queuedBy[kind]
		if kind == (PingParams{}).JobKind() || kind == (PartParams{}).JobKind() {
			if ok {
				t.Errorf("%s jobs are queued by no mutation, yet name %s", kind, op)
			}
			continue
		}
		if !ok {
			t.Errorf("job kind %s names no queuing mutation", kind)
			continue
		}
		if _, ok := auth.RuleFor(op); !ok {
			t.Errorf("job kind %s: no rule %s in auth/rules.go", kind, op)
		}
	}
	for kind := range Splits() {
		if _, ok := queuedBy[kind]; !ok {
			t.Errorf("job kind %s names no queuing mutation", kind)
		}
	}
}
