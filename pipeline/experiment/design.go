package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
)

// Plan is an experiment ready to run: configurations and the pairs of them to
// test for significance.
type Plan struct {
	Kind           string          `json:"kind"`
	Configurations []Configuration `json:"configurations"`
	// Comparisons name pairs of configurations (A, B) tested on the same gold
	// documents; the test reports B's F1 minus A's.
	Comparisons [][2]string `json:"comparisons,omitempty"`
}

// Configuration is one row of an experiment's table: a training set (or, for
// cross-validation, one per fold) and the gold documents its model tags. The
// predictions of all its runs are pooled and scored together.
type Configuration struct {
	Name  string      `json:"name"`
	Train string      `json:"train"` // what it trains on, for the table
	Test  string      `json:"test"`  // what it is tested on
	Runs  []TrainTest `json:"-"`
}

// TrainTest is one training and the gold documents its model is tested on.
// Runs with the same Key train the same model: it is trained once and reused.
type TrainTest struct {
	Key   string
	Train []pipeline.Document
	Test  []pipeline.Document
}

// Data is one corpus's side of an experiment: its name and its training and
// test documents, with gold spans.
type Data struct {
	Name  string
	Train []pipeline.Document
	Test  []pipeline.Document
	// TrainLabel and TestLabel describe the two parts in result tables;
	// default Name + " train" and Name + " test".
	TrainLabel, TestLabel string
}

func (d Data) trainLabel() string {
	if d.TrainLabel != "" {
		return d.TrainLabel
	}
	return d.Name + " train"
}

func (d Data) testLabel() string {
	if d.TestLabel != "" {
		return d.TestLabel
	}
	return d.Name + " test"
}

// Harmonize maps every document's spans through a tag-set mapping (Deleger
// 2.3.3: classes merged, relabelled or dropped so that two corpora share one
// label set). A nil mapping returns the documents as they are.
func Harmonize(docs []pipeline.Document, m *phi.Mapping) ([]pipeline.Document, error) {
	if m == nil {
		return docs, nil
	}
	out := make([]pipeline.Document, len(docs))
	for i, d := range docs {
		md, err := m.Apply(d)
		if err != nil {
			return nil, err
		}
		out[i] = md
	}
	return out, nil
}

// CrossValidation is k-fold cross-validation over a corpus's documents, folds
// grouped by patient (see AssignFolds): one configuration whose k runs'
// predictions cover every document once.
func CrossValidation(name string, docs []pipeline.Document, k int, seed uint64) (*Plan, error) {
	folds, err := Folds(docs, k, seed)
	if err != nil {
		return nil, err
	}
	c := Configuration{Name: fmt.Sprintf("%s %d-fold CV", name, k),
		Train: fmt.Sprintf("%s, %d of %d folds", name, k-1, k), Test: fmt.Sprintf("%s, held-out fold", name)}
	for i, f := range folds {
		c.Runs = append(c.Runs, TrainTest{Key: fmt.Sprintf("fold %d", i+1), Train: f.Train, Test: f.Test})
	}
	return &Plan{Kind: "cv", Configurations: []Configuration{c}}, nil
}

func percentName(p int) string { return fmt.Sprintf("%d%%", p) }

