package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/document"
	"deidcorpus/internal/seqs"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/phi"
	"deidcorpus/pipeline/release"
)

// ImportOptions say where imported documents go.
type ImportOptions struct {
	Corpus string
	// TagSet is the tag set of a new corpus ("" means open); for an existing
	// corpus it must be empty or equal to the corpus's.
	TagSet string
	// Format of the files; default the one a release archive's release.json
	// in them names (as TagSet, for a new corpus), else "i2b2".
	Format string
	// Split overrides the split the files give; "" keeps theirs.
	Split string
	Set   string // annotation set for the files' spans; default "gold"
	// Kind of a new annotation set; default "gold" for the set named gold,
	// "annotator" otherwise.
	Kind    string
	Replace bool
	// Provenance of a new corpus; default {"source": "import", "format": ...}.
	Provenance map[string]any
	// Origin of a new corpus (default import), and the corpus it was made
	// from, if any (SourceID).
	Origin   corpus.Origin
	SourceID int
	// CorpusKind of a new corpus: "original" (the default) or "surrogate"
	// (text whose PHI was already replaced, which researchers may see). For
	// an existing corpus it must be empty or equal to the corpus's.
	CorpusKind string
	// Progress, if set, is called as documents are written; Checked, if
	// set, as they are checked before (their total is not known yet).
	Progress func(done, total int)
	Checked  func(done int)
	// MaxNote is the most bytes a note may take in the files (0: the
	// default, formats.DefaultMaxNote); see formats.ReadOptions.
	MaxNote int64
	// MaxImport is the most bytes the files may hold once decompressed, all
	// together (0: formats.DefaultMaxImport): see WithinBudget.
	MaxImport int64
	// Columns names the header's column of each field of a table format
	// ("id=note_id,text=note_text": formats.ParseColumns).
	Columns string
	// Resume continues an import an earlier attempt began (a job's retry
	// after its worker died): a document the corpus already holds with the
	// same text and the same spans in the set is taken as written by that
	// attempt, not as a conflict.
	Resume bool
	// release is the tag set a release archive's release.json gives a new
	// corpus when TagSet is empty, and the file (ReleaseDefaults).
	release release.Stated
	// splitOf, if set, gives a document that has no split and no Split
	// above one by its id (releaseSplits).
	splitOf func(id string) string
	// importedAt, if set, is the documents' import time instead of this
	// machine's clock (SaveResynthesisBatch).
	importedAt time.Time
	// into, if set, is the only corpus the import may write to: the id
	// of the one named Corpus, or 0 when it must make it (Derive, which
	// checked the name first).
	into *int
}

// ImportResult tells what an import did.
type ImportResult struct {
	Corpus        *ent.Corpus
	CreatedCorpus bool
	Documents     int
	Spans         int
	Replaced      int
	// WithoutSpans counts the documents imported with no span in the set:
	// notes without PHI, or a sign of annotations that went missing (a
	// brat .txt without its .ann).
	WithoutSpans int
	// Moved counts the replaced documents, their text unchanged, that the
	// import put in another split or note type than they had.
	Moved int
	// Skipped counts the files of the input the format does not read (in a
	// directory or an archive given), SkippedNames the first few.
	Skipped      int
	SkippedNames []string
	// Dropped counts the spans a derived corpus's mapping dropped.
	Dropped int
	// Ignored counts, by kind, what the files held that a document cannot
	// keep (brat's attributes and relations), and which the import lost.
	Ignored map[string]int
	// Format is the format the files were read in; FromRelease, if not
	// empty, the release.json that gave it or the new corpus's tag set
	// (the options left them out).
	Format, FromRelease string
	// Detected, when the options named no format and no release gave one,
	// is what chose the format from the files (formats.Detect).
	Detected *formats.Detected
}

// Validate checks what it can of the options without a database: the
// names a corpus, format, tag set, split or kind must be one of. A caller
// that creates its database on first use (the CLI) checks before it opens.
func (opt ImportOptions) Validate() error {
	return opt.defaults()
}

