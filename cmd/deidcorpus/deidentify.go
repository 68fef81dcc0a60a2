package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"deidcorpus/ent"
	"deidcorpus/jobs"
)

func init() {
	register(&command{
		name:    "deidentify",
		summary: "the hospital's path in one job: tag notes nobody annotated at a model's privacy point, resynthesize, check, and record the risk left",
		args:    "--corpus NOTES --model M --out NAME [--policy FILE] [--target-recall R] [--seed N] [--async] [--json]",
		examples: []string{
			"deidcorpus deidentify --corpus notes --model crf1 --out notes-deid",
			"deidcorpus deidentify --corpus notes --model crf1 --out notes-deid --target-recall 0.998 --policy policy.json --seed 7",
		},
		setup: setupDeidentify,
	})
}

func setupDeidentify(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "the notes to de-identify (required)")
	model := fs.String("model", "", "a built-in model with a calibrated privacy point (required; deidcorpus models calibrate adds one)")
	out := fs.String("out", "", "the surrogate corpus to write; a new name (required)")
	policyFile := fs.String("policy", "", "resynthesis policy (JSON; default: the built-in policy); its maxNoteLeakRate is the ceiling the release gate applies")
	target := fs.Float64("target-recall", 0, "the recall of PHI characters to tag at (default: the model's calibrated one); not below it, where the risk was measured")
	seed := fs.Uint64("seed", 1, "random seed of the surrogates: the same notes, model, policy and seed give the same output")
	async := fs.Bool("async", false, "queue the job, print its id and return")
	asJSON := jsonFlag(fs)
	return func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usageErr("deidentify takes no arguments (see --corpus, --model, --out)")
		}
		if *corpus == "" || *model == "" || *out == "" {
			return usageErr("--corpus, --model and --out are required")
		}
		p := jobs.DeidentifyParams{Corpus: *corpus, Model: *model, Out: *out, TargetRecall: *target, Seed: *seed}
		if *policyFile != "" {
			policy, err := readPolicyFile(*policyFile)
			if err != nil {
				return err
			}
			p.Policy = policy
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.deidentify", map[string]any{"corpus": *corpus, "model": *model, "out": *out, "seed": *seed})
		if err != nil {
			return err
		}
		defer st.Close()
		return runSurrogateJob(ctx, e, st, p, *policyFile, *out, *async, *asJSON, func(j *ent.Job) (*jobs.ResynthesizeResult, error) {
			r, err := jobs.DecodeResult[jobs.DeidentifyResult](j)
			if r == nil {
				return nil, err
			}
			return &r.Resynthesis, err
		})
	}
}

// summarizeDeidentify writes what a deidentify job made and the risk the
// surrogate corpus may still hold.
func summarizeDeidentify(w io.Writer, j *ent.Job, r *jobs.DeidentifyResult) {
	fmt.Fprintf(w, "tagged %s at the privacy point into set %s of %v\n", counted(r.Tagging.Documents, "document"), r.Tagging.SetName, j.Params["corpus"])
	summarizeResynth(w, j, &r.Resynthesis)
	k := r.Risk
	fmt.Fprintf(w, "risk left (the model's held-out estimate, target recall %g): %.1f values leaked per 1,000 (95%% CI %.1f-%.1f); "+
		"notes with a leak %.2f%% (%.2f-%.2f%%), with a direct identifier %.2f%% (%.2f-%.2f%%); span precision %.3f\n",
		k.TargetRecall, k.ValuesLeakedPer1000, k.ValuesLeakedPer1000CI.Low, k.ValuesLeakedPer1000CI.High,
		100*k.NoteLeakRate, 100*k.NoteLeakRateCI.Low, 100*k.NoteLeakRateCI.High,
		100*k.NoteDirectRate, 100*k.NoteDirectRateCI.Low, 100*k.NoteDirectRateCI.High, k.SpanPrecision)
	switch {
	case r.MaxNoteLeakRate != nil && k.NoteLeakRate > *r.MaxNoteLeakRate:
		fmt.Fprintf(w, "above the policy's maxNoteLeakRate %g: %q may be used here but not released for sharing\n", *r.MaxNoteLeakRate, r.CorpusName)
	case r.Shareable:
		fmt.Fprintf(w, "release it with: deidcorpus release create --corpus %s --name NAME --version 1.0.0 --share (its datasheet states this risk)\n", r.CorpusName)
	}
}
