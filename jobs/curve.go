package jobs

import (
	"context"
	"fmt"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/tagger"
)

// maxCurvePoints bounds a recall-bias curve: each point tags the split again.
const maxCurvePoints = 25

// recallCurve tags the gold documents once per bias (added to every type's
// B- and I- scores, in place of the model's own biases) and scores each run
// strictly against them: the precision/recall trade-off of MIST's knob.
func recallCurve(ctx context.Context, m *tagger.Model, gold []pipeline.Document, biases []float64, progress func(done, total int, msg string)) ([]evaluate.CurvePoint, error) {
	in := make([]pipeline.Document, len(gold))
	for i, d := range gold {
		in[i] = d
		in[i].Spans = nil
	}
	out := make([]evaluate.CurvePoint, 0, len(biases))
	for i, b := range biases {
		progress(i, len(biases), fmt.Sprintf("recall-bias curve: bias %g", b))
		tagged, err := m.Tag(ctx, in, tagger.TagOptions{RecallBias: map[string]float64{"*": b}})
		if err != nil {
			return nil, err
		}
		pairs, _, _, err := evaluate.PairDocuments(gold, tagged)
		if err != nil {
			return nil, err
		}
		ms, err := evaluate.NewScorer(pairs, false).Run([]evaluate.Spec{{Label: "strict", Mode: evaluate.Strict}})
		if err != nil {
			return nil, err
		}
		out = append(out, evaluate.CurvePoint{Bias: b, Counts: ms[0].Counts,
			Precision: ms[0].MicroPrecision, Recall: ms[0].MicroRecall, F1: ms[0].MicroF1})
	}
	return out, nil
}
