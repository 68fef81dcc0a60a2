package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
	"deidcorpus/pipeline/synth"
)

// longitudinal is a synthetic corpus of patients with 1 to 6 notes each.
func longitudinal(t *testing.T, patients int) []pipeline.Document {
	t.Helper()
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: patients, Seed: 7, NotesMin: 1, NotesMax: 6}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	return docs
}

func patientsOf(docs []pipeline.Document) map[string]bool {
	out := map[string]bool{}
	for _, d := range docs {
		out[d.Patient] = true
	}
	return out
}

func TestCrossValidationKeepsPatientsTogether(t *testing.T) {
	docs := longitudinal(t, 60)
	require.Greater(t, len(docs), 120, "a longitudinal corpus: several notes a patient")
	largest := 0
	perPatient := map[string]int{}
	for _, d := range docs {
		perPatient[d.Patient]++
		largest = max(largest, perPatient[d.Patient])
	}
	for _, k := range []int{2, 5, 10} {
		for _, seed := range []uint64{1, 2, 3} {
			assign, err := AssignFolds(docs, k, seed)
			require.NoError(t, err)
			foldOf := map[string]int{}
			size := make([]int, k)
			for i, d := range docs {
				if f, ok := foldOf[d.Patient]; ok {
					require.Equal(t, f, assign[i], "patient %s is in folds %d and %d", d.Patient, f, assign[i])
				}
				foldOf[d.Patient] = assign[i]
				size[assign[i]]++
			}
			lo, hi := size[0], size[0]
			for _, s := range size {
				lo, hi = min(lo, s), max(hi, s)
			}
			assert.LessOrEqual(t, hi-lo, largest, "k=%d seed=%d: folds balanced by document count: %v", k, seed, size)
			assert.Positive(t, lo)

			again, err := AssignFolds(docs, k, seed)
			require.NoError(t, err)
			assert.Equal(t, assign, again, "deterministic for a seed")

			folds, err := Folds(docs, k, seed)
			require.NoError(t, err)
			seen := 0
			for _, f := range folds {
				seen += len(f.Test)
				assert.Equal(t, len(docs), len(f.Train)+len(f.Test))
				train := patientsOf(f.Train)
				for p := range patientsOf(f.Test) {
					assert.False(t, train[p], "patient %s trains and tests in one fold", p)
				}
			}
			assert.Equal(t, len(docs), seen, "every document is tested once")
		}
	}
	a, _ := AssignFolds(docs, 5, 1)
	b, _ := AssignFolds(docs, 5, 2)
	assert.NotEqual(t, a, b, "the seed matters")

	_, err := AssignFolds(docs, 1, 1)
	assert.Error(t, err)
	_, err = AssignFolds(docs[:3], 10, 1)
	assert.Error(t, err, "more folds than patients")
}

func TestSplitByPatient(t *testing.T) {
	docs := longitudinal(t, 40)
	train, test, err := SplitByPatient(docs, 0.2, 9)
	require.NoError(t, err)
	assert.Equal(t, len(docs), len(train)+len(test))
	trainP := patientsOf(train)
	for p := range patientsOf(test) {
		assert.False(t, trainP[p], "patient %s on both sides", p)
	}
	share := float64(len(test)) / float64(len(docs))
	assert.InDelta(t, 0.2, share, 0.08)
	train2, test2, _ := SplitByPatient(docs, 0.2, 9)
	assert.Equal(t, test, test2)
	assert.Equal(t, train, train2)
	_, _, err = SplitByPatient(docs, 1, 9)
	assert.Error(t, err)
}

