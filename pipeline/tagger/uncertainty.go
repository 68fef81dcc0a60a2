package tagger

import (
	"context"
	"math"

	"deidcorpus/pipeline"
)

// Uncertainty is how unsure a model's CRF is of one document's labels: what
// active learning ranks documents by, so that the next one annotated is the
// one the model would learn most from.
type Uncertainty struct {
	Tokens int
	// Entropy is the document's total token entropy (Settles and Craven
	// 2008, "TTE"): the sum over its tokens of the entropy, in nats, of the
	// token's label marginals. Summed rather than averaged, so that a long
	// note with many doubtful tokens outranks a short one with one.
	Entropy float64
}

// Uncertainty scores each document by the CRF's per-token marginals
// (forward-backward, the same passes as training). Rules and
// post-processing are not applied: the score is the statistical model's
// doubt, which is what annotation teaches it.
func (m *Model) Uncertainty(ctx context.Context, docs []pipeline.Document, workers int) ([]Uncertainty, error) {
	tr := newTransitions(m.crf.w[m.crf.nState():], m.crf.L)
	out := make([]Uncertainty, len(docs))
	err := eachDocument(ctx, len(docs), workers, func(i int, tg *tagScratch) {
		p := m.marginals(&docs[i], tr, tg)
		out[i] = Uncertainty{Tokens: len(p) / m.crf.L, Entropy: tokenEntropy(p)}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// marginals returns the document's per-token label marginals, token t's
// at [t*L, (t+1)*L).
func (m *Model) marginals(doc *pipeline.Document, tr *transitions, tg *tagScratch) []float64 {
	df := m.ext.prepare(Tokenize(doc.Text), &tg.phrases)
	var s sequence
	s, tg.buf = m.sequenceOf(m.ext, df, &tg.words, tg.buf)
	if tg.ws == nil {
		tg.ws = newWorkspace(0, m.crf.L)
	}
	return m.crf.marginals(&s, tr, tg.ws)
}

// tokenEntropy sums the entropy of each token's marginals in p.
func tokenEntropy(p []float64) float64 {
	h := 0.0
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}
