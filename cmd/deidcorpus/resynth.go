package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/job"
	"deidcorpus/internal/strictjson"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/phi"
	"deidcorpus/pipeline/resources"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/store"
)

func init() {
	register(&command{
		name:    "resynth",
		summary: "write a surrogate corpus: PHI replaced by consistent surrogates, checked for leaks; a failed check quarantines it",
		args:    "--corpus NAME --out NAME [--set gold] [--policy FILE] [--seed N] [--async] | --print-policy",
		examples: []string{
			"deidcorpus resynth --print-policy > policy.json   # the default policy, to copy and change",
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
	asJSON := jsonFlag(fs)
	printPolicy := fs.Bool("print-policy", false, "print the default policy (JSON; every type's strategy and scope), then on stderr the strategies and masking options, and return")
	parts := fs.Int("parts", 0, "split the job into N parts of whole patients that every worker process takes (2-64; each reads the source again: for workers on machines of their own, on PostgreSQL)")
	return func(ctx context.Context, args []string) error {
		if *printPolicy {
			if _, err := e.stdout.Write(surrogate.DefaultPolicyJSON()); err != nil {
				return err
			}
			// On stderr, so that the JSON redirected to a file stays a policy.
			fmt.Fprintf(e.stderr, "strategies: %s\n%s\n", strings.Join(surrogate.Strategies(), ", "), surrogate.MaskOptions())
			return nil
		}
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
		return runSurrogateJob(ctx, e, st, p, *policyFile, *out, *async, *asJSON, jobs.DecodeResult[jobs.ResynthesizeResult])
	}
}

// runSurrogateJob runs a job that writes surrogate corpus out (resynth,
// deidentify) and prints it; a policy's error names policyFile, and a
// check that failed is the command's error. resynthesis reads the job's
// resynthesis result.
func runSurrogateJob(ctx context.Context, e *env, st *store.Store, p jobs.Params, policyFile, out string, async, asJSON bool,
	resynthesis func(*ent.Job) (*jobs.ResynthesizeResult, error)) error {
	j, err := runJob(ctx, e, st, p, async)
	if errors.Is(err, surrogate.ErrPolicy) && policyFile != "" {
		return apperr.New(apperr.Invalid, "%s: %v", policyFile, err) // its names, checked against the corpus
	}
	if err != nil || async {
		return err
	}
	if err := finished(e, j, asJSON); err != nil {
		return err
	}
	r, err := resynthesis(j)
	if err != nil || r == nil || r.Check == nil {
		return err
	}
	if !r.Check.OK || j.Status == job.StatusCheckFailed {
		return checkFailed(out, r.Check, r.CheckReport)
	}
	return nil
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