// Cross trains on corpus x and tests on corpus y's test documents (Deleger
// Table 6), beside y's own training documents as the in-domain baseline; for
// each share (a fraction in (0, 1]) it adds that share of y's training
// documents, whole patients, to x's ("X + 10% Y", Deleger Figures 2-4).
// Both sides must already be in one label set (see Harmonize). Comparisons:
// each configuration against the in-domain baseline, and each "X + s Y"
// against "s Y" trained alone (does the other corpus help at that share?).
func Cross(x, y Data, shares []float64, seed uint64) (*Plan, error) {
	if len(x.Train) == 0 || len(y.Train) == 0 || len(y.Test) == 0 {
		return nil, errors.New("experiment: cross-corpus needs training documents on both sides and test documents of the target")
	}
	if x.Name == y.Name {
		return nil, fmt.Errorf("experiment: both sides are named %q", x.Name)
	}
	test := y.testLabel()
	base := y.Name + "⇒" + y.Name
	p := &Plan{Kind: "cross"}
	p.Configurations = append(p.Configurations,
		Configuration{Name: x.Name + "⇒" + y.Name, Train: x.trainLabel(), Test: test,
			Runs: []TrainTest{{Key: x.Name, Train: x.Train, Test: y.Test}}},
		Configuration{Name: base, Train: y.trainLabel(), Test: test,
			Runs: []TrainTest{{Key: y.Name, Train: y.Train, Test: y.Test}}})
	p.Comparisons = append(p.Comparisons, [2]string{base, x.Name + "⇒" + y.Name})
	for _, s := range shares {
		part, err := Share(y.Train, s, seed)
		if err != nil {
			return nil, err
		}
		pc := percentName(int(s*100 + 0.5))
		if s < 1 {
			alone := pc + " " + y.Name + "⇒" + y.Name
			p.Configurations = append(p.Configurations, Configuration{Name: alone,
				Train: pc + " of " + y.trainLabel(), Test: test,
				Runs: []TrainTest{{Key: pc + " " + y.Name, Train: part, Test: y.Test}}})
		}
		name := x.Name + " + " + pc + " " + y.Name + "⇒" + y.Name
		p.Configurations = append(p.Configurations, Configuration{Name: name,
			Train: x.trainLabel() + " + " + pc + " of " + y.trainLabel(), Test: test,
			Runs: []TrainTest{{Key: x.Name + " + " + pc + " " + y.Name, Train: concat(x.Name, x.Train, part), Test: y.Test}}})
		if s < 1 {
			p.Comparisons = append(p.Comparisons, [2]string{pc + " " + y.Name + "⇒" + y.Name, name})
		} else {
			p.Comparisons = append(p.Comparisons, [2]string{base, name})
		}
	}
	return p, nil
}

// LearningCurve trains on nested shares of y's training documents in equal
// steps (steps=10: 10%, 20%, ... 100%; see CurveSubsets) and tests each on
// y's test documents. With x (not nil), every step is also trained with all
// of x's training documents added (Deleger Figures 2-4: "new CCHMC + 10%
// increments of the i2b2 corpus"). Comparisons: each step against the one
// before it, and with x, "X + s Y" against "s Y".
func LearningCurve(y Data, x *Data, steps int, seed uint64) (*Plan, error) {
	if len(y.Test) == 0 {
		return nil, errors.New("experiment: a learning curve needs test documents")
	}
	subsets, err := CurveSubsets(y.Train, steps, seed)
	if err != nil {
		return nil, err
	}
	p := &Plan{Kind: "curve"}
	test := y.testLabel()
	prev := ""
	for _, s := range subsets {
		pc := percentName(s.Percent)
		name := pc + " " + y.Name
		p.Configurations = append(p.Configurations, Configuration{Name: name,
			Train: fmt.Sprintf("%s of %s (%d documents)", pc, y.trainLabel(), len(s.Docs)), Test: test,
			Runs: []TrainTest{{Key: name, Train: s.Docs, Test: y.Test}}})
		if prev != "" {
			p.Comparisons = append(p.Comparisons, [2]string{prev, name})
		}
		prev = name
		if x != nil {
			xname := x.Name + " + " + name
			p.Configurations = append(p.Configurations, Configuration{Name: xname,
				Train: fmt.Sprintf("%s + %s of %s", x.trainLabel(), pc, y.trainLabel()), Test: test,
				Runs: []TrainTest{{Key: xname, Train: concat(x.Name, x.Train, s.Docs), Test: y.Test}}})
			p.Comparisons = append(p.Comparisons, [2]string{name, xname})
		}
	}
	return p, nil
}

