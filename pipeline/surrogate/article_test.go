package surrogate

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/english"
	"deidcorpus/pipeline/synth"
)

func TestWithArticle(t *testing.T) {
	for _, c := range []struct {
		text               string
		bound              bool
		original, replaced string
		want               string
	}{
		{"Works as a ", true, "teacher", "engineer", "Works as an "},
		{"Works as an ", true, "electrician", "librarian", "Works as a "},
		{"Works as a ", true, "teacher", "librarian", "Works as a "},
		{"He is an ", true, "18", "45", "He is a "},
		{"He is a ", true, "45", "80", "He is an "},
		{"He is a ", true, "45", "11", "He is an "},
		{"He is an ", true, "11", "112", "He is a "},
		{"A ", true, "45", "80", "An "},
		{"\nA ", false, "PLUMBER", "ELECTRICIAN", "\nAN "},
		{"An ", true, "ELECTRICIAN", "PLUMBER", "A "},
		{"a ", true, "teacher", "engineer", "an "},
		{"a ", false, "teacher", "engineer", "a "}, // the end of a word before it
		{"banana ", true, "teacher", "engineer", "banana "},
		{"Ana ", true, "teacher", "engineer", "Ana "},
		{"a  ", true, "teacher", "engineer", "a  "}, // not just before the value
		{"a ", true, "UCLA", "Stanford", "a "},      // the note's own usage, which the rule reads otherwise
		{"an ", true, "hour", "day", "a "},
		{"an ", true, "electrician", "union organizer", "a "},
		{"an ", true, "electrician", "eucalyptus farmer", "a "},
	} {
		assert.Equal(t, c.want, withArticle(c.text, c.bound, c.original, c.replaced), "%q before %q -> %q", c.text, c.original, c.replaced)
	}
}

// English articles agree with the surrogates after them in a resynthesized
// corpus: "Works as an engineer", "an 80-year-old"; the notes keep their
// sources' outlines.
func TestResynthesisKeepsArticlesAgreeing(t *testing.T) {
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 200, Seed: 4}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	res, err := New(DefaultPolicy(), nil, 3).Run(docs, Store{})
	require.NoError(t, err)
	article := regexp.MustCompile(`(?i)\b(an?) $`)
	checked := 0
	for i, d := range res.Docs {
		// The outline, which tells an unchanged source note, leaves the
		// article out.
		assert.Equal(t, OutlineOf(docs[i]), OutlineOf(d), d.ID)
		text := []rune(d.Text)
		for _, sp := range d.Spans {
			m := article.FindStringSubmatch(string(text[max(0, sp.Start-4):sp.Start]))
			if m == nil {
				continue
			}
			checked++
			assert.Equal(t, english.TakesAn(sp.Text), len(m[1]) == 2, "%s: %q before %s %q", d.ID, m[1], sp.Type, sp.Text)
		}
	}
	assert.Greater(t, checked, 100, "spans after an article")
}
