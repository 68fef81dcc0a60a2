package jobs

import (
	"bytes"
	"cmp"
	"context"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
)

// ImportParams are an import job's parameters; the files travel as a zip
// artifact stored with the job, so any worker can read them.
type ImportParams struct {
	Artifact   int    `json:"artifact"`
	Corpus     string `json:"corpus"`
	TagSet     string `json:"tagset,omitempty"`
	Format     string `json:"format,omitempty"`
	Split      string `json:"split,omitempty"`
	Set        string `json:"set,omitempty"`
	Kind       string `json:"kind,omitempty"`
	CorpusKind string `json:"corpusKind,omitempty"`
	Replace    bool   `json:"replace,omitempty"`
}

// NewImportParams are the parameters of an import job with these options.
func NewImportParams(o store.ImportOptions) ImportParams {
	return ImportParams{Corpus: o.Corpus, TagSet: o.TagSet, Format: o.Format, Split: o.Split,
		Set: o.Set, Kind: o.Kind, CorpusKind: o.CorpusKind, Replace: o.Replace}
}

func (p ImportParams) options() store.ImportOptions {
	return store.ImportOptions{Corpus: p.Corpus, TagSet: p.TagSet, Format: p.Format, Split: p.Split,
		Set: p.Set, Kind: p.Kind, CorpusKind: p.CorpusKind, Replace: p.Replace}
}

// Validate checks an import's parameters before it is queued.
func (p ImportParams) Validate() error {
	if p.Corpus == "" {
		return required("corpus")
	}
	return p.options().Validate()
}

// EnqueueImport stores the files of src as the job's input and queues their
// import, in one transaction.
func (m *Manager) EnqueueImport(ctx context.Context, p ImportParams, src formats.Source, by string) (*ent.Job, error) {
	// Checked before the files are read: Enqueue checks again, cheaply.
	if err := validate(p); err != nil {
		return nil, err
	}
	format, err := formats.Lookup(cmp.Or(p.Format, formats.Default))
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	// A file the user named that the format does not read is refused now:
	// packed, it would be one member among others, skipped by the job.
	checked := func(yield func(formats.File) error) error {
		return src(func(f formats.File) error {
			if err := format.Refuses(f); err != nil {
				return err
			}
			return yield(f)
		})
	}
	var buf bytes.Buffer
	if _, err := formats.ZipFrom(&buf, checked); err != nil {
		return nil, err
	}
	return m.Enqueue(ctx, &p, by, func(ctx context.Context, tx *store.JobTx) error {
		a, err := tx.CreateArtifact(ctx, store.ArtifactSpec{Name: "import-input.zip", ContentType: "application/zip",
			CreatedBy: by}, buf.Bytes())
		if err != nil {
			return err
		}
		p.Artifact = a.ID
		return nil
	})
}

// importFiles imports the files of an import job.
func importFiles(ctx context.Context, run *Run) (Result, error) {
	var p ImportParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	a, err := run.Store.Artifact(ctx, p.Artifact)
	if err != nil {
		return nil, err
	}
	opt := p.options()
	opt.Checked = func(done int) { run.Progress(done, 0, "checking") }
	opt.Progress = run.Step("importing")
	// A retry finds the batches its predecessor committed before its worker
	// died, and goes on after them.
	opt.Resume = run.Job.Attempts > 1
	data, err := run.Store.ArtifactBytes(ctx, a) // a zip is read from its end
	if err != nil {
		return nil, err
	}
	res, err := run.Store.ImportFrom(ctx, opt, formats.Zip(a.Name, data))
	if err != nil {
		return nil, err
	}
	return Result{"corpus": res.Corpus.ID, "corpusName": res.Corpus.Name, "documents": res.Documents,
		"spans": res.Spans, "replaced": res.Replaced, "createdCorpus": res.CreatedCorpus}, nil
}