// OriginalResynthesized is Yeniterzi et al.'s design for a corpus O and its
// resynthesized twin R: train on O's or R's training documents and test on
// O's or R's test documents (O⇒O, R⇒R, O⇒R, R⇒O). Resynthesis keeps document
// ids, and both sides must be split alike: the same ids in both training sets
// and in both test sets. Comparisons are between configurations sharing gold
// documents: O⇒O against R⇒O (Deleger Table 5: training on the original
// against training on the new corpus, tested on the original), and R⇒R
// against O⇒R.
func OriginalResynthesized(o, r Data) (*Plan, error) {
	if len(o.Train) == 0 || len(o.Test) == 0 {
		return nil, errors.New("experiment: the original corpus needs training and test documents")
	}
	for _, side := range []struct {
		name string
		a, b []pipeline.Document
	}{{"training", o.Train, r.Train}, {"test", o.Test, r.Test}} {
		if !sameIDs(side.a, side.b) {
			return nil, fmt.Errorf("experiment: %s and %s are not split alike (the same document ids on each side): their %s documents differ, %s",
				o.Name, r.Name, side.name, idDifference(o.Name, side.a, r.Name, side.b))
		}
	}
	oo, rr, or, ro := "O⇒O", "R⇒R", "O⇒R", "R⇒O"
	cfg := func(name string, tr, te Data) Configuration {
		return Configuration{Name: name, Train: tr.trainLabel(), Test: te.testLabel(),
			Runs: []TrainTest{{Key: tr.Name, Train: tr.Train, Test: te.Test}}}
	}
	return &Plan{Kind: "or",
		Configurations: []Configuration{cfg(oo, o, o), cfg(rr, r, r), cfg(or, o, r), cfg(ro, r, o)},
		Comparisons:    [][2]string{{oo, ro}, {rr, or}},
	}, nil
}

// PartitionLike splits docs as a twin corpus is split: into the documents
// whose ids are in like.Train and those in like.Test (others are left out).
func PartitionLike(docs []pipeline.Document, like Data) (train, test []pipeline.Document) {
	in := map[string]int{}
	for _, d := range like.Train {
		in[d.ID] = 1
	}
	for _, d := range like.Test {
		in[d.ID] = 2
	}
	for _, d := range docs {
		switch in[d.ID] {
		case 1:
			train = append(train, d)
		case 2:
			test = append(test, d)
		}
	}
	return train, test
}

func sameIDs(a, b []pipeline.Document) bool {
	ids := func(docs []pipeline.Document) []string {
		out := make([]string, len(docs))
		for i, d := range docs {
			out[i] = d.ID
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(ids(a), ids(b))
}

// idDifference says which document ids one of two lists holds and the
// other lacks: the first few of each.
func idDifference(aName string, a []pipeline.Document, bName string, b []pipeline.Document) string {
	only := func(x, y []pipeline.Document) []string {
		in := map[string]bool{}
		for _, d := range y {
			in[d.ID] = true
		}
		var out []string
		for _, d := range x {
			if !in[d.ID] {
				out = append(out, d.ID)
			}
		}
		slices.Sort(out)
		return out
	}
	var parts []string
	for _, side := range []struct {
		name string
		ids  []string
	}{{aName, only(a, b)}, {bName, only(b, a)}} {
		if n := len(side.ids); n > 0 {
			shown := strings.Join(side.ids[:min(n, 3)], ", ")
			if n > 3 {
				shown += fmt.Sprintf(" and %d more", n-3)
			}
			parts = append(parts, fmt.Sprintf("only %s has %s", side.name, shown))
		}
	}
	if len(parts) == 0 {
		return "a document appears twice on one side"
	}
	return strings.Join(parts, "; ")
}

// concat joins two corpora's training documents. The first corpus's document
// and patient ids are prefixed with its name, so that a patient of one corpus
// is never taken for the patient of the same id in the other.
func concat(name string, a, b []pipeline.Document) []pipeline.Document {
	out := make([]pipeline.Document, 0, len(a)+len(b))
	for _, d := range a {
		d.ID = name + "/" + d.ID
		if d.Patient != "" {
			d.Patient = name + "/" + d.Patient
		}
		out = append(out, d)
	}
	return append(out, b...)
}