func TestCurveSubsetsNest(t *testing.T) {
	docs := longitudinal(t, 50)
	subsets, err := CurveSubsets(docs, 10, 4)
	require.NoError(t, err)
	require.Len(t, subsets, 10)
	var prev map[string]bool
	for i, s := range subsets {
		assert.Equal(t, (i+1)*10, s.Percent)
		ids := map[string]bool{}
		for _, d := range s.Docs {
			ids[d.ID] = true
		}
		for id := range prev {
			assert.True(t, ids[id], "%d%% lacks document %s of the step before", s.Percent, id)
		}
		assert.Greater(t, len(ids), len(prev), "each step adds documents")
		// Whole patients only.
		in := patientsOf(s.Docs)
		n := 0
		for _, d := range docs {
			if in[d.Patient] {
				n++
			}
		}
		assert.Equal(t, n, len(s.Docs), "%d%% takes whole patients", s.Percent)
		want := float64(s.Percent) / 100 * float64(len(docs))
		assert.GreaterOrEqual(t, float64(len(s.Docs)), math.Ceil(want)-0.5)
		assert.Less(t, float64(len(s.Docs)), want+6, "no more than one patient over the share")
		prev = ids
	}
	assert.Len(t, subsets[9].Docs, len(docs))

	// Share agrees with the curve's first step for the same seed.
	part, err := Share(docs, 0.1, 4)
	require.NoError(t, err)
	assert.Equal(t, subsets[0].Docs, part)
}

// oracle is a fake tagger that knows the gold of every document and returns
// it without spans of the dropped types. It checks that it never tags a
// document it was trained on.
func oracle(t *testing.T, gold []pipeline.Document, drop string, trainings *int) TrainFunc {
	byID := map[string]pipeline.Document{}
	for _, d := range gold {
		byID[d.ID] = d
	}
	return func(ctx context.Context, train []pipeline.Document) (TagFunc, error) {
		*trainings++
		seen := map[string]bool{}
		for _, d := range train {
			seen[d.ID] = true
		}
		return func(ctx context.Context, docs []pipeline.Document) ([]pipeline.Document, error) {
			out := make([]pipeline.Document, len(docs))
			for i, d := range docs {
				if seen[d.ID] {
					t.Errorf("document %s is tagged by a model trained on it", d.ID)
				}
				if len(d.Spans) != 0 {
					t.Errorf("document %s reached the tagger with its gold spans", d.ID)
				}
				out[i] = d
				for _, s := range byID[d.ID].Spans {
					if s.Category != drop {
						out[i].Spans = append(out[i].Spans, s)
					}
				}
			}
			return out, nil
		}, nil
	}
}

func countSpans(docs []pipeline.Document, category string) (all, cat int) {
	for _, d := range docs {
		for _, s := range d.Spans {
			all++
			if s.Category == category {
				cat++
			}
		}
	}
	return all, cat
}

func TestRunWithFakeTaggerGivesKnownScores(t *testing.T) {
	docs := longitudinal(t, 20)
	all, dates := countSpans(docs, "DATE")
	require.Positive(t, dates)

	plan, err := CrossValidation("synth", docs, 4, 1)
	require.NoError(t, err)
	trainings := 0
	var steps []string
	res, err := Run(context.Background(), plan, oracle(t, docs, "DATE", &trainings), Options{Seed: 3, Bootstrap: 200,
		Progress: func(done, total int, msg string) { steps = append(steps, fmt.Sprintf("%d/%d %s", done, total, msg)) }})
	require.NoError(t, err)
	assert.Equal(t, 4, trainings)
	require.Len(t, res.Rows, 1)
	row := res.Rows[0]
	wantR := float64(all-dates) / float64(all)
	assert.Equal(t, len(docs), row.TestDocuments)
	assert.Equal(t, all-dates, row.Counts.TP)
	assert.Equal(t, 0, row.Counts.FP)
	assert.Equal(t, dates, row.Counts.FN)
	assert.InDelta(t, 1, row.Precision, 1e-12)
	assert.InDelta(t, wantR, row.Recall, 1e-12)
	assert.InDelta(t, 2*wantR/(1+wantR), row.F1, 1e-12)
	assert.InDelta(t, 1, row.PrecisionCI.Low, 1e-12)
	assert.LessOrEqual(t, row.RecallCI.Low, row.Recall)
	assert.GreaterOrEqual(t, row.RecallCI.High, row.Recall)
	assert.Less(t, row.F1CI.Low, row.F1CI.High)
	for _, c := range row.Categories {
		if c.Category == "DATE" {
			assert.Equal(t, 0.0, c.Recall)
		} else {
			assert.Equal(t, 1.0, c.F1, c.Category)
		}
	}
	assert.Equal(t, "0/9 synth 4-fold CV: training on fold 1 (", steps[0][:len("0/9 synth 4-fold CV: training on fold 1 (")])
	assert.Equal(t, "9/9 done", steps[len(steps)-1])
}

