package english

import "testing"

func TestArticle(t *testing.T) {
	for s, want := range map[string]string{
		"electrician": "an", "teacher": "a", "Accountant": "an", "UNION": "a", "university": "a",
		"one-time": "a", "hour": "an", "honest": "an", "heron": "a", "European": "a",
		"8": "an", "80": "an", "86": "an", "800": "an", "11": "an", "18": "an", "11,000": "an",
		"11000": "an", "1": "a", "111": "a", "180": "a", "45": "a", "1800": "an", "1234": "a", "": "a", `"idle"`: "an",
	} {
		if got := Article(s); got != want {
			t.Errorf("Article(%q) = %q, want %q", s, got, want)
		}
	}
}
