package experiment

import (
	"fmt"
	"math"

	"deidcorpus/pipeline"
)

// SplitNames are the splits AssignSplits fills, in the order its parts name them.
var SplitNames = [3]string{"train", "dev", "test"}

// AssignSplits puts every document into train, dev or test, whole patients
// at a time (documents without a patient count as patients of their own):
// out[i] is docs[i]'s split. parts are train's, dev's and test's, either
// shares of the documents (each in [0, 1], summing to 1) or numbers of
// patients (whole numbers summing to the patients). Patients are taken in
// an order fixed by the seed; with shares each goes to the split furthest
// below its share of the documents so far, with numbers the first go to
// train, the next to dev, the rest to test. The assignment depends only on
// the documents, the parts and the seed.
func AssignSplits(docs []pipeline.Document, parts [3]float64, seed uint64) ([]string, error) {
	groups := groupByPatient(docs)
	sum := 0.0
	whole := true
	for i, p := range parts {
		if p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("%s: %g is negative or not a number", SplitNames[i], p)
		}
		sum += p
		whole = whole && p == math.Trunc(p)
	}
	counts := whole && sum > 1
	switch {
	case counts && int(sum) != len(groups):
		return nil, fmt.Errorf("the numbers of patients %g, %g and %g add up to %.4g; the corpus has %d patients "+
			"(or give shares that add up to 1)", parts[0], parts[1], parts[2], sum, len(groups))
	case !counts && math.Abs(sum-1) > 1e-6:
		return nil, fmt.Errorf("the shares %g, %g and %g add up to %.4g, not 1 (or give numbers of patients that add up to the corpus's %d)",
			parts[0], parts[1], parts[2], sum, len(groups))
	}
	out := make([]string, len(docs))
	have := [3]float64{}
	for n, g := range shuffled(groups, seed) {
		split := 0
		switch {
		case counts && float64(n) >= parts[0]+parts[1]:
			split = 2
		case counts && float64(n) >= parts[0]:
			split = 1
		case !counts:
			best := math.Inf(-1)
			for i, p := range parts {
				if deficit := p*float64(len(docs)) - have[i]; p > 0 && deficit > best {
					split, best = i, deficit
				}
			}
		}
		have[split] += float64(len(g.docs))
		for _, d := range g.docs {
			out[d] = SplitNames[split]
		}
	}
	return out, nil
}