// defaults fills in and checks the options shared by every import.
func (opt *ImportOptions) defaults() error {
	if opt.Corpus == "" {
		return apperr.New(apperr.Invalid, "a corpus name is required")
	}
	if opt.TagSet != "" {
		if _, ok := phi.Lookup(opt.TagSet); !ok {
			return apperr.New(apperr.Invalid, "tagset: %v", phi.UnknownTagSet(opt.TagSet, phi.Names()))
		}
	}
	if opt.Split != "" {
		if _, err := normalizeSplit(opt.Split); err != nil {
			return apperr.New(apperr.Invalid, "split: %v", err)
		}
	}
	if opt.Format == "" {
		opt.Format = formats.Default
	}
	if _, err := formats.Lookup(opt.Format); err != nil {
		return apperr.New(apperr.Invalid, "format: %v", err)
	}
	if _, err := formats.ParseColumns(opt.Columns); err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	if opt.Set == "" {
		opt.Set = "gold"
	}
	if opt.Kind == "" {
		opt.Kind = "annotator"
		if opt.Set == "gold" {
			opt.Kind = "gold"
		}
	}
	if err := annotationsKind(opt.Kind); err != nil {
		return fmt.Errorf("kind: %w", err)
	}
	if opt.CorpusKind != "" && corpus.KindValidator(corpus.Kind(opt.CorpusKind)) != nil {
		return apperr.New(apperr.Invalid, "corpusKind: unknown corpus kind %q (original or surrogate)", opt.CorpusKind)
	}
	return nil
}

// batch sizes keep each INSERT well under SQLite's and PostgreSQL's limits on
// bound parameters.
const (
	docBatch  = 200
	spanBatch = 1000
)

// importKeep bounds the text of the documents an import's check keeps for
// its write pass: an input that fits is parsed once, a bigger one twice.
var importKeep = 8 << 20

// Import parses files and writes their documents into a corpus, as
// ImportFrom does.
func (s *Store) Import(ctx context.Context, opt ImportOptions, files []formats.File) (*ImportResult, error) {
	return s.ImportFrom(ctx, opt, formats.Files(files))
}

// ImportFrom parses the files of src and writes their documents into a
// corpus, creating the corpus and the annotation set when needed, holding
// one file and one batch of documents in memory at a time. It is all or
// nothing: a first pass parses and checks every file (labels, offsets,
// splits, duplicate ids, conflicts with the corpus) and keeps only the
// document ids; a second pass parses them again and writes them a batch at
// a time, each batch in its own transaction. If a write fails, a corpus the
// import created is removed; one that existed keeps the batches written
// (an import job's retry resumes after them, see ImportOptions.Resume).
func (s *Store) ImportFrom(ctx context.Context, opt ImportOptions, src formats.Source) (*ImportResult, error) {
	if err := opt.WithinBudget(src); err != nil {
		return nil, err
	}
	fromRelease, detected, err := ImportFormat(&opt, src)
	if err != nil {
		return nil, err
	}
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	format, err := formats.Lookup(opt.Format)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	existing, ts, tagset, err := s.importTarget(ctx, opt)
	if err != nil {
		return nil, err
	}
	if opt.Split == "" {
		splits := release.NewSplits(func(split string) error {
			_, err := normalizeSplit(split)
			return err
		})
		src = splits.Watch(src)
		opt.splitOf = splits.Of
	}
	files := newFileReader(src, format, opt, ts)
	im, err := s.newImporter(opt, existing, tagset, files.scan)
	if err != nil {
		return nil, err
	}
	res, err := im.run(ctx)
	if res != nil {
		res.Skipped, res.SkippedNames, res.Ignored = files.skippedFiles, files.skipped, files.ignored
		res.Format, res.FromRelease, res.Detected = opt.Format, fromRelease, detected
	}
	return res, err
}

// fileReader parses an import's files in its format, and notes the files
// the format does not read.
type fileReader struct {
	src    formats.Source
	format *formats.Format
	name   string // the format's
	read   formats.ReadOptions
	// The files skipped by the latest reading (each reads the same files):
	// the first few, and how many.
	skipped      []string
	skippedFiles int
	// What the latest reading could not keep, by kind.
	ignored map[string]int
}

