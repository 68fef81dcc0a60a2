package store

import (
	"context"
	"fmt"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/model"
	"deidcorpus/pipeline/release"
)

// LineageStep is one link of a provenance chain: something the system made or
// holds, and the job (with its parameters and code version) that made it.
type LineageStep struct {
	Kind        string // Corpus, AnnotationSet, Model, Evaluation, Release, Job
	ID          int
	Name        string
	Provenance  map[string]any // the object's own record of how it was made
	Origin      string         // how a corpus came (its origin), "" for other kinds
	JobID       int            // 0 if no job made it
	CodeVersion string
	Parameters  map[string]any // the job's parameters (seed, policy, config, ...)
}

// Lineage walks the provenance chain from any object: a release to its
// corpus, a surrogate or derived corpus to its source, a model to its
// training corpus, an annotation set to the model that tagged it, and every
// object to the job that made it. The first step is the object itself.
func (s *Store) Lineage(ctx context.Context, id int) ([]LineageStep, error) {
	var steps []LineageStep
	seen := map[string]bool{}
	var visit func(kind string, id int) error
	visitCorpusNamed := func(name string) error {
		c, err := s.Client.Corpus.Query().Where(corpus.Name(name)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil // deleted since
		}
		if err != nil {
			return err
		}
		return visit("Corpus", c.ID)
	}
	visit = func(kind string, id int) error {
		key := fmt.Sprintf("%s/%d", kind, id)
		if seen[key] || id == 0 {
			return nil
		}
		seen[key] = true
		step := LineageStep{Kind: kind, ID: id}
		var next []func() error
		switch kind {
		case "Corpus":
			c, err := s.Client.Corpus.Get(ctx, id)
			if err != nil {
				return hiddenOK(err)
			}
			step.Name, step.Provenance, step.Origin = c.Name, CorpusProvenance(ctx, c.Provenance), string(c.Origin)
			step.JobID = intOf(step.Provenance["job"])
			if from, ok := step.Provenance["from"].(string); ok { // the source only for who may read it
				next = append(next, func() error { return visitCorpusNamed(from) })
			}
		case "AnnotationSet":
			a, err := s.Client.AnnotationSet.Get(ctx, id)
			if err != nil {
				return hiddenOK(err)
			}
			step.Name, step.Provenance = a.Name, a.Provenance
			step.JobID = intOf(a.Provenance["job"])
			if m, ok := a.Provenance["model"].(string); ok {
				next = append(next, func() error {
					row, err := s.Client.Model.Query().Where(model.Name(m)).Only(ctx)
					if err != nil {
						return nil // deleted or renamed since
					}
					return visit("Model", row.ID)
				})
			}
			next = append(next, func() error { return visit("Corpus", a.CorpusID) })
		case "Model":
			m, err := s.Client.Model.Get(ctx, id)
			if err != nil {
				return hiddenOK(err)
			}
			step.Name = m.Name
			step.Provenance = map[string]any{"kind": m.Kind, "hash": m.Hash, "trainingCorpus": m.TrainingCorpus,
				"trainingSplit": m.TrainingSplit, "trainingSet": m.TrainingSet}
			if e := ShownEndpoint(ctx, m); e != nil {
				step.Provenance["endpoint"] = *e
			}
			if m.JobID != nil {
				step.JobID = *m.JobID
			}
			if m.TrainingCorpus != "" {
				next = append(next, func() error { return visitCorpusNamed(m.TrainingCorpus) })
			}
		case "Evaluation":
			e, err := s.Client.Evaluation.Get(ctx, id)
			if err != nil {
				return hiddenOK(err)
			}
			step.Name = e.SystemSet + " vs " + e.GoldSet
			step.Provenance = map[string]any{"gold": e.GoldSet, "system": e.SystemSet, "metric": e.Metric, "options": e.Options}
			if e.JobID != nil {
				step.JobID = *e.JobID
			}
			// The system set leads to the model that tagged it and its training.
			for _, name := range []string{e.SystemSet, e.GoldSet} {
				if set, err := s.Client.AnnotationSet.Query().
					Where(annotationset.CorpusID(e.CorpusID), annotationset.Name(name)).Only(ctx); err == nil {
					next = append(next, func() error { return visit("AnnotationSet", set.ID) })
				}
			}
			next = append(next, func() error { return visit("Corpus", e.CorpusID) })
		case "Release":
			r, err := s.Client.Release.Get(ctx, id)
			if err != nil {
				return hiddenOK(err)
			}
			step.Name, step.Provenance = release.Ref(r.Name, r.Version), ReleaseProvenance(ctx, r.Provenance)
			step.CodeVersion, _ = r.Provenance["codeVersion"].(string)
			if r.ParentID != nil {
				next = append(next, func() error { return visit("Release", *r.ParentID) })
			}
			next = append(next, func() error { return visitCorpusNamed(r.Corpus) })
		case "Job":
			j, err := s.Client.Job.Get(ctx, id)
			if err != nil {
				return hiddenOK(err)
			}
			step.Name, step.JobID = j.Kind, j.ID
			if c, ok := j.Params["corpus"].(string); ok {
				next = append(next, func() error { return visitCorpusNamed(c) })
			}
		default:
			return apperr.New(apperr.Invalid, "no lineage for a %s", kind)
		}
		if step.JobID != 0 {
			if j, err := s.Client.Job.Get(ctx, step.JobID); err == nil {
				step.Parameters, step.CodeVersion = j.Params, j.CodeVersion
			}
		}
		steps = append(steps, step)
		for _, n := range next {
			if err := n(); err != nil {
				return err
			}
		}
		return nil
	}
	kind, err := s.kindOf(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := visit(kind, id); err != nil {
		return nil, err
	}
	return steps, nil
}

// hiddenOK ends a branch of the walk quietly at an object that was deleted
// since or that the viewer may not see.
func hiddenOK(err error) error {
	if ent.IsNotFound(err) {
		return nil
	}
	return err
}

// kindOf names the type of a global id.
func (s *Store) kindOf(ctx context.Context, id int) (string, error) {
	n, err := s.Client.Noder(ctx, id)
	if err != nil {
		return "", apperr.New(apperr.NotFound, "no object with id %d", id)
	}
	switch n.(type) {
	case *ent.Corpus:
		return "Corpus", nil
	case *ent.AnnotationSet:
		return "AnnotationSet", nil
	case *ent.Model:
		return "Model", nil
	case *ent.Evaluation:
		return "Evaluation", nil
	case *ent.Release:
		return "Release", nil
	case *ent.Job:
		return "Job", nil
	}
	return "", apperr.New(apperr.Invalid, "object %d (%T) has no provenance", id, n)
}

func intOf(v any) int {
	if f, ok := v.(float64); ok {
		return int(f)
	}
	return 0
}
