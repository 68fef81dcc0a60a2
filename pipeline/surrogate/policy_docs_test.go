package surrogate

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every policy in docs/resynthesis.md reads as one: a JSON object in a code
// span (`{"...`) or a json block is a policy (or a field of one: `"comments":
// "keep"`), and a rule is written under "types", never alone, which a
// reader would copy and see refused.
func TestDocsPolicyExamples(t *testing.T) {
	data, err := os.ReadFile("../../docs/resynthesis.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	var examples []string
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(text, -1) {
		examples = append(examples, m[1])
	}
	text = regexp.MustCompile("(?s)```.*?```").ReplaceAllString(text, "")
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(text, -1) {
		span := strings.Join(strings.Fields(m[1]), " ") // a span may wrap
		switch {
		case strings.HasPrefix(span, `{"`):
			examples = append(examples, span)
		case regexp.MustCompile(`^"[A-Z*][A-Z_-]*": \{`).MatchString(span):
			t.Errorf("a rule outside \"types\": `%s` (write it {\"types\": {...}})", span)
		}
	}
	if len(examples) < 4 { // COUNTRY's, OTHER's and the masks'
		t.Fatalf("%d policy examples found: the test reads the docs wrongly", len(examples))
	}
	for _, ex := range examples {
		if _, err := ParsePolicy([]byte(ex)); err != nil {
			t.Errorf("docs/resynthesis.md: %s\n  %v", ex, err)
		}
	}
}
