// Package experiment runs the evaluation designs of the de-identification
// papers over gold corpora (SPEC section 7): k-fold cross-validation grouped
// by patient, train-on-X-test-on-Y with tag-set harmonization (Deleger et al.
// 2014, section 2.3.3 and Table 6), learning curves in 10% steps (Deleger
// Table 2, Figures 2-4) and the four train/test combinations of an original
// corpus O and its resynthesized twin R (Yeniterzi et al. 2010: O=>O, R=>R,
// O=>R, R=>O; Deleger Table 5).
//
// A design is a Plan: named configurations, each one or more training runs
// whose test predictions are pooled, and the pairs of configurations to test
// for significance. Run executes a plan with any tagger given as two plain
// functions (train, then tag) and scores it with pipeline/evaluate: strict
// micro precision, recall and F1 (i2b2 semantics) with percentile bootstrap
// intervals over documents, and approximate randomization with Bonferroni
// correction between configurations tested on the same gold documents.
//
// Every split is grouped by patient: a patient's records are never on both
// sides of a split (a tagger that has seen a patient's name in training would
// otherwise be rewarded for memorizing it), and every split is deterministic
// for its seed. Nothing here touches storage.
package experiment

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"deidcorpus/pipeline"
)

// patientGroup is one patient's documents (their indices in the input).
type patientGroup struct {
	id   string
	docs []int
}

// patientKey is the grouping key of a document: its patient, or the document
// itself when the patient is unknown.
func patientKey(d pipeline.Document) string {
	if d.Patient == "" {
		return "\x00doc:" + d.ID
	}
	return d.Patient
}

// groupByPatient groups documents by patient, patients in id order and each
// patient's documents in input order.
func groupByPatient(docs []pipeline.Document) []patientGroup {
	idx := map[string]int{}
	var groups []patientGroup
	for i, d := range docs {
		k := patientKey(d)
		g, ok := idx[k]
		if !ok {
			g = len(groups)
			idx[k] = g
			groups = append(groups, patientGroup{id: k})
		}
		groups[g].docs = append(groups[g].docs, i)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].id < groups[j].id })
	return groups
}

// shuffled returns the patient groups in an order fixed by the seed.
func shuffled(groups []patientGroup, seed uint64) []patientGroup {
	out := slices.Clone(groups)
	rng := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909))
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// AssignFolds assigns every document to one of k folds for cross-validation:
// out[i] is the fold of docs[i]. All of a patient's documents go to the same
// fold (documents without a patient count as patients of their own); folds are
// balanced by document count (patients are placed largest first, each into
// the fold with the fewest documents so far, so fold sizes differ by at most
// the largest patient's record count); and the assignment depends only on
// the documents and the seed.
func AssignFolds(docs []pipeline.Document, k int, seed uint64) ([]int, error) {
	groups := groupByPatient(docs)
	switch {
	case k < 2:
		return nil, fmt.Errorf("experiment: cross-validation needs at least 2 folds, not %d", k)
	case k > len(groups):
		return nil, fmt.Errorf("experiment: %d folds but only %d patients", k, len(groups))
	}
	order := shuffled(groups, seed)
	sort.SliceStable(order, func(i, j int) bool { return len(order[i].docs) > len(order[j].docs) })
	size := make([]int, k)
	out := make([]int, len(docs))
	for _, g := range order {
		f := 0
		for i := 1; i < k; i++ {
			if size[i] < size[f] {
				f = i
			}
		}
		size[f] += len(g.docs)
		for _, d := range g.docs {
			out[d] = f
		}
	}
	return out, nil
}

// Fold is one cross-validation round: train on the other folds, test on this one.
type Fold struct {
	Train, Test []pipeline.Document
}

// Folds cuts documents into k patient-grouped folds (see AssignFolds), each
// with its training documents, in input order.
func Folds(docs []pipeline.Document, k int, seed uint64) ([]Fold, error) {
	assign, err := AssignFolds(docs, k, seed)
	if err != nil {
		return nil, err
	}
	folds := make([]Fold, k)
	for i, d := range docs {
		for f := range folds {
			if assign[i] == f {
				folds[f].Test = append(folds[f].Test, d)
			} else {
				folds[f].Train = append(folds[f].Train, d)
			}
		}
	}
	return folds, nil
}

