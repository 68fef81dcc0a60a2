package surrogate_test

import (
	"fmt"
	"strings"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/surrogate"
)

// Resynthesize two notes of one patient with the default policy, then check
// the output: every span re-aligned on its surrogate text, the patient's
// name replaced by the same surrogate in both notes, no original left.
func Example() {
	docs := []pipeline.Document{
		{ID: "101-01", Patient: "101", Text: "Harlan Valdez, 67, seen on 03/14/2089 by Dr. Ines Okafor.", Spans: []pipeline.Span{
			{Start: 0, End: 13, Category: "NAME", Type: "PATIENT"},
			{Start: 15, End: 17, Category: "AGE", Type: "AGE"},
			{Start: 27, End: 37, Category: "DATE", Type: "DATE"},
			{Start: 45, End: 56, Category: "NAME", Type: "DOCTOR"},
		}},
		{ID: "101-02", Patient: "101", Text: "Follow-up: Harlan Valdez is well.", Spans: []pipeline.Span{
			{Start: 11, End: 24, Category: "NAME", Type: "PATIENT"},
		}},
	}
	for i := range docs {
		docs[i].FillText()
	}
	res, err := surrogate.New(nil, nil, 7).Run(docs, surrogate.Store{})
	if err != nil {
		fmt.Println(err)
		return
	}
	first, second := res.Docs[0], res.Docs[1]
	fmt.Println("same surrogate for the patient in both notes:", first.Spans[0].Text == second.Spans[0].Text)
	fmt.Println("original name gone:", !strings.Contains(first.Text+second.Text, "Valdez"))
	report := surrogate.Check(docs, res, surrogate.DefaultPolicy())
	fmt.Println("check passed:", report.OK(), "spans:", report.Spans)
	// Output:
	// same surrogate for the patient in both notes: true
	// original name gone: true
	// check passed: true spans: 5
}
