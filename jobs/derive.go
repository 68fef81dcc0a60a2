package jobs

import (
	"context"
	"errors"
	"fmt"

	"deidcorpus/apperr"
	"deidcorpus/pipeline/phi"
	"deidcorpus/store"
)

// DeriveParams are a derivation's parameters: the corpus made from one
// annotation set of another, its labels rewritten by a mapping given by a
// built-in mapping's name or a mapping file's text (MappingLabel names that
// file, for the new corpus's provenance).
type DeriveParams struct {
	Corpus       string `json:"corpus"`
	Set          string `json:"set"`
	Out          string `json:"out"`
	Mapping      string `json:"mapping,omitempty"`
	MappingText  string `json:"mappingText,omitempty"`
	MappingLabel string `json:"mappingLabel,omitempty"`
}

// Validate checks a derivation's parameters, its mapping parsed, before it
// is queued.
func (p DeriveParams) Validate() error {
	switch {
	case p.Corpus == "":
		return required("corpus")
	case p.Set == "":
		return required("set")
	case p.Out == "":
		return required("out")
	}
	_, err := p.ResolveMapping()
	return err
}

// ResolveMapping parses the mapping the parameters give.
func (p DeriveParams) ResolveMapping() (*phi.Mapping, error) {
	m, err := phi.ResolveMapping(p.Mapping, p.MappingText, p.MappingLabel)
	switch {
	case errors.As(err, new(*phi.MappingError)):
		return nil, err // it names the mapping
	case err != nil:
		return nil, fmt.Errorf("mapping: %w", err)
	case m == nil:
		return nil, errors.New("mapping: give a built-in mapping's name (mapping) or a mapping file's text (mappingText)")
	}
	return m, nil
}

// Options are the store's options for deriving with mapping m.
func (p DeriveParams) Options(m *phi.Mapping) store.DeriveOptions {
	return store.DeriveOptions{Source: p.Corpus, Set: p.Set, Mapping: m, Out: p.Out}
}

// precondition refuses, as the job is queued, what would stop the
// derivation at its start (store.CheckDerive): a source or set that is not
// there, a quarantined source, an output name that is taken or invalid, a
// mapping without a rule for some of the source's labels.
func (p DeriveParams) precondition(ctx context.Context, st *store.Store) error {
	m, err := p.ResolveMapping()
	if err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	_, _, err = st.CheckDerive(ctx, p.Options(m))
	return err
}

// derive makes the derived corpus. A retry goes on with the corpus its
// predecessor began, after the batches it committed, or finds it finished.
func derive(ctx context.Context, run *Run) (Result, error) {
	var p DeriveParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	m, err := p.ResolveMapping()
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	opt := p.Options(m)
	opt.Checked = func(done int) { run.Progress(done, 0, "checking") }
	opt.Progress = run.Step("deriving")
	opt.Resume, opt.Job = run.Job.Attempts > 1, run.Job.ID
	res, err := run.Store.Derive(ctx, opt)
	if err != nil {
		return nil, err
	}
	return resultOf(DeriveResult{Corpus: res.Corpus.ID, CorpusName: res.Corpus.Name, CreatedCorpus: res.CreatedCorpus,
		Documents: res.Documents, Spans: res.Spans, Dropped: res.Dropped, WithoutSpans: res.WithoutSpans,
		Mapping: m.Name, MappingHash: m.Hash})
}
