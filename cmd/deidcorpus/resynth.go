package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"deidcorpus/apperr"
	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/surrogate"
)

func init() {
	register(&command{
		name:    "resynth",
		summary: "write a surrogate corpus: PHI replaced by consistent surrogates, checked for leaks; a failed check quarantines it",
		args:    "--corpus NAME --out NAME [--set gold] [--policy FILE] [--seed N] [--async]",
		examples: []string{
			"deidcorpus resynth --corpus demo --out demo-surrogate --seed 7",
			"deidcorpus resynth --corpus notes --out notes-r --policy policy.json --async",
			"deidcorpus resynth --corpus big --out big-r --parts 4 --db postgres://...   # 4 worker processes share it",
		},
		setup: setupResynth,
		subs:  []*command{resynthReport, resynthResolve, resynthIDs},
	})
}

func setupResynth(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "source corpus (required)")
	out := fs.String("out", "", "surrogate corpus to write, or to add the source's new notes to (required)")
	set := fs.String("set", "gold", "the source's annotation set")
	policyFile := fs.String("policy", "", "resynthesis policy (JSON; default: the built-in policy from the papers)")
	seed := fs.Uint64("seed", 1, "random seed: the same input, policy and seed give the same output byte for byte")
	async := fs.Bool("async", false, "queue the job, print its id and return")
	parts := fs.Int("parts", 0, "split the job into N parts of whole patients that every worker process takes (2-64; each reads the source again: for workers on machines of their own, on PostgreSQL)")
	return func(ctx context.Context, args []string) error {
		if *corpus == "" || *out == "" {
			return usageErr("--corpus and --out are required")
		}
		p := jobs.ResynthesizeParams{Corpus: *corpus, Out: *out, Set: *set, Seed: *seed, Parts: *parts}
		if *policyFile != "" {
			data, err := os.ReadFile(*policyFile)
			if err != nil {
				return apperr.Wrap(apperr.Invalid, err)
			}
			// Read here first so that an error names the file and its lines.
			if _, err := surrogate.ParsePolicy(data); err != nil {
				return apperr.New(apperr.Invalid, "%s: %v", *policyFile, err)
			}
			var policy map[string]any
			if err := json.Unmarshal(data, &policy); err != nil {
				return apperr.New(apperr.Invalid, "%s: %v", *policyFile, err)
			}
			p.Policy = policy
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.resynth", map[string]any{"corpus": *corpus, "out": *out, "seed": *seed})
		if err != nil {
			return err
		}
		defer st.Close()
		j, err := runJob(ctx, e, st, p, *async)
		if errors.Is(err, surrogate.ErrPolicy) && *policyFile != "" {
			return apperr.New(apperr.Invalid, "%s: %v", *policyFile, err) // its names, checked against the corpus
		}
		if err != nil || *async {
			return err
		}
		check, _ := j.Result["check"].(map[string]any)
		fmt.Fprintf(e.stdout, "resynthesized %s into %q (job %d)\n", counted(j.Result["documents"], "document"), *out, j.ID)
		reused, _ := j.Result["reused"].([]any)
		for _, r := range reused {
			r, _ := r.(map[string]any)
			fmt.Fprintf(e.stdout, "reused %v mappings and %v date shifts of job %v (seed %v, %v), not drawn from seed %d\n",
				number(r["mappings"]), number(r["shifts"]), number(r["job"]), number(r["seed"]), r["corpus"], *seed)
		}
		if check != nil {
			fmt.Fprintf(e.stdout, "check: ok=%v, %v spans, %v replaced, %v misaligned, %v leaks, %v source ids, %v inconsistent, %v interval errors, %v dates checked, %v unannotated, %v propagated, %v for review\n",
				check["ok"], number(check["spans"]), number(check["replaced"]), number(check["misaligned"]), number(check["leaks"]), number(check["identifiers"]),
				number(check["inconsistent"]), number(check["intervalErrors"]), number(check["datesChecked"]), number(check["unannotated"]),
				number(check["propagated"]), number(check["review"]))
			if n := number(check["unannotated"]); n != "0" && n != "<nil>" {
				fmt.Fprintf(e.stdout, "%s: original values outside the gold spans, copied unchanged (the source's annotation missed them); "+
					"see them with: deidcorpus resynth report %s\n", counted(check["unannotated"], "unannotated find"), *out)
			}
			// Unannotated finds pass the check but quarantine the corpus.
			if ok, _ := check["ok"].(bool); !ok || j.Status == job.StatusCheckFailed {
				fmt.Fprintf(e.stdout, "job %d: check failed; %q is quarantined (%s) until a rerun into it passes or a curator runs: deidcorpus resynth resolve %s --reason ...\n",
					j.ID, *out, counted(j.Result["checkFindings"], "unresolved finding"), *out)
				return checkFailed(*out, check, j.Result["checkReport"])
			}
		}
		return nil
	}
}

// number prints a JSON number from a job result (decoded as float64) as an
// integer when it is one: ids are too large for %v's default form.