// newFileReader reads src in format under opt, checking labels against ts.
func newFileReader(src formats.Source, format *formats.Format, opt ImportOptions, ts *phi.TagSet) *fileReader {
	r := &fileReader{src: src, format: format, name: opt.Format}
	r.read = formats.ReadOptions{Label: func(cat, typ string) (string, string, error) {
		c, t, err := phi.Normalize(ts, cat, typ)
		if ue := (*phi.UnknownTypeError)(nil); errors.As(err, &ue) {
			err = otherTagSet(ue)
		}
		return c, t, err
	}, Skipped: func(file string) {
		// A release archive's own files are not notes, and release.json
		// gives the splits.
		if release.OwnFile(file) {
			return
		}
		if len(r.skipped) < maxSkippedNames {
			r.skipped = append(r.skipped, file)
		}
		r.skippedFiles++
	}, KeepGoing: maxFileErrors, MaxNote: opt.MaxNote, Dropped: func(kind string) {
		if r.ignored == nil {
			r.ignored = map[string]int{}
		}
		r.ignored[kind]++
	}}
	r.read.Columns, _ = formats.ParseColumns(opt.Columns) // checked by defaults
	return r
}

// scan gives fn every document of the files, in order.
func (r *fileReader) scan(fn func(pipeline.Document) error) error {
	r.skipped, r.skippedFiles, r.ignored = r.skipped[:0], 0, nil
	var fnErr error
	err := r.format.Scan(r.src, r.read, func(d pipeline.Document) error {
		fnErr = fn(d)
		return fnErr
	})
	switch {
	case err == nil || err == fnErr:
		return err
	case errors.Is(err, formats.ErrNoDocuments):
		// The caller knows what the input was, and may name it.
		return &apperr.Error{Code: apperr.Invalid, Msg: fmt.Sprintf("no %s documents in the given input", r.name), Err: err}
	case errors.Is(err, fs.ErrNotExist):
		return apperr.Wrap(apperr.NotFound, err)
	}
	return apperr.Wrap(apperr.Invalid, err)
}

// ImportFormat fills in the format opt leaves out: a release archive's
// (ReleaseDefaults, whose file it returns), else the one Detect finds that
// reads the files (returned), else formats.Default.
func ImportFormat(opt *ImportOptions, src formats.Source) (string, *formats.Detected, error) {
	fromRelease, err := ReleaseDefaults(opt, src)
	if err != nil || opt.Format != "" {
		return fromRelease, nil, err
	}
	d, ok, err := formats.Detect(src)
	if err != nil {
		return "", nil, apperr.Wrap(apperr.Invalid, err)
	}
	if !ok {
		return fromRelease, nil, nil
	}
	opt.Format = d.Format
	return fromRelease, &d, nil
}

// ReleaseDefaults fills in what opt leaves out, the format and the tag set
// (kept for a new corpus: see importTarget), from the release.json of the
// release archives (or unzipped ones) in src (release.ReadDefaults), and
// returns the file it read ("" for none). Two releases that disagree on
// what opt leaves out are an error: the caller must say it.
func ReleaseDefaults(opt *ImportOptions, src formats.Source) (string, error) {
	if opt.Format != "" && opt.TagSet != "" {
		return "", nil
	}
	d, err := release.ReadDefaults(src, opt.Format == "", opt.TagSet == "")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", apperr.Wrap(apperr.NotFound, err)
		}
		return "", apperr.Wrap(apperr.Invalid, err)
	}
	if d.Format.Value != "" {
		opt.Format = d.Format.Value
	}
	if d.TagSet.Value != "" {
		opt.release = d.TagSet
	}
	if d.Format.Value == "" && d.TagSet.Value == "" {
		return "", nil
	}
	return cmp.Or(d.Format.From, d.TagSet.From), nil
}

// maxSkippedNames is how many of the files an import skipped it names.
const maxSkippedNames = 3

// ImportDocuments writes documents that are already parsed (generated ones,
// or a pipeline's output) as Import does, checking their labels against the
// corpus's tag set and their spans against their text first.
func (s *Store) ImportDocuments(ctx context.Context, opt ImportOptions, docs []pipeline.Document) (*ImportResult, error) {
	return s.importParsed(ctx, opt, func(fn func(pipeline.Document) error) error {
		for _, d := range docs {
			if err := fn(d); err != nil {
				return err
			}
		}
		return nil
	})
}

