package surrogate

import (
	"fmt"
	"slices"
	"strings"

	"deidcorpus/internal/nearmiss"
)

// DefaultPolicyJSON is the default policy's file (policy.json), which
// `resynth --print-policy` prints for a curator to copy and change.
func DefaultPolicyJSON() []byte { return slices.Clone(defaultPolicy) }

// Strategies lists the strategies a policy's rule may name, sorted.
func Strategies() []string {
	var names []string
	for s := range strategies {
		names = append(names, s)
	}
	slices.Sort(names)
	return names
}

// unknownStrategy says a rule's strategy is none of Strategies, which it
// lists, and which was meant when it is a near miss.
func unknownStrategy(name string) string {
	msg := fmt.Sprintf("unknown strategy %q", name)
	if meant := nearmiss.Among(name, Strategies()); len(meant) > 0 {
		msg += "; did you mean " + strings.Join(meant, " or ") + "?"
	}
	return msg + " (known: " + strings.Join(Strategies(), ", ") + ")"
}
