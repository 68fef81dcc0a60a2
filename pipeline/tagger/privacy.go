package tagger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/surrogate"
)

// The privacy point. The balanced point keeps the CRF's best label path; the
// privacy point also calls PHI every token whose marginal probability of O
// (forward-backward over the same scores) falls below a threshold, typed by
// the type its B- and I- labels weigh most. The threshold is what
// calibration chose on held-out patient folds of the training data for a
// target recall of PHI characters (Calibration), so a release trades false
// alarms, which only put a surrogate where a word was, for misses, which
// publish a person's data.

// ErrNotCalibrated marks a model that cannot tag at the privacy point: it
// was trained before calibration, or without it.
var ErrNotCalibrated = errors.New("model has no privacy calibration")

// RecallPoint is what one threshold of the privacy rule measured on the
// held-out folds: tokens whose probability of O is below Threshold are PHI.
type RecallPoint struct {
	Threshold     float64 `json:"threshold"`
	CharRecall    float64 `json:"charRecall"`
	SpanPrecision float64 `json:"spanPrecision"`
}

// PrivacyThreshold returns the threshold that reaches target recall of PHI
// characters on the calibration's held-out folds (0: the calibrated target),
// or an error naming what calibration can offer. name is the model's name in
// messages.
func (m *Model) PrivacyThreshold(target float64, name string) (float64, error) {
	c := m.Meta.Calibration
	if c == nil || len(c.Curve) == 0 {
		return 0, fmt.Errorf("%w: model %s was trained without one; run `deidcorpus models calibrate --model %s` (or retrain it) to tag at the privacy point",
			ErrNotCalibrated, name, name)
	}
	if target == 0 || target == c.TargetRecall {
		return c.Threshold, nil
	}
	if err := ValidTargetRecall(target); err != nil {
		return 0, err
	}
	return c.thresholdFor(target)
}