// importParsed is ImportDocuments over the documents scan gives (the same
// ones, in the same order, every time it is called).
func (s *Store) importParsed(ctx context.Context, opt ImportOptions, scan func(func(pipeline.Document) error) error) (*ImportResult, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	existing, ts, tagset, err := s.importTarget(ctx, opt)
	if err != nil {
		return nil, err
	}
	checked := func(fn func(pipeline.Document) error) error {
		return scan(func(d pipeline.Document) error {
			d.Spans = slices.Clone(d.Spans)
			for j := range d.Spans {
				var err error
				sp := &d.Spans[j]
				if sp.Category, sp.Type, err = phi.Normalize(ts, sp.Category, sp.Type); err != nil {
					return apperr.New(apperr.Invalid, "document %s: span %d: %v", d.ID, j, err)
				}
			}
			if err := d.Validate(false); err != nil {
				return apperr.New(apperr.Invalid, "document %s: %v", d.ID, err)
			}
			d.FillText()
			d.SortSpans()
			return fn(d)
		})
	}
	im, err := s.newImporter(opt, existing, tagset, checked)
	if err != nil {
		return nil, err
	}
	return im.run(ctx)
}

// importTarget finds the corpus an import goes to (nil if it is new) and the
// tag set its labels are checked against.
func (s *Store) importTarget(ctx context.Context, opt ImportOptions) (*ent.Corpus, *phi.TagSet, string, error) {
	existing, err := s.Client.Corpus.Query().Where(corpus.Name(opt.Corpus)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return nil, nil, "", err
	}
	if opt.into != nil {
		got := 0
		if existing != nil {
			got = existing.ID
		}
		if got != *opt.into {
			return nil, nil, "", apperr.New(apperr.Conflict, "corpus %q was made or removed by another writer meanwhile", opt.Corpus)
		}
	}
	if existing == nil {
		if err := checkCorpusName(opt.Corpus); err != nil {
			return nil, nil, "", err
		}
	}
	tagset := opt.TagSet
	if existing != nil {
		if tagset != "" && tagset != existing.Tagset {
			return nil, nil, "", apperr.New(apperr.Conflict, "corpus %q has tag set %s, not %s", opt.Corpus, existing.Tagset, tagset)
		}
		tagset = existing.Tagset
		if opt.CorpusKind != "" && opt.CorpusKind != string(existing.Kind) {
			return nil, nil, "", apperr.New(apperr.Conflict, "corpus %q is %s, not %s", opt.Corpus, existing.Kind, opt.CorpusKind)
		}
	}
	if tagset == "" && opt.release.Value != "" {
		if _, ok := phi.Lookup(opt.release.Value); !ok {
			return nil, nil, "", apperr.New(apperr.Invalid, "%s: tagset: %v: give the corpus's tag set",
				opt.release.From, phi.UnknownTagSet(opt.release.Value, phi.Names()))
		}
		tagset = opt.release.Value
	}
	if tagset == "" {
		tagset = phi.Open
	}
	ts, ok := phi.Lookup(tagset)
	if !ok {
		return nil, nil, "", apperr.Wrap(apperr.Invalid, phi.UnknownTagSet(tagset, phi.Names()))
	}
	return existing, ts, tagset, nil
}

// importer is one import of documents into a corpus, in steps: check (a
// first pass that parses and checks every document, against the corpus's
// own too), write (the documents a batch per transaction, in order), abort
// (take away the corpus it made, when a write fails) and finish.
type importer struct {
	s        *Store
	opt      ImportOptions
	existing *ent.Corpus // nil: the import makes the corpus
	tagset   string
	// scan gives the documents: the same ones, in the same order, every
	// time it is called.
	scan  func(func(pipeline.Document) error) error
	split *document.Split // the split the options give every document
	total int             // the documents, counted by check
	res   *ImportResult
	// committed counts the batches written: each bumps the corpus's content
	// version once.
	committed int
}

func (s *Store) newImporter(opt ImportOptions, existing *ent.Corpus, tagset string, scan func(func(pipeline.Document) error) error) (*importer, error) {
	im := &importer{s: s, opt: opt, existing: existing, tagset: tagset, scan: scan, res: &ImportResult{Corpus: existing}}
	if opt.Split != "" {
		sp, err := normalizeSplit(opt.Split)
		if err != nil {
			return nil, err
		}
		im.split = &sp
	}
	return im, nil
}

