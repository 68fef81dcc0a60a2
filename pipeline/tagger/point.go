package tagger

import (
	"fmt"

	"deidcorpus/pipeline/evaluate"
)

// OperatingPoint names a model's decision rule: which tokens it calls PHI.
// Balanced is the rule that scored best on F1 (the CRF's Viterbi path with
// the configured recall bias); Privacy is the rule calibrated on held-out
// patient folds of the training data to reach a target recall of PHI
// characters, for releases, where a miss publishes a person's data and a
// false alarm only puts a surrogate where a word was.
type OperatingPoint string

// The operating points a model can tag at.
const (
	Balanced OperatingPoint = "balanced"
	Privacy  OperatingPoint = "privacy"
)

// OperatingPoints lists the valid points, for messages and flags.
var OperatingPoints = []OperatingPoint{Balanced, Privacy}

// ParseOperatingPoint reads a point's name; "" is Balanced.
func ParseOperatingPoint(s string) (OperatingPoint, error) {
	switch OperatingPoint(s) {
	case "", Balanced:
		return Balanced, nil
	case Privacy:
		return Privacy, nil
	}
	return "", fmt.Errorf("operating point %q: want one of %v", s, OperatingPoints)
}

// ValidTargetRecall says whether r can be asked of a privacy point: a
// fraction of PHI characters, above one half and at most 1.
func ValidTargetRecall(r float64) error {
	if !(r > 0.5 && r <= 1) {
		return fmt.Errorf("target recall %g: want a fraction of PHI characters in (0.5, 1], such as 0.995", r)
	}
	return nil
}

// HeldOutRisk is what a model's calibration measured at one operating
// point on held-out patient folds of its own training data: the risk a
// release made from its tags may still hold, with intervals.
type HeldOutRisk struct {
	Point        OperatingPoint `json:"point"`
	TargetRecall float64        `json:"targetRecall,omitempty"` // privacy point only
	Documents    int            `json:"documents"`
	Values       int            `json:"values"` // gold values the policy replaces
	// ValuesLeakedPer1000 of the replaced values stand in the release as
	// they were written.
	ValuesLeakedPer1000   float64           `json:"valuesLeakedPer1000"`
	ValuesLeakedPer1000CI evaluate.Interval `json:"valuesLeakedPer1000CI"`
	// NoteLeakRate is the share of notes holding a leaked value;
	// NoteDirectRate of notes holding a leaked direct identifier (a name,
	// id, contact, street or date).
	NoteLeakRate     float64           `json:"noteLeakRate"`
	NoteLeakRateCI   evaluate.Interval `json:"noteLeakRateCI"`
	NoteDirectRate   float64           `json:"noteDirectRate"`
	NoteDirectRateCI evaluate.Interval `json:"noteDirectRateCI"`
	// CharRecall and SpanPrecision are the point's recall of PHI
	// characters and the share of its spans that touch gold PHI.
	CharRecall    float64 `json:"charRecall"`
	SpanPrecision float64 `json:"spanPrecision"`
}

// Calibration is what training found on held-out patient folds: the
// risk at each operating point. A model trained before calibration
// existed has none (models calibrate adds it).
type Calibration struct {
	Folds int           `json:"folds"`
	Risk  []HeldOutRisk `json:"risk"`
	// TargetRecall is the recall of PHI characters calibrated for, and
	// Threshold the privacy rule's threshold that reached it: a token is
	// PHI when its probability of O is below it. Curve is every threshold
	// measured, so that another target needs no new calibration.
	TargetRecall float64       `json:"targetRecall"`
	Threshold    float64       `json:"threshold"`
	Curve        []RecallPoint `json:"curve"`
	// Iterations bounds the fold models' L-BFGS steps; Nets the safety
	// nets the privacy figures were measured with; Seconds what
	// calibration took.
	Iterations int     `json:"iterations"`
	Nets       Nets    `json:"nets"`
	Seconds    float64 `json:"seconds"`
}

// HeldOutRisk returns the calibration's figures at point p.
func (m *Model) HeldOutRisk(p OperatingPoint) (HeldOutRisk, bool) {
	if m.Meta.Calibration == nil {
		return HeldOutRisk{}, false
	}
	for _, r := range m.Meta.Calibration.Risk {
		if r.Point == p {
			return r, true
		}
	}
	return HeldOutRisk{}, false
}
