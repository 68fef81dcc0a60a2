package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"deidcorpus/apperr"
	"deidcorpus/ent/corpus"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/store"
	"deidcorpus/version"
)

// ResynthesizeParams are a resynthesis job's parameters.
type ResynthesizeParams struct {
	Corpus string `json:"corpus"`           // the source corpus
	Out    string `json:"out"`              // the surrogate corpus to write (or add new notes to)
	Set    string `json:"set,omitempty"`    // the source's annotation set; default gold
	Seed   uint64 `json:"seed"`             // makes the output reproducible
	Policy any    `json:"policy,omitempty"` // a policy object; default surrogate.DefaultPolicy
}

// resynthesize replaces the PHI of a corpus's documents with surrogates and
// writes them, re-aligned, into a surrogate corpus. Documents the surrogate
// corpus already has are not rewritten: they constrain the new surrogates, and
// the stored mappings and date shifts make a patient's new notes consistent
// with their earlier ones.
func resynthesize(ctx context.Context, run *Run) (Result, error) {
	var p ResynthesizeParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	if p.Set == "" {
		p.Set = "gold"
	}
	if p.Out == "" || p.Out == p.Corpus {
		return nil, apperr.New(apperr.Invalid, "the surrogate corpus needs a name of its own")
	}
	policy := surrogate.DefaultPolicy()
	policyJSON := []byte("null")
	if p.Policy != nil {
		var err error
		if policyJSON, err = json.Marshal(p.Policy); err != nil {
			return nil, apperr.New(apperr.Invalid, "policy: %v", err)
		}
		if policy, err = surrogate.ParsePolicy(policyJSON); err != nil {
			return nil, apperr.Wrap(apperr.Invalid, err)
		}
	}
	st := run.Store
	src, err := st.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return nil, err
	}
	run.Progress(0, 4, "loading "+p.Corpus)
	docs, err := st.LoadDocuments(ctx, src, p.Set)
	if err != nil {
		return nil, err
	}
	done := map[string]bool{}
	redo := false
	var earlier map[string]any // the provenance of an earlier attempt of this job that saved its output
	if out, err := st.CorpusByName(ctx, p.Out); err == nil {
		if job, ok := out.Provenance["job"].(float64); ok && int(job) == run.Job.ID {
			earlier = out.Provenance
		}
		if from, _ := out.Provenance["from"].(string); from != p.Corpus {
			return nil, apperr.New(apperr.Conflict, "corpus %q exists and is not a surrogate of %q", p.Out, p.Corpus)
		}
		// A quarantined corpus's notes cannot be trusted: a rerun rewrites
		// and checks them all, and its check decides the quarantine.
		if redo = out.CheckStatus == corpus.CheckStatusFailed; !redo {
			if done, err = st.DocumentIDs(ctx, out.ID); err != nil {
				return nil, err
			}
		}
	}
	var todo, context []pipeline.Document
	for _, d := range docs {
		if done[d.ID] {
			context = append(context, d)
		} else {
			todo = append(todo, d)
		}
	}
	if len(todo) == 0 && earlier != nil {
		// A retry of a job whose output was saved: it reports what it wrote.
		return Result{"corpus": p.Out, "documents": earlier["documents"], "check": earlier["check"], "reused": earlier["reused"],
			"message": "saved by an earlier attempt of this job"}, nil
	}
	if len(todo) == 0 {
		return Result{"corpus": p.Out, "documents": 0, "message": "every document is already resynthesized"}, nil
	}
	state, err := st.SurrogateState(ctx, src.ID)
	if err != nil {
		return nil, err
	}

	run.Progress(1, 4, fmt.Sprintf("replacing the PHI of %d documents", len(todo)))
	seed, err := st.SecretSeed(p.Seed, src.ID)
	if err != nil {
		return nil, err
	}
	r := surrogate.New(policy, nil, seed)
	r.Context = context
	res, err := r.Run(todo, state.Store)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	run.Progress(2, 4, "checking the output")
	// Earlier notes the run rewrote with the new ones are checked with them.
	checked := append(todo[:len(todo):len(todo)], surrogate.PatientDocs(context, res.Redone)...)
	report := surrogate.Check(checked, res, policy)
	summary := checkSummary(report)
	findings := store.CheckFindings(summary)
	newMappings := 0
	for _, m := range res.Mappings {
		if m.New {
			newMappings++
		}
	}
	// The seed draws only what no earlier run of the source decided: the
	// provenance says what was taken over, from which job and its seed.
	reused, err := st.Reused(ctx, state, res)
	if err != nil {
		return nil, err
	}

	run.Progress(3, 4, "saving")
	var policyObj any
	json.Unmarshal(policyJSON, &policyObj)
	prov := map[string]any{
		"source": "resynthesis", "from": p.Corpus, "fromID": src.ID, "set": p.Set, "job": run.Job.ID,
		"seed": p.Seed, "policy": policyObj, "codeVersion": version.String(), "language": res.Language,
		"documents": len(res.Docs), "redonePatients": len(res.Redone), "newMappings": newMappings, "reused": reused, "check": summary,
		"labels": res.Labels,
	}
	out, created, err := st.SaveResynthesis(ctx, store.Resynthesis{
		SourceID: src.ID, Target: p.Out, TagSet: src.Tagset, Provenance: prov, Docs: res.Docs, Result: res, JobID: run.Job.ID,
		Findings: findings, Redo: redo,
	})
	if err != nil {
		return nil, err
	}
	full, err := json.Marshal(struct {
		Report *surrogate.Report      `json:"report"`
		Review []surrogate.ReviewItem `json:"review"`
	}{report, res.Review})
	if err != nil {
		return nil, err
	}
	// The full report names original values beside their surrogates (review
	// items, leaks, values kept): it stays an artifact of the job, not part
	// of the surrogate corpus, sealed under the mapping keys.
	a, err := st.SaveArtifact(ctx, store.ArtifactSpec{Name: p.Out + "-check-report.json", ContentType: "application/json",
		JobID: run.Job.ID, CorpusID: src.ID, CreatedBy: run.Job.CreatedBy, Sealed: true}, full)
	if err != nil {
		return nil, err
	}
	result := Result{"corpus": out.ID, "corpusName": out.Name, "documents": len(res.Docs), "redonePatients": len(res.Redone), "newMappings": newMappings,
		"reused": reused, "redo": redo, "check": summary, "checkReport": a.ID, "saved": created,
		"checkStatus": string(out.CheckStatus), "checkFindings": out.CheckFindings}
	if findings > 0 {
		return result, &CheckFailed{Message: fmt.Sprintf("the check found %d problems (%d leaks, %d misaligned spans): "+
			"corpus %q is quarantined (%d unresolved findings) until a rerun into it passes or a curator resolves them",
			findings, len(report.Leaks), len(report.Misaligned), out.Name, out.CheckFindings)}
	}
	return result, nil
}

// checkSummary is the PHI-free part of a check report: counts and the name
// pattern table.
func checkSummary(r *surrogate.Report) map[string]any {
	patterns := make([]map[string]any, len(r.NamePatterns))
	for i, p := range r.NamePatterns {
		patterns[i] = map[string]any{"pattern": p.Pattern, "tokens": p.Tokens, "original": p.Original, "surrogate": p.Surrogate}
	}
	return map[string]any{
		"ok": r.OK(), "documents": r.Documents, "spans": r.Spans, "replaced": r.Replaced,
		"misaligned": len(r.Misaligned), "leaks": len(r.Leaks), "unannotated": len(r.Unannotated),
		"inconsistent": len(r.Inconsistent), "intervalErrors": len(r.IntervalErrors), "datesChecked": r.DatesChecked,
		"equalToOriginal": len(r.EqualToOriginal), "review": r.Review, "namePatterns": patterns,
	}
}