// thresholdFor is the lowest threshold of the curve (the fewest false
// alarms) whose held-out recall reaches target.
func (c *Calibration) thresholdFor(target float64) (float64, error) {
	best := -1.0
	top := RecallPoint{}
	for _, p := range c.Curve {
		if p.CharRecall >= target && (best < 0 || p.Threshold < best) {
			best = p.Threshold
		}
		if p.CharRecall > top.CharRecall {
			top = p
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("target recall %g: calibration reached at most %.4f of PHI characters on held-out folds (threshold %g); ask for less",
			target, top.CharRecall, top.Threshold)
	}
	return best, nil
}

// ThresholdGrid is the thresholds calibration measures: from the
// marginal's own decision (one half) towards calling PHI every token the
// model gives any chance of being PHI.
func ThresholdGrid() []float64 {
	return []float64{0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.925, 0.95, 0.965, 0.975, 0.985, 0.99,
		0.993, 0.995, 0.997, 0.998, 0.999, 0.9993, 0.9995, 0.9997, 0.9998, 0.9999, 0.99995, 0.99999}
}

// Scored is a document tagged at the balanced point with, per token, the
// CRF's probability of O and the likeliest PHI type: what calibration sweeps
// the privacy threshold over without tagging again.
type Scored struct {
	Balanced pipeline.Document
	td       *taggedDoc
}

// PrivacyAt returns scored documents (one TagScored batch) at the privacy
// rule with threshold t, with the safety nets n run over them, and what the
// nets added.
func (m *Model) PrivacyAt(scored []Scored, t float64, n Nets) ([]pipeline.Document, NetReport) {
	docs := make([]pipeline.Document, len(scored))
	tagged := make([]*taggedDoc, len(scored))
	for i := range scored {
		td := *scored[i].td
		m.privacyPass(&td, t)
		tagged[i], docs[i] = &td, scored[i].Balanced
	}
	rep := m.applyNets(docs, tagged, n)
	for i, td := range tagged {
		docs[i].Spans = td.spans()
	}
	return docs, rep
}

// TagScored tags docs at the balanced point, keeping the per-token figures
// the privacy rule reads.
func (m *Model) TagScored(ctx context.Context, docs []pipeline.Document, opt TagOptions) ([]Scored, error) {
	opt.Point, opt.Threshold = Balanced, 0
	tagged, err := m.tagAll(ctx, docs, opt, true)
	if err != nil {
		return nil, err
	}
	out := make([]Scored, len(docs))
	for i, td := range tagged {
		out[i].td = td
		out[i].Balanced = docs[i]
		out[i].Balanced.Spans = td.spans()
	}
	return out, nil
}

// scorePrivacy fills td's per-token probability of O and likeliest type
// from the marginals p (token t's at [t*L, (t+1)*L)).
func (td *taggedDoc) scorePrivacy(p []float64, L int) {
	n := len(td.tk.Tokens)
	td.pO, td.pType = make([]float32, n), make([]int32, n)
	for t := range n {
		row := p[t*L : (t+1)*L]
		td.pO[t] = float32(row[0])
		best, bestP := 0, -1.0
		for k := 0; 2+2*k < L; k++ {
			if v := row[1+2*k] + row[2+2*k]; v > bestP {
				best, bestP = k, v
			}
		}
		td.pType[t] = int32(best)
	}
}

// privacySpans returns pred with, added, the runs of tokens outside it whose
// probability of O is below t, split where the likeliest type changes; a run
// that touches a span of its type extends it.
func privacySpans(pred []tokSpan, pO []float32, pType []int32, t float64) []tokSpan {
	out := slices.Clone(pred)
	covered := make([]bool, len(pO))
	for _, p := range pred {
		for i := p.first; i < p.last; i++ {
			covered[i] = true
		}
	}
	for i := 0; i < len(pO); {
		if covered[i] || float64(pO[i]) >= t {
			i++
			continue
		}
		j := i + 1
		for j < len(pO) && !covered[j] && float64(pO[j]) < t && pType[j] == pType[i] {
			j++
		}
		out = append(out, tokSpan{i, j, int(pType[i])})
		i = j
	}
	slices.SortFunc(out, func(a, b tokSpan) int { return a.first - b.first })
	merged := out[:0]
	for _, s := range out {
		if n := len(merged); n > 0 && merged[n-1].last == s.first && merged[n-1].typ == s.typ {
			merged[n-1].last = s.last
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// privacyPass turns td's balanced spans into the privacy rule's at
// threshold t: the runs the rule adds, less those that hold no word but a
// title.
func (m *Model) privacyPass(td *taggedDoc, t float64) {
	balanced := td.pred
	td.pred = privacySpans(td.pred, td.pO, td.pType, t)
	td.pred = m.dropBare(td, balanced)
}

// dropBare removes the spans the privacy rule added that hold no word but
// a title ("Mr", "Dr"), a word of one or two letters or punctuation: the rule's low threshold takes the
// title beside a name, and a title replaced as if it were the name leaves
// every other "Mr" of the notes looking like a leaked original, while it
// hides nobody. The balanced spans are kept as they were.
func (m *Model) dropBare(td *taggedDoc, balanced []tokSpan) []tokSpan {
	out := td.pred[:0]
	for _, p := range td.pred {
		if slices.Contains(balanced, p) || m.holdsAWord(td, p) {
			out = append(out, p)
		}
	}
	return out
}

// holdsAWord says whether span p has a token that is a number, or a word of
// three letters or more and no title (a form of address, or a word the
// model learnt comes before a type).
func (m *Model) holdsAWord(td *taggedDoc, p tokSpan) bool {
	for i := p.first; i < p.last; i++ {
		w := td.tk.Word(i)
		if n := runesAll(w, unicode.IsLetter); !isWordy(w) || (n > 0 && n < 3) {
			continue // punctuation, or an initial or a short word ("He", "of") alone
		}
		title := surrogate.IsTitle(w)
		for _, ts := range m.learnt.Titles {
			if slices.Contains(ts, strings.ToLower(w)) {
				title = true
				break
			}
		}
		if !title {
			return true
		}
	}
	return false
}