// run checks, then writes, the documents: all of them, or (aborted) none
// in a corpus it made.
func (im *importer) run(ctx context.Context) (*ImportResult, error) {
	if err := im.check(ctx); err != nil {
		return nil, err
	}
	if err := im.write(ctx); err != nil {
		return nil, im.abort(ctx, err)
	}
	return im.finish(ctx)
}

// prepare gives a document the split the import gives it and checks what
// the corpus needs of it.
func (im *importer) prepare(d *pipeline.Document) error {
	if im.split != nil {
		d.Split = string(*im.split)
	} else if d.Split == "" && im.opt.splitOf != nil {
		d.Split = im.opt.splitOf(d.ID)
	}
	if _, err := normalizeSplit(d.Split); err != nil {
		return apperr.New(apperr.Invalid, "document %s: %v", d.ID, err)
	}
	if d.Patient == "" {
		return apperr.New(apperr.Invalid, "document %s has no patient id", d.ID)
	}
	for _, sp := range d.Spans {
		if sp.Start < 0 || sp.End < 0 {
			return apperr.New(apperr.Invalid, "document %s: span %s: negative offset", d.ID, sp.Label())
		}
	}
	return nil
}

// check is an import's first pass: it parses and checks every document,
// and, for an existing corpus, finds the documents that conflict with its
// own a batch at a time. It counts the documents, and keeps them for the
// write if their text is under importKeep.
func (im *importer) check(ctx context.Context) error {
	if err := im.refuseUnfinished(); err != nil {
		return err
	}
	opt, existing := im.opt, im.existing
	setID, err := im.existingSet(ctx)
	if err != nil {
		return err
	}
	var pending []pipeline.Document
	pendingBytes := 0
	var conflicts, newText firstIDs // memory holds a few, however large the import
	resynthesized := existing != nil && existing.Origin == corpus.OriginResynthesis
	lookup := func() error {
		if existing != nil && len(pending) > 0 {
			found, err := lookupExisting(ctx, im.s.Client, existing.ID, setID, pending, opt.Resume)
			if err != nil {
				return err
			}
			conflicts.add(found.conflicts(pending)...)
			if resynthesized {
				newText.add(found.newText(pending)...)
			}
		}
		pending, pendingBytes = pending[:0], 0
		return nil
	}
	total := 0
	var kept []pipeline.Document
	keep, size := true, 0
	err = im.scan(func(d pipeline.Document) error {
		if err := im.prepare(&d); err != nil {
			return err
		}
		total++
		if opt.Checked != nil && total%importBatch == 0 {
			opt.Checked(total)
		}
		if size += len(d.Text); keep && size <= importKeep {
			kept = append(kept, d)
		} else {
			keep, kept = false, nil
		}
		if existing == nil {
			return nil
		}
		pending, pendingBytes = append(pending, d), pendingBytes+docBytes(d)
		if len(pending) < docBatch && pendingBytes < importBatchBytes {
			return nil
		}
		return lookup()
	})
	if err == nil {
		err = lookup()
	}
	if err == nil && newText.n > 0 {
		err = resynthesizedError(opt, newText)
	}
	if err == nil && !opt.Replace && conflicts.n > 0 {
		err = conflictError(opt, conflicts)
	}
	if err != nil {
		return err
	}
	im.total = total
	if kept != nil {
		im.scan = func(fn func(pipeline.Document) error) error {
			for _, d := range kept {
				if err := fn(d); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return nil
}

// refuseUnfinished refuses to add to a corpus whose making import has not
// finished, unless the import completes it (replace) or is its retry (resume).
func (im *importer) refuseUnfinished() error {
	opt, existing := im.opt, im.existing
	if existing != nil && unfinishedImport(existing) && !opt.Replace && !opt.Resume {
		return apperr.New(apperr.Conflict, "corpus %q holds an import that has not finished (still running, or its "+
			"process ended first): complete it by importing the same files again with replace (--replace; the documents "+
			"already there are kept), or delete the corpus (deidcorpus corpora delete %s)", existing.Name, existing.Name)
	}
	return nil
}

// existingSet is the id of the annotation set the import writes, 0 if it
// is not made yet.
func (im *importer) existingSet(ctx context.Context) (int, error) {
	if im.existing == nil {
		return 0, nil
	}
	set, err := im.s.Client.AnnotationSet.Query().Where(annotationset.CorpusID(im.existing.ID), annotationset.Name(im.opt.Set)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return 0, err
	}
	if set != nil {
		return set.ID, nil
	}
	return 0, nil
}

// write is an import's second pass: it writes the documents a batch at a
// time, in order, each while the next is parsed. A batch ends at the first
// change of patient after importBatch documents, or before it would pass
// importBatchBytes.
func (im *importer) write(ctx context.Context) error {
	return seqs.Ahead(ctx, func(ctx context.Context, send func([]pipeline.Document) error) error {
		var batch []pipeline.Document
		sent, size := 0, 0
		err := im.scan(func(d pipeline.Document) error {
			if err := im.prepare(&d); err != nil {
				return err
			}
			n := docBytes(d)
			full := len(batch) >= importBatch && d.Patient != batch[len(batch)-1].Patient
			if len(batch) > 0 && (full || size+n > importBatchBytes) {
				if err := send(batch); err != nil {
					return err
				}
				batch, sent, size = nil, sent+1, 0
			}
			batch, size = append(batch, d), size+n
			return nil
		})
		if err == nil && (len(batch) > 0 || sent == 0 && im.existing == nil) {
			err = send(batch) // an import of no documents still creates its corpus
		}
		return err
	}, func(batch []pipeline.Document) error { return im.writeBatch(ctx, batch) })
}

// writeBatch writes one batch in its own transaction, the first making the
// corpus if the import makes it, and reports progress when it commits.
func (im *importer) writeBatch(ctx context.Context, batch []pipeline.Document) error {
	opt, res, tagset := im.opt, im.res, im.tagset
	write := opt
	write.Progress = nil // reported per committed batch
	var created *ent.Corpus
	err := im.s.withTx(ctx, func(tx *ent.Tx) error {
		c := res.Corpus
		if c == nil {
			provenance := opt.Provenance
			if provenance == nil {
				provenance = map[string]any{"source": "import", "format": opt.Format}
			}
			create := importingCorpus(tx, opt, tagset, provenance)
			if opt.CorpusKind != "" {
				create.SetKind(corpus.Kind(opt.CorpusKind))
			}
			var err error
			if c, err = create.Save(ctx); err != nil {
				return err
			}
			created = c
		}
		set, err := getOrCreateSet(ctx, tx, c.ID, opt.Set, opt.Kind)
		if err != nil {
			return err
		}
		return im.s.writeDocuments(ctx, tx, c.ID, set.ID, batch, write, res)
	})
	if err != nil {
		return err
	}
	if created != nil {
		res.Corpus, res.CreatedCorpus = created, true
	}
	im.committed++
	if opt.Progress != nil {
		opt.Progress(res.Documents, im.total)
	}
	return nil
}

// abort follows a failed write (err): a corpus the import made is taken
// away whole rather than left with half an import, unless someone else
// wrote to it meanwhile (an import completing it with replace): its
// version counts every write. It returns the error to report.
func (im *importer) abort(ctx context.Context, err error) error {
	res := im.res
	if !res.CreatedCorpus {
		return err
	}
	bg := context.WithoutCancel(ctx)
	c, gerr := im.s.Client.Corpus.Get(bg, res.Corpus.ID)
	if gerr == nil && c.ContentVersion != im.committed {
		return fmt.Errorf("%w (corpus %q is left as it is: another writer wrote to it meanwhile)", err, c.Name)
	}
	if derr := im.s.Client.Corpus.DeleteOneID(res.Corpus.ID).Exec(bg); derr != nil {
		return fmt.Errorf("%w (removing the partly imported corpus: %v)", err, derr)
	}
	return err
}

// finish marks the import finished, this one or the one it completed with
// replace, and reloads the corpus outside the committed transactions so
// callers can follow edges.
func (im *importer) finish(ctx context.Context) (*ImportResult, error) {
	res := im.res
	if unfinishedImport(res.Corpus) || res.CreatedCorpus {
		// Finished: this import, or the one it completed with replace.
		if err := finishImport(ctx, im.s.Client, res.Corpus); err != nil {
			return nil, fmt.Errorf("mark the import of corpus %q finished: %w", res.Corpus.Name, err)
		}
	}
	var err error
	res.Corpus, err = im.s.Client.Corpus.Get(ctx, res.Corpus.ID)
	return res, err
}

// resynthesizedError refuses text imported into a corpus made by
// resynthesis: its check (which --share relies on) read only the text
// resynthesis wrote, so a note added or replaced there could carry
// original PHI into a shared release. Layers on its notes, their text
// unchanged, are welcome.
func resynthesizedError(opt ImportOptions, ids firstIDs) error {
	return apperr.New(apperr.Conflict, "corpus %q was made by resynthesis, and its check covers only the text resynthesis wrote: "+
		"the import would add or change the text of %s. Import them into a corpus of their own (text whose PHI was "+
		"replaced elsewhere with --corpus-kind surrogate), or resynthesize the source again with them in it",
		opt.Corpus, ids.describe("document"))
}

// conflictError names the first conflicting documents.
func conflictError(opt ImportOptions, conflicts firstIDs) error {
	return apperr.New(apperr.Conflict, "corpus %q already has %s in set %q (import with replace, --replace on the command line, to overwrite them)",
		opt.Corpus, conflicts.describe("document(s)"), opt.Set)
}

// firstIDs keeps the first few ids in sort order of those added, and counts
// them all.
type firstIDs struct {
	ids []string
	n   int
}

// firstIDsKept is how many ids an error names.
const firstIDsKept = 5

func (f *firstIDs) add(ids ...string) {
	for _, id := range ids {
		f.n++
		i, _ := slices.BinarySearch(f.ids, id)
		if i < firstIDsKept {
			f.ids = slices.Insert(f.ids, i, id)[:min(len(f.ids)+1, firstIDsKept)]
		}
	}
}

// describe names the ids kept after noun, and counts the rest.
func (f firstIDs) describe(noun string) string {
	more := ""
	if f.n > len(f.ids) {
		more = fmt.Sprintf(" and %d more", f.n-len(f.ids))
	}
	return noun + " " + strings.Join(f.ids, ", ") + more
}

// otherTagSet explains a type the corpus's tag set lacks: which declarable
// tag set has it (MEDDOCAN's PROFESION is no misspelt PROFESSION), else the
// misspelling it is, else the open tag set.
func otherTagSet(ue *phi.UnknownTypeError) error {
	for _, name := range phi.Names() {
		other, _ := phi.Lookup(name)
		if other == nil || other == ue.TagSet {
			continue
		}
		if _, ok := other.CategoryOf(ue.Type); ok {
			hint := ""
			if name == phi.MEDDOCANName && ue.TagSet.Name == phi.I2B22014 {
				hint = " (derive --mapping meddocan-i2b2 then makes an i2b2 2014 copy)"
			}
			return &otherTagSetError{ue: ue, problem: fmt.Sprintf("types of tag set %s, not %s: import with tag set %s%s", name, ue.TagSet.Name, name, hint),
				msg: fmt.Sprintf("type %q is %s's, not %s's: import with tag set %s%s", ue.Type, name, ue.TagSet.Name, name, hint)}
		}
	}
	if len(ue.Near) > 0 {
		return ue
	}
	return &otherTagSetError{ue: ue,
		problem: fmt.Sprintf("types not in tag set %s (known: %s); a corpus with labels of its own is imported with tag set %s", ue.TagSet.Name, strings.Join(ue.TagSet.Types(), ", "), phi.Open),
		msg:     fmt.Sprintf("%v; a corpus with labels of its own is imported with tag set %s", ue, phi.Open)}
}

// otherTagSetError is a type the corpus's tag set lacks: a formats.Problem,
// so that an import of files of another tag set says so in one line, not
// once a file.
type otherTagSetError struct {
	ue           *phi.UnknownTypeError
	problem, msg string
}

func (e *otherTagSetError) Error() string   { return e.msg }
func (e *otherTagSetError) Unwrap() error   { return e.ue }
func (e *otherTagSetError) Problem() string { return e.problem }
func (e *otherTagSetError) Detail() string  { return e.ue.Type }

// maxFileErrors is how many files with errors an import reports, reading
// on past each, before it stops.
const maxFileErrors = 20
