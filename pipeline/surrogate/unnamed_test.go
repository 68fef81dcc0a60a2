package surrogate

import (
	"strings"
	"testing"

	"deidcorpus/pipeline"
)

// Words under a label the policy has no rule for (a tag set of the
// corpus's own, a misspelt type) may be names: they are left in place as a
// finding of the check, never as a value kept on purpose, so a corpus that
// holds them is not shareable as it is. Under a label the policy names,
// words its strategy cannot replace are still kept for a person to review,
// and codes under an unnamed label are replaced by their shape.
func TestWordsUnderAnUnnamedLabelFailTheCheck(t *testing.T) {
	d := pipeline.Document{ID: "1-01", Patient: "1", Text: "Patient John Smith, MRN 44-1093, seen at Mercy Hospital. Lactante.",
		Spans: []pipeline.Span{
			{Start: 8, End: 18, Text: "John Smith", Type: "PERSON"},
			{Start: 24, End: 31, Text: "44-1093", Type: "PERSON_ID"},
			{Start: 41, End: 55, Text: "Mercy Hospital", Type: "DOCTR"},
			{Start: 57, End: 65, Text: "Lactante", Category: "ID", Type: "MEDICALRECORD"},
		}}
	pol := DefaultPolicy()
	res, err := New(pol, nil, 1).Run([]pipeline.Document{d}, Store{})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Docs[0]
	if strings.Contains(out.Text, "44-1093") {
		t.Errorf("a code under an unnamed label was not replaced: %q", out.Text)
	}
	rep := Check([]pipeline.Document{d}, res, pol)
	if rep.OK() {
		t.Fatalf("the check passed with names left in place: %q", out.Text)
	}
	leaked := map[string]bool{}
	for _, l := range rep.Leaks {
		leaked[l.Value] = true
	}
	if !leaked["John Smith"] || !leaked["Mercy Hospital"] || leaked["Lactante"] {
		t.Errorf("leaks %v: want John Smith and Mercy Hospital, not Lactante", rep.Leaks)
	}
	kept := map[string]bool{}
	for _, it := range res.Review {
		kept[it.Original] = it.Kept
	}
	if kept["John Smith"] || kept["Mercy Hospital"] || !kept["Lactante"] {
		t.Errorf("review items kept %v: want only Lactante kept on purpose", kept)
	}
}
