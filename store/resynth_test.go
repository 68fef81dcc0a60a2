package store_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"deidcorpus/store"
)

// TestCheckFindingsCountEveryKind: the source identifiers a check found in
// the text count as findings, as the job makes a summary and as JSON
// decodes it; a summary that says the check failed counts one at least,
// whatever kinds it counts, so its corpus is quarantined.
func TestCheckFindingsCountEveryKind(t *testing.T) {
	for _, c := range []struct {
		summary map[string]any
		want    int
	}{
		{map[string]any{"ok": false, "leaks": 1, "identifiers": 2, "unannotated": 7}, 3},
		{map[string]any{"ok": false, "leaks": 0.0, "identifiers": 4.0}, 4},
		{map[string]any{"ok": false, "leaks": 0, "misaligned": 0}, 1},
		{map[string]any{"ok": true, "leaks": 0, "unannotated": 7}, 0},
		{map[string]any{"leaks": 2}, 2},
	} {
		assert.Equal(t, c.want, store.CheckFindings(c.summary), "%v", c.summary)
	}
}
