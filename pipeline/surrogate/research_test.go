package surrogate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/pipeline/tagger"
)

// TestResearchValue measures what resynthesis costs the researchers a
// surrogate corpus is for (Yeniterzi et al. 2010; Deleger et al. 2014): a
// tagger trained on resynthesized MEDDOCAN train against one trained on the
// original, both scored strictly on dev, original (O) and resynthesized (R):
// O⇒O, R⇒R, O⇒R, R⇒O, with MEDDOCAN's own labels and in i2b2 form. Training
// takes minutes: it runs with DEIDCORPUS_LONG=1 (the README's figures).
func TestResearchValue(t *testing.T) {
	shared.Long(t, "train four taggers on MEDDOCAN train and score dev")
	for _, form := range []struct{ name, train, dev string }{
		{"own labels", "meddocan/corpus/train/xml", "meddocan/corpus/dev/xml"},
		{"i2b2 form", "meddocan-i2b2/train", "meddocan-i2b2/dev"},
	} {
		t.Run(form.name, func(t *testing.T) {
			otrain, odev := readDocs(t, form.train), readDocs(t, form.dev)
			rtrain, rdev := resynth(t, otrain, 11), resynth(t, odev, 12)
			models := map[string]*tagger.Model{}
			for name, docs := range map[string][]pipeline.Document{"O": otrain, "R": rtrain} {
				m, err := tagger.Train(context.Background(), docs, tagger.DefaultConfig(), nil)
				if err != nil {
					t.Fatal(err)
				}
				models[name] = m
			}
			f1 := map[string]float64{}
			var b strings.Builder
			for _, c := range []struct{ train, test string }{{"O", "O"}, {"R", "R"}, {"O", "R"}, {"R", "O"}} {
				test := odev
				if c.test == "R" {
					test = rdev
				}
				out, err := models[c.train].Tag(context.Background(), test, tagger.TagOptions{})
				if err != nil {
					t.Fatal(err)
				}
				pairs, _, _, err := evaluate.PairDocuments(test, out)
				if err != nil {
					t.Fatal(err)
				}
				s := evaluate.Meddocan(pairs).Subtask1
				f1[c.train+c.test] = s.F1
				if c.test == "O" { // where training on surrogates loses: per type
					var specs []evaluate.Spec
					for _, ty := range models[c.train].Types {
						specs = append(specs, evaluate.Spec{Label: ty.Type, Mode: evaluate.Strict, Type: ty.Type})
					}
					ms, err := evaluate.NewScorer(pairs, false).Run(specs)
					if err != nil {
						t.Fatal(err)
					}
					for _, me := range ms {
						t.Logf("%s⇒O %-34s gold %4d  P %.4f R %.4f F1 %.4f", c.train, me.Label, me.Counts.TP+me.Counts.FN, me.MicroPrecision, me.MicroRecall, me.MicroF1)
					}
				}
				fmt.Fprintf(&b, "| %s | %s⇒%s | %.4f | %.4f | %.4f |\n", form.name, c.train, c.test, s.Precision, s.Recall, s.F1)
			}
			loss := f1["OO"] - f1["RO"]
			t.Logf("%s: strict micro P, R, F1 on dev; loss O⇒O − R⇒O = %.4f\n%s", form.name, loss, b.String())
			// Issue 54 aims at 0.005 (Deleger et al. lost 0.009 with realistic
			// surrogates); measured 0.0084 (own labels) and 0.0116 (i2b2 form),
			// and small changes to the surrogates move it by about ±0.004. This
			// bar catches a regression, above that spread.
			if loss > 0.02 {
				t.Errorf("training on the surrogate corpus loses %.4f strict F1 on the original dev, more than 0.02", loss)
			}
		})
	}
}

func readDocs(t *testing.T, rel string) []pipeline.Document {
	files, err := formats.ReadPaths(shared.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := formats.ReadI2B2(files, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func resynth(t *testing.T, docs []pipeline.Document, seed uint64) []pipeline.Document {
	pol := surrogate.DefaultPolicy()
	res, err := surrogate.New(pol, nil, seed).Run(docs, surrogate.Store{})
	if err != nil {
		t.Fatal(err)
	}
	if rep := surrogate.Check(docs, res, pol); !rep.OK() {
		t.Fatalf("the surrogate corpus fails its check: %d leaks", len(rep.Leaks))
	}
	return res.Docs
}
