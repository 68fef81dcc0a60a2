package jobs

import (
	"context"
	"fmt"
	"io"
	"slices"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/internal/zipindex"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
)

// ExportParams are an export job's parameters.
type ExportParams struct {
	Corpus string `json:"corpus"`
	Set    string `json:"set"`
	Format string `json:"format"`
	Split  string `json:"split,omitempty"` // every document when empty
}

// Validate checks an export's parameters before it is queued.
func (p ExportParams) Validate() error {
	switch {
	case p.Corpus == "":
		return required("corpus")
	case p.Set == "":
		return required("set")
	}
	return p.options().Validate()
}

func (p ExportParams) options() store.ExportOptions {
	return store.ExportOptions{Corpus: p.Corpus, Set: p.Set, Format: p.Format, Split: p.Split}
}

// export writes a corpus with one annotation set as a zip archive artifact.
func export(ctx context.Context, run *Run) (Result, error) {
	var p ExportParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	c, err := run.Store.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return nil, err
	}
	// The archive is written as the documents are read, a batch at a time,
	// and stored in chunks as it is written: the job holds a batch and a
	// chunk, never the archive.
	run.Progress(0, 1, "writing the archive")
	opt := p.options()
	files, written := 0, false
	a, err := run.Store.SaveArtifactFrom(ctx, store.ArtifactSpec{Name: opt.Name() + ".zip",
		ContentType: "application/zip", JobID: run.Job.ID, CorpusID: c.ID, CreatedBy: run.Job.CreatedBy},
		func(w io.Writer) error {
			z := formats.NewZipFiles(w)
			err := run.Store.ExportTo(ctx, opt, z.Create)
			if err == nil {
				err = z.Close()
			}
			files, written = z.Made, true
			return err
		})
	if err != nil {
		return nil, err
	}
	if !written { // an earlier attempt stored the archive
		if files, err = archiveFiles(ctx, run.Store, a); err != nil {
			return nil, err
		}
	}
	return resultOf(ExportResult{Artifact: a.ID, Bytes: a.Size, Sha256: a.Sha256, Files: files})
}

// archiveFiles counts the files of a stored zip archive from its end
// records, reading at most its last 64 KiB. The count is exact: archive/zip
// writes zip64 records, which do not wrap at 65,536, for that many files.
func archiveFiles(ctx context.Context, st *store.Store, a *ent.Artifact) (int, error) {
	r, err := st.ArtifactReaderAt(ctx, a)
	if err != nil {
		return 0, err
	}
	z, err := zipindex.NewReader(r, int64(a.Size))
	if err != nil {
		return 0, fmt.Errorf("artifact %d (%s): %w", a.ID, a.Name, err)
	}
	return int(z.Len()), nil
}

// EvaluateParams are an evaluation job's parameters.
type EvaluateParams struct {
	Corpus     string `json:"corpus"`
	Gold       string `json:"gold"`
	System     string `json:"system"`
	Metric     string `json:"metric,omitempty"` // default: evaluate.MetricFor the corpus's tag set
	PaperHIPAA bool   `json:"paperHIPAA,omitempty"`
	HIPAAOnly  bool   `json:"hipaaOnly,omitempty"`
}

// Validate checks an evaluation's parameters before it is queued.
func (p EvaluateParams) Validate() error {
	switch {
	case p.Corpus == "":
		return required("corpus")
	case p.Gold == "":
		return required("gold")
	case p.System == "":
		return required("system")
	case p.Metric != "" && !slices.Contains(evaluate.Metrics(), evaluate.Metric(p.Metric)):
		return fmt.Errorf("metric: unknown metric %q (known: %v)", p.Metric, evaluate.Metrics())
	}
	return nil
}

// evaluateSets scores one annotation set of a corpus against another and
// stores the report as an Evaluation. It streams: each batch of whole
// patients is read with its gold spans, given its system spans and fed to an
// evaluate.Accumulator, so memory does not grow with the corpus; the stored
// report keeps every figure but not the per-document lists (Summary).
func evaluateSets(ctx context.Context, run *Run) (Result, error) {
	var p EvaluateParams
	if err := run.Params(&p); err != nil {
		return nil, err
	}
	c, err := run.Store.CorpusByName(ctx, p.Corpus)
	if err != nil {
		return nil, err
	}
	sys, err := run.Store.AnnotationSet(ctx, c, p.System)
	if err != nil {
		return nil, err
	}
	metric := evaluate.Metric(p.Metric)
	if metric == "" {
		metric = evaluate.MetricFor(c.Tagset)
	}
	opt := evaluate.Options{Metric: metric, PaperHIPAA: p.PaperHIPAA, HIPAAOnly: p.HIPAAOnly, Summary: true}
	report, err := scoreSets(ctx, run, c, p.Gold, "", sys, opt, nil)
	if err != nil {
		return nil, err
	}
	ev, err := run.Store.SaveEvaluation(ctx, store.EvaluationInput{
		CorpusID: c.ID, Gold: p.Gold, System: p.System, Options: opt, JobID: run.Job.ID,
		CreatedBy: run.Job.CreatedBy, Report: report,
	})
	if err != nil {
		return nil, err
	}
	return resultOf(EvaluateResult{Evaluation: ev.ID, Documents: report.Documents, Precision: ev.Precision, Recall: ev.Recall, F1: ev.F1})
}

// evaluateBatch is how many documents (whole patients) an evaluation reads
// at a time.
const evaluateBatch = 500

// scoreSets scores annotation set sys against the gold set of corpus c (one
// split; "" for all) a batch at a time, with progress; keep, unless nil,
// sees each gold batch.
func scoreSets(ctx context.Context, run *Run, c *ent.Corpus, gold, split string, sys *ent.AnnotationSet, opt evaluate.Options,
	keep func([]pipeline.Document)) (*evaluate.Report, error) {
	total, err := run.Store.CountDocuments(ctx, c, split)
	if err != nil {
		return nil, err
	}
	acc, err := evaluate.NewAccumulator(opt)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	done, message := 0, "scoring "+sys.Name+" against "+gold
	run.Progress(0, total, message)
	err = run.Store.EachBatch(ctx, c, gold, split, evaluateBatch, func(batch []pipeline.Document) error {
		system, err := run.Store.SetSpans(ctx, sys, batch)
		if err != nil {
			return err
		}
		if err := acc.Add(batch, system); err != nil {
			return apperr.Wrap(apperr.Invalid, err)
		}
		if keep != nil {
			keep(batch)
		}
		done += len(batch)
		run.Progress(done, total, message)
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	report, err := acc.Report()
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	return report, nil
}