// SplitByPatient holds out about testFraction of the documents, whole
// patients at a time, for testing; the rest is for training. Both keep the
// input order. The split depends only on the documents and the seed.
func SplitByPatient(docs []pipeline.Document, testFraction float64, seed uint64) (train, test []pipeline.Document, err error) {
	if !(testFraction > 0 && testFraction < 1) {
		return nil, nil, fmt.Errorf("experiment: test fraction %g is not between 0 and 1", testFraction)
	}
	groups := groupByPatient(docs)
	if len(groups) < 2 {
		return nil, nil, errors.New("experiment: a train/test split needs at least 2 patients")
	}
	want := int(math.Round(testFraction * float64(len(docs))))
	inTest := make([]bool, len(docs))
	n, taken := 0, 0
	for _, g := range shuffled(groups, seed) {
		if (n >= want && taken > 0) || taken == len(groups)-1 {
			break
		}
		for _, d := range g.docs {
			inTest[d] = true
		}
		n += len(g.docs)
		taken++
	}
	for i, d := range docs {
		if inTest[i] {
			test = append(test, d)
		} else {
			train = append(train, d)
		}
	}
	return train, test, nil
}

// Subset is one point of a learning curve: a share of the training documents.
type Subset struct {
	Percent int // the share asked for, 10, 20, ... 100
	Docs    []pipeline.Document
}

// CurveSubsets returns nested subsets of the documents at steps equal shares
// (steps=10 gives 10%, 20%, ... 100%): patients are taken in an order fixed
// by the seed until the share of documents is reached, so each subset holds
// whole patients, contains the one before it, and the last is every document.
// Each subset keeps the input order and has at least one patient.
func CurveSubsets(docs []pipeline.Document, steps int, seed uint64) ([]Subset, error) {
	if steps < 1 || steps > 100 {
		return nil, fmt.Errorf("experiment: %d learning-curve steps out of range [1, 100]", steps)
	}
	groups := groupByPatient(docs)
	if len(groups) == 0 {
		return nil, errors.New("experiment: no documents for a learning curve")
	}
	order := shuffled(groups, seed)
	rank := make([]int, len(docs)) // position of the document's patient in the order
	for r, g := range order {
		for _, d := range g.docs {
			rank[d] = r
		}
	}
	out := make([]Subset, steps)
	taken, n := 0, 0
	for s := range steps {
		want := int(math.Ceil(float64(s+1) / float64(steps) * float64(len(docs))))
		if s == steps-1 {
			want = len(docs)
		}
		for taken < len(order) && (n < want || taken == 0) {
			n += len(order[taken].docs)
			taken++
		}
		sub := Subset{Percent: (s + 1) * 100 / steps}
		for i, d := range docs {
			if rank[i] < taken {
				sub.Docs = append(sub.Docs, d)
			}
		}
		out[s] = sub
	}
	return out, nil
}

// Share returns about a fraction of the documents, whole patients, chosen by
// the seed (the first subset of that size of a learning curve).
func Share(docs []pipeline.Document, fraction float64, seed uint64) ([]pipeline.Document, error) {
	if !(fraction > 0 && fraction <= 1) {
		return nil, fmt.Errorf("experiment: share %g is not in (0, 1]", fraction)
	}
	if fraction == 1 {
		return docs, nil
	}
	groups := groupByPatient(docs)
	want := int(math.Ceil(fraction * float64(len(docs))))
	keep := make([]bool, len(docs))
	n := 0
	for _, g := range shuffled(groups, seed) {
		if n >= want && n > 0 {
			break
		}
		for _, d := range g.docs {
			keep[d] = true
		}
		n += len(g.docs)
	}
	var out []pipeline.Document
	for i, d := range docs {
		if keep[i] {
			out = append(out, d)
		}
	}
	return out, nil
}
