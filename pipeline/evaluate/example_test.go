package evaluate_test

import (
	"fmt"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
)

// Score a system's spans against gold ones. The system found the doctor
// with one character too many and missed the date: strict matching counts
// the doctor as wrong, relaxed matching (same start, end within 2, as the
// i2b2 2014 script) as right.
func ExampleEvaluate() {
	text := "Seen by Dr. Okafor on 2089-03-14."
	gold := []pipeline.Document{{ID: "101-01", Patient: "101", Text: text, Spans: []pipeline.Span{
		{Start: 12, End: 18, Category: "NAME", Type: "DOCTOR"},
		{Start: 22, End: 32, Category: "DATE", Type: "DATE"},
	}}}
	system := []pipeline.Document{{ID: "101-01", Patient: "101", Text: text, Spans: []pipeline.Span{
		{Start: 12, End: 19, Category: "NAME", Type: "DOCTOR"},
	}}}
	for _, docs := range [][]pipeline.Document{gold, system} {
		for i := range docs {
			docs[i].FillText()
		}
	}
	r, err := evaluate.Evaluate(gold, system, evaluate.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range r.PerType {
		fmt.Printf("%s/%s: strict F1 %.2f, relaxed F1 %.2f\n", t.Category, t.Type, t.Strict.F1, t.Relaxed.F1)
	}
	// Output:
	// NAME/DOCTOR: strict F1 0.00, relaxed F1 1.00
	// DATE/DATE: strict F1 0.00, relaxed F1 0.00
}
