package jobs

import (
	"cmp"
	"context"
	"errors"
	"io"
	"strings"
	"sync"

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
	// MaxNote is the per-note limit where the files were uploaded, which
	// the worker keeps; MaxImport the import's budget, likewise.
	MaxNote   int64 `json:"maxNote,omitempty"`
	MaxImport int64 `json:"maxImport,omitempty"`
	// Columns names a table format's columns (store.ImportOptions).
	Columns string `json:"columns,omitempty"`
}

// NewImportParams are the parameters of an import job with these options.
func NewImportParams(o store.ImportOptions) ImportParams {
	return ImportParams{Corpus: o.Corpus, TagSet: o.TagSet, Format: o.Format, Split: o.Split,
		Set: o.Set, Kind: o.Kind, CorpusKind: o.CorpusKind, Replace: o.Replace, MaxNote: o.MaxNote, MaxImport: o.MaxImport,
		Columns: o.Columns}
}

func (p ImportParams) options() store.ImportOptions {
	return store.ImportOptions{Corpus: p.Corpus, TagSet: p.TagSet, Format: p.Format, Split: p.Split,
		Set: p.Set, Kind: p.Kind, CorpusKind: p.CorpusKind, Replace: p.Replace, MaxNote: p.MaxNote, MaxImport: p.MaxImport,
		Columns: p.Columns}
}

// Validate checks an import's parameters before it is queued.
func (p ImportParams) Validate() error {
	if p.Corpus == "" {
		return required("corpus")
	}
	return p.options().Validate()
}

// EnqueueImport stores the files of src as the job's input, a zip archive in
// chunks, and queues their import: the artifact naming the chunks and the
// job are written in one transaction.
func (m *Manager) EnqueueImport(ctx context.Context, p ImportParams, src formats.Source, by string) (*ent.Job, error) {
	// Checked before the files are read: Enqueue checks again, cheaply.
	if err := validate(p); err != nil {
		return nil, err
	}
	// The format the job will read, a release archive's own if none is
	// given (the job finds it again in the stored files). Files over the
	// budget are refused before any is decompressed and stored.
	opt := p.options()
	if err := opt.WithinBudget(src); err != nil {
		return nil, err
	}
	if _, _, err := store.ImportFormat(&opt, src); err != nil {
		return nil, err
	}
	// The job reads the files in the format found now.
	p.Format = opt.Format
	format, err := formats.Lookup(cmp.Or(opt.Format, formats.Default))
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	// A file the user named that the format does not read is refused now:
	// packed, it would be one member among others, skipped by the job. So
	// is a file over the format's limits, as it is read (a zip bomb): the
	// job would refuse it, after it was decompressed into the store.
	read := formats.ReadOptions{MaxNote: p.MaxNote}
	checked := func(yield func(formats.File) error) error {
		return src(func(f formats.File) error {
			if err := format.Refuses(f); err != nil {
				return err
			}
			if format.Reads(f.Name) {
				f = format.Bound(f, read)
			}
			return yield(f)
		})
	}
	// Zipped into chunks as the files are read, before the job's
	// transaction: neither this process nor the worker holds the archive,
	// and the single writer is not held while a large upload is inserted.
	chunks, err := m.store.WriteChunks(ctx, func(w io.Writer) error {
		_, err := formats.ZipUpload(w, checked)
		return err
	})
	var bad *formats.Error
	if errors.As(err, &bad) && apperr.CodeOf(err) == apperr.Internal {
		// A file the format refuses, two files of one name, an archive
		// that cannot be read: the input's fault, not the server's (which
		// GraphQL would show as "internal error", without the file's name).
		err = apperr.Wrap(apperr.Invalid, err)
	}
	if err != nil {
		return nil, err
	}
	j, err := m.Enqueue(ctx, &p, by, func(ctx context.Context, tx *store.JobTx) error {
		a, err := tx.ArtifactOf(ctx, store.ArtifactSpec{Name: "import-input.zip", ContentType: "application/zip",
			CreatedBy: by}, chunks)
		if err != nil {
			return err
		}
		p.Artifact = a.ID
		return nil
	})
	if err != nil {
		m.store.DropChunks(ctx, chunks)
		return nil, err
	}
	return j, nil
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
	// The archive is read where its reader asks, a chunk at a time, never
	// whole. archive/zip checks each member's CRC-32 but not the names,
	// which are documents' ids in most formats: the stored file's size and
	// SHA-256 are checked first, in one pass that holds a chunk.
	if _, err := io.Copy(io.Discard, run.Store.ArtifactContent(ctx, a)); err != nil {
		return nil, err
	}
	src := &storedZip{ctx: ctx, st: run.Store, a: a}
	res, err := run.Store.ImportFrom(ctx, opt, src.files)
	if err != nil {
		return nil, src.cause(err)
	}
	run.DropInputOnSuccess(a.ID)
	return resultOf(ImportResult{Corpus: res.Corpus.ID, CorpusName: res.Corpus.Name, CreatedCorpus: res.CreatedCorpus,
		Documents: res.Documents, Spans: res.Spans, Replaced: res.Replaced, WithoutSpans: res.WithoutSpans, Moved: res.Moved,
		Skipped: res.Skipped, Format: res.Format, Ignored: res.Ignored,
		// As the user named it, not as a member of the stored input.
		FromRelease: strings.TrimPrefix(res.FromRelease, a.Name+":")})
}

// storedZip is the Source of a stored zip archive, read through
// Store.ArtifactReaderAt: one per reading, as the import reads its files
// twice and such a reader is not safe for concurrent use.
type storedZip struct {
	ctx context.Context
	st  *store.Store
	a   *ent.Artifact

	mu  sync.Mutex
	err error // the first error reading the store
}

func (z *storedZip) files(yield func(formats.File) error) error {
	r, err := z.st.ArtifactReaderAt(z.ctx, z.a)
	if err != nil {
		z.failed(err)
		return err
	}
	return formats.ZipAt(z.a.Name, readerAt{r, z}, int64(z.a.Size))(yield)
}

func (z *storedZip) failed(err error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.err == nil {
		z.err = err
	}
}

// cause is the error the import ends with: the store's, when reading it
// failed. The zip reader reports such a failure as a damaged archive or
// member, which the import would take for invalid input and never retry.
func (z *storedZip) cause(err error) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.err != nil {
		return z.err
	}
	return err
}

// readerAt keeps the store's errors from being mistaken for the file's.
type readerAt struct {
	r io.ReaderAt
	z *storedZip
}

func (r readerAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.r.ReadAt(p, off)
	if err != nil && err != io.EOF && off >= 0 { // a negative offset is the archive's
		r.z.failed(err)
	}
	return n, err
}