func TestORDesignSharesModelsAndTestsSignificance(t *testing.T) {
	docs := longitudinal(t, 30)
	train, test, err := SplitByPatient(docs, 0.3, 1)
	require.NoError(t, err)
	o := Data{Name: "O", Train: train, Test: test}
	// A twin whose ids match; its "tagger" is perfect while O's drops dates.
	rdocs := make([]pipeline.Document, len(docs))
	copy(rdocs, docs)
	rtrain, rtest := PartitionLike(rdocs, o)
	r := Data{Name: "R", Train: rtrain, Test: rtest}
	plan, err := OriginalResynthesized(o, r)
	require.NoError(t, err)
	require.Len(t, plan.Configurations, 4)

	trainings := 0
	perfect := oracle(t, docs, "", &trainings)
	lossy := oracle(t, docs, "DATE", &trainings)
	// The model trained on O drops dates; the one trained on R is perfect.
	fake := func(ctx context.Context, tr []pipeline.Document) (TagFunc, error) {
		if sameIDs(tr, train) && &tr[0] == &train[0] {
			return lossy(ctx, tr)
		}
		return perfect(ctx, tr)
	}
	res, err := Run(context.Background(), plan, fake, Options{Seed: 1, Bootstrap: 100, Shuffles: 499})
	require.NoError(t, err)
	assert.Equal(t, 2, trainings, "each training set is trained once")
	f1 := map[string]float64{}
	for _, row := range res.Rows {
		f1[row.Configuration] = row.F1
	}
	assert.Equal(t, 1.0, f1["R⇒R"])
	assert.Equal(t, 1.0, f1["R⇒O"])
	assert.Less(t, f1["O⇒O"], 1.0)
	assert.Equal(t, f1["O⇒O"], f1["O⇒R"])
	require.Len(t, res.Tests, 2)
	for _, s := range res.Tests {
		assert.Equal(t, len(test), s.Documents)
		assert.True(t, s.Significant, "%s vs %s: p=%g", s.A, s.B, s.P)
		assert.InDelta(t, f1[s.B]-f1[s.A], s.Diff, 1e-12)
		assert.Greater(t, len(s.Tests), 1, "per-category tests too")
		assert.InDelta(t, 0.05/float64(len(s.Tests)), s.Threshold, 1e-12)
	}
	assert.Equal(t, "O⇒O", res.Tests[0].A)
	assert.Equal(t, "R⇒O", res.Tests[0].B)

	_, err = OriginalResynthesized(o, Data{Name: "R", Train: rtest, Test: rtrain})
	assert.Error(t, err, "twins split differently")
	// The error names documents on each side that the other lacks.
	_, err = OriginalResynthesized(o, Data{Name: "R", Train: rtrain[1:], Test: rtest})
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "their training documents differ, only "+o.Name+" has "+rtrain[0].ID)
	}
}

