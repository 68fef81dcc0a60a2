package store

import (
	"context"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/model"
	"deidcorpus/pipeline"
)

// ModelByName returns the named model or a not_found error.
func (s *Store) ModelByName(ctx context.Context, name string) (*ent.Model, error) {
	m, err := s.Client.Model.Query().Where(model.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no model named %q", name)
	}
	return m, err
}

// ModelNameFree refuses a model name another model has (conflict): a
// training job asks before it trains, not when it saves minutes later. A
// model the same job saved (jobID, an earlier attempt's) does not count.
func (s *Store) ModelNameFree(ctx context.Context, name string, jobID int) error {
	taken, err := s.Client.Model.Query().Where(model.Name(name), model.Or(model.JobIDIsNil(), model.JobIDNEQ(jobID))).
		Exist(auth.System(ctx))
	if err != nil {
		return err
	}
	if taken {
		return apperr.New(apperr.Conflict, "a model named %q exists: choose another name (models are never overwritten)", name)
	}
	return nil
}

// SaveModel stores a model made by a job, once: a retried job finds the model
// its earlier attempt saved. create fills in the fields.
func (s *Store) SaveModel(ctx context.Context, jobID int, name string, create func(*ent.ModelCreate) *ent.ModelCreate) (*ent.Model, error) {
	if m, err := s.Client.Model.Query().Where(model.Name(name), model.JobID(jobID)).Only(ctx); err == nil {
		return m, nil
	}
	m, err := create(s.Client.Model.Create().SetName(name).SetJobID(jobID)).Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, apperr.New(apperr.Conflict, "a model named %q exists", name)
	}
	return m, err
}

// SetModelArtifact replaces a built-in model's artifact with one that tags
// alike (its hash is unchanged): a calibration added to its metadata.
func (s *Store) SetModelArtifact(ctx context.Context, id int, artifact []byte) error {
	n, err := s.Client.Model.Update().Where(model.ID(id), model.KindEQ(model.KindCrf)).SetArtifact(artifact).Save(ctx)
	if err == nil && n == 0 {
		return apperr.New(apperr.NotFound, "no built-in model %d", id)
	}
	return err
}

// RegisterExternalModel records an external tagger reached at endpoint.
// Its host must be allowed (WithExternalHosts); the URL is stored encrypted,
// a masked copy beside it (endpoints.go).
func (s *Store) RegisterExternalModel(ctx context.Context, name, endpoint string, labels []string, by string) (*ent.Model, error) {
	if _, err := s.checkEndpoint(endpoint); err != nil {
		return nil, err
	}
	r, err := s.KeyRing()
	if err != nil {
		return nil, err
	}
	masked, enc, keyID := sealEndpoint(r, name, endpoint)
	m, err := s.Client.Model.Create().SetName(name).SetKind(model.KindExternal).SetEndpoint(masked).
		SetEndpointEnc(enc).SetEndpointKeyID(keyID).SetLabels(labels).SetCreatedBy(by).Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, apperr.New(apperr.Conflict, "a model named %q exists", name)
	}
	return m, err
}

// SaveAnnotations writes a new annotation set over existing documents of a
// corpus (matched by document id), in one transaction. A set of that name
// made by the same job is returned as it is (a retried job); one made
// otherwise is a conflict.
func (s *Store) SaveAnnotations(ctx context.Context, c *ent.Corpus, setName, kind string, provenance map[string]any, jobID int, docs []pipeline.Document) (*ent.AnnotationSet, error) {
	if set, err := s.Client.AnnotationSet.Query().Where(annotationset.CorpusID(c.ID), annotationset.Name(setName)).Only(ctx); err == nil {
		if job, _ := set.Provenance["job"].(float64); jobID != 0 && int(job) == jobID {
			return set, nil
		}
		return nil, apperr.New(apperr.Conflict, "corpus %q already has an annotation set %q", c.Name, setName)
	}
	opt := ImportOptions{Corpus: c.Name, Set: setName, Kind: kind}
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	var out *ent.AnnotationSet
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		set, err := tx.AnnotationSet.Create().SetCorpusID(c.ID).SetName(setName).
			SetKind(annotationset.Kind(kind)).SetProvenance(provenance).Save(ctx)
		if err != nil {
			return err
		}
		out = set
		return s.writeDocuments(ctx, tx, c.ID, set.ID, docs, opt, &ImportResult{})
	})
	if err != nil {
		return nil, err
	}
	return s.Client.AnnotationSet.Get(ctx, out.ID)
}

// Models lists the models by name.
func (s *Store) Models(ctx context.Context) ([]*ent.Model, error) {
	return s.Client.Model.Query().Order(ent.Asc(model.FieldName)).All(ctx)
}
