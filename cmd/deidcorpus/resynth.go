package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"

	"deidcorpus/apperr"
	"deidcorpus/ent/job"
	"deidcorpus/internal/strictjson"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/phi"
	"deidcorpus/pipeline/resources"
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
			policy, err := readPolicyFile(*policyFile)
			if err != nil {
				return err
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

// readPolicyFile reads a policy file as the job's policy object. A mapping
// file or a directory of a site's lists that it names (relative to the
// working directory) is read here, on the user's machine, into the text the
// policy then carries (mappingText, resourceFiles): the server reads no path.
// Errors name the policy file, and the line or field, or the mapping file
// and its line.
func readPolicyFile(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	invalid := func(err error) error { return apperr.New(apperr.Invalid, "%s: %v", path, err) }
	// Fields and syntax first, so that an error has the file's own lines.
	if err := strictjson.Decode(data, &surrogate.Policy{}); err != nil {
		return nil, invalid(fmt.Errorf("%w: %w", surrogate.ErrPolicy, err))
	}
	var policy map[string]any
	if err := json.Unmarshal(data, &policy); err != nil || policy == nil {
		return nil, invalid(fmt.Errorf("%w: want a JSON object", surrogate.ErrPolicy))
	}
	if err := inlineMapping(policy); err != nil {
		return nil, invalid(err)
	}
	if err := inlineResources(policy); err != nil {
		return nil, invalid(err)
	}
	inlined, err := json.Marshal(policy)
	if err != nil {
		return nil, invalid(err)
	}
	if _, err := surrogate.ParsePolicy(inlined); err != nil {
		return nil, invalid(err)
	}
	return policy, nil
}

// inlineMapping replaces a policy's mapping file by its text.
func inlineMapping(policy map[string]any) error {
	arg, _ := policy["mapping"].(string)
	if arg == "" || arg == "auto" || arg == "none" {
		return nil
	}
	_, text, label, err := phi.ReadMappingArg(arg)
	if err != nil || text == "" { // a built-in mapping's name stays as it is
		return err
	}
	if _, err := phi.ResolveMapping("", text, label); err != nil {
		return err // names the mapping file and its line
	}
	delete(policy, "mapping")
	policy["mappingText"] = text
	return nil
}

// inlineResources replaces a policy's directory of a site's lists by their
// text, checked against the policy's language's pack (English when auto).
func inlineResources(policy map[string]any) error {
	dir, _ := policy["resources"].(string)
	if dir == "" || slices.Contains(resources.Languages(), dir) {
		return nil
	}
	if _, both := policy["resourceFiles"]; both {
		return fmt.Errorf("%w: resources names a directory and resourceFiles are given: give one", surrogate.ErrPolicy)
	}
	files, err := resources.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%w: resources: %w", surrogate.ErrPolicy, err)
	}
	lang, _ := policy["language"].(string)
	if !slices.Contains(resources.Languages(), lang) {
		lang = "en"
	}
	if _, err := resources.LoadText(files, lang); err != nil {
		return fmt.Errorf("%w: resources %s: %w", surrogate.ErrPolicy, dir, err) // names the list and its line
	}
	delete(policy, "resources")
	policy["resourceFiles"] = files
	return nil
}