func TestCrossAndCurvePlans(t *testing.T) {
	x := longitudinal(t, 12)
	for i := range x { // another corpus, other ids
		x[i].ID, x[i].Patient = "x"+x[i].ID, "x"+x[i].Patient
	}
	ydocs := longitudinal(t, 30)
	// Y in a coarser label set: names merged, as Deleger harmonized.
	m, err := phi.ParseMapping("names", []byte("@default keep\nNAME/*  NAME/NAME\n"))
	require.NoError(t, err)
	ydocs, err = Harmonize(ydocs, m)
	require.NoError(t, err)
	xdocs, err := Harmonize(x, m)
	require.NoError(t, err)
	ytrain, ytest, err := SplitByPatient(ydocs, 0.25, 2)
	require.NoError(t, err)
	y := Data{Name: "Y", Train: ytrain, Test: ytest}
	X := Data{Name: "X", Train: xdocs}

	plan, err := Cross(X, y, []float64{0.5}, 1)
	require.NoError(t, err)
	var names []string
	for _, c := range plan.Configurations {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"X⇒Y", "Y⇒Y", "50% Y⇒Y", "X + 50% Y⇒Y"}, names)
	mixed := plan.Configurations[3].Runs[0].Train
	assert.Len(t, mixed, len(xdocs)+len(plan.Configurations[2].Runs[0].Train))
	assert.Equal(t, "X/"+xdocs[0].ID, mixed[0].ID, "the other corpus's ids are kept apart")
	assert.Equal(t, "X/"+xdocs[0].Patient, mixed[0].Patient)

	trainings := 0
	res, err := Run(context.Background(), plan, oracle(t, ydocs, "", &trainings), Options{Bootstrap: 50, Shuffles: 99})
	require.NoError(t, err)
	for _, row := range res.Rows {
		assert.Equal(t, 1.0, row.F1, row.Configuration)
		for _, c := range row.Categories {
			if c.Category == "NAME" {
				assert.Positive(t, c.Counts.TP)
			}
		}
		for _, d := range plan.Configurations[0].Runs[0].Test {
			for _, s := range d.Spans {
				if s.Category == "NAME" {
					assert.Equal(t, "NAME", s.Type, "names are merged")
				}
			}
		}
	}
	require.Len(t, res.Tests, 2)
	assert.False(t, res.Tests[0].Significant, "identical systems do not differ")

	curve, err := LearningCurve(y, &X, 10, 1)
	require.NoError(t, err)
	assert.Len(t, curve.Configurations, 20)
	assert.Len(t, curve.Comparisons, 9+10)
	assert.Equal(t, "10% Y", curve.Configurations[0].Name)
	assert.Equal(t, "X + 100% Y", curve.Configurations[19].Name)
}

func TestRunIsCancellable(t *testing.T) {
	docs := longitudinal(t, 10)
	plan, err := CrossValidation("synth", docs, 5, 1)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	trained := 0
	_, err = Run(ctx, plan, func(ctx context.Context, train []pipeline.Document) (TagFunc, error) {
		trained++
		cancel()
		return func(ctx context.Context, docs []pipeline.Document) ([]pipeline.Document, error) {
			return nil, ctx.Err()
		}, nil
	}, Options{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), err)
	assert.Equal(t, 1, trained)
}

func TestRenderMarkdown(t *testing.T) {
	docs := longitudinal(t, 12)
	train, test, err := SplitByPatient(docs, 0.3, 1)
	require.NoError(t, err)
	o := Data{Name: "O", Train: train, Test: test}
	rtrain, rtest := PartitionLike(docs, o)
	plan, err := OriginalResynthesized(o, Data{Name: "R", Train: rtrain, Test: rtest})
	require.NoError(t, err)
	n := 0
	res, err := Run(context.Background(), plan, oracle(t, docs, "DATE", &n), Options{Bootstrap: 50, Shuffles: 99})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, RenderMarkdown(&b, res))
	out := b.String()
	assert.Contains(t, out, "| O⇒O | O train | O test |")
	assert.Contains(t, out, "| O⇒O | R⇒O |")
	assert.Contains(t, out, "P [95% CI]")
}
