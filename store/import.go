package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/document"
	"deidcorpus/ent/patient"
	"deidcorpus/ent/span"
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
	// Resume continues an import an earlier attempt began (a job's retry
	// after its worker died): a document the corpus already holds with the
	// same text and the same spans in the set is taken as written by that
	// attempt, not as a conflict.
	Resume bool
	// release is the tag set a release archive's release.json gives a new
	// corpus when TagSet is empty, and the file (ReleaseDefaults).
	release stated
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
	// Format is the format the files were read in; FromRelease, if not
	// empty, the release.json that gave it or the new corpus's tag set
	// (the options left them out).
	Format, FromRelease string
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

// importBatch is about how many documents an import writes per transaction:
// a batch ends at the first change of patient after it, so that a patient's
// notes that follow each other in the input are written together. Short
// transactions keep SQLite's one writer free for heartbeats and requests.
const importBatch = 500

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
	fromRelease, err := ReleaseDefaults(&opt, src)
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
	var (
		skipped      []string // the first few, of the latest reading: each reads the same files
		skippedFiles int
	)
	read := formats.ReadOptions{Label: func(cat, typ string) (string, string, error) {
		c, t, err := phi.Normalize(ts, cat, typ)
		if ue := (*phi.UnknownTypeError)(nil); errors.As(err, &ue) {
			err = otherTagSet(ue)
		}
		return c, t, err
	}, Skipped: func(file string) {
		// A release archive's own files, in it or in its unzipped folder
		// (whose files are named by their paths): not notes, and release.json
		// gives the splits.
		switch path.Base(archiveMember(file)) {
		case release.ManifestFile, release.DatasheetFile, release.MetaFile:
			return
		}
		if len(skipped) < maxSkippedNames {
			skipped = append(skipped, file)
		}
		skippedFiles++
	}, KeepGoing: maxFileErrors, MaxNote: opt.MaxNote}
	scan := func(fn func(pipeline.Document) error) error {
		skipped, skippedFiles = skipped[:0], 0
		var fnErr error
		err := format.Scan(src, read, func(d pipeline.Document) error {
			fnErr = fn(d)
			return fnErr
		})
		switch {
		case err == nil || err == fnErr:
			return err
		case errors.Is(err, formats.ErrNoDocuments):
			// The caller knows what the input was, and may name it.
			return &apperr.Error{Code: apperr.Invalid, Msg: fmt.Sprintf("no %s documents in the given input", opt.Format), Err: err}
		case errors.Is(err, fs.ErrNotExist):
			return apperr.Wrap(apperr.NotFound, err)
		}
		return apperr.Wrap(apperr.Invalid, err)
	}
	if opt.Split == "" {
		released := &releaseSplits{split: map[string]string{}, read: map[string]bool{}}
		src = released.watch(src)
		opt.splitOf = released.of
	}
	res, err := s.importStream(ctx, opt, existing, tagset, scan)
	if res != nil {
		res.Skipped, res.SkippedNames = skippedFiles, skipped
		res.Format, res.FromRelease = opt.Format, fromRelease
	}
	return res, err
}

// ReleaseDefaults fills in what opt leaves out, the format and the tag set
// (kept for a new corpus: see importTarget), from the release.json of the
// release archives (or unzipped ones) in src, and returns the file it read
// ("" for none). It reads the names of src's files and the head of each
// release.json, not its documents. A release.json that is no release's (no
// name or version, or not readable as one) is passed over here: it gives the
// splits or fails the import only where releaseSplits reads it. Two releases
// that disagree on what opt leaves out are an error: the caller must say it.
func ReleaseDefaults(opt *ImportOptions, src formats.Source) (string, error) {
	if opt.Format != "" && opt.TagSet != "" {
		return "", nil
	}
	var format, tagset stated
	err := src(func(f formats.File) error {
		if archiveMember(f.Name) != release.MetaFile {
			return nil
		}
		m, err := releaseHead(f)
		if err != nil || m.Name == "" || m.Version == "" {
			return nil
		}
		where := cmp.Or(f.Path, f.Name)
		if opt.Format == "" {
			if err := format.add(where, m.Format, "format"); err != nil {
				return err
			}
		}
		if opt.TagSet == "" {
			if err := tagset.add(where, m.TagSet, "tag set"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", apperr.Wrap(apperr.NotFound, err)
		}
		return "", apperr.Wrap(apperr.Invalid, err)
	}
	if format.value != "" {
		if _, err := formats.Lookup(format.value); err != nil {
			return "", apperr.New(apperr.Invalid, "%s: format: %v: give the files' format", format.from, err)
		}
		opt.Format = format.value
	}
	if tagset.value != "" {
		opt.release = tagset
	}
	if format.value == "" && tagset.value == "" {
		return "", nil
	}
	return cmp.Or(format.from, tagset.from), nil
}

// stated is what the release.json files read so far say of one field, and
// the first that said it; one that says nothing agrees with any.
type stated struct{ value, from string }

func (s *stated) add(where, value, field string) error {
	switch {
	case value == "" || value == s.value:
	case s.value == "":
		s.value, s.from = value, where
	default:
		return apperr.New(apperr.Invalid, "%s is a release in %s %s and %s one in %s %s: import them one at a time, or give the %s",
			s.from, field, s.value, where, field, value, field)
	}
	return nil
}

// releaseHead reads a release.json's fields up to its manifest's documents.
func releaseHead(f formats.File) (release.Meta, error) {
	rc, err := f.Open()
	if err != nil {
		return release.Meta{}, err
	}
	defer rc.Close()
	stop := errors.New("stop")
	m, _, err := release.ReadMeta(rc, func(release.Entry) error { return stop })
	if err == stop {
		err = nil
	}
	return m, err
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
	return s.importStream(ctx, opt, existing, tagset, checked)
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
	if tagset == "" && opt.release.value != "" {
		if _, ok := phi.Lookup(opt.release.value); !ok {
			return nil, nil, "", apperr.New(apperr.Invalid, "%s: tagset: %v: give the corpus's tag set",
				opt.release.from, phi.UnknownTagSet(opt.release.value, phi.Names()))
		}
		tagset = opt.release.value
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

// importStream checks, then writes in batches, the documents scan gives
// (the same ones, in the same order, every time it is called).
func (s *Store) importStream(ctx context.Context, opt ImportOptions, existing *ent.Corpus, tagset string, scan func(func(pipeline.Document) error) error) (*ImportResult, error) {
	if existing != nil && unfinishedImport(existing) && !opt.Replace && !opt.Resume {
		return nil, apperr.New(apperr.Conflict, "corpus %q holds an import that has not finished (still running, or its "+
			"process ended first): complete it by importing the same files again with replace (--replace; the documents "+
			"already there are kept), or delete the corpus (deidcorpus corpora delete %s)", existing.Name, existing.Name)
	}
	var split *document.Split
	if opt.Split != "" {
		sp, err := normalizeSplit(opt.Split)
		if err != nil {
			return nil, err
		}
		split = &sp
	}
	prepare := func(d *pipeline.Document) error {
		if split != nil {
			d.Split = string(*split)
		} else if d.Split == "" && opt.splitOf != nil {
			d.Split = opt.splitOf(d.ID)
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
	kept, total, err := s.checkImport(ctx, opt, existing, scan, prepare)
	if err != nil {
		return nil, err
	}
	if kept != nil {
		scan = func(fn func(pipeline.Document) error) error {
			for _, d := range kept {
				if err := fn(d); err != nil {
					return err
				}
			}
			return nil
		}
	}

	provenance := opt.Provenance
	if provenance == nil {
		provenance = map[string]any{"source": "import", "format": opt.Format}
	}
	res := &ImportResult{Corpus: existing}
	write := opt
	write.Progress = nil // reported per committed batch
	committed := 0       // batches: each bumps the corpus's content version once
	flush := func(batch []pipeline.Document) error {
		var created *ent.Corpus
		err := s.withTx(ctx, func(tx *ent.Tx) error {
			c := res.Corpus
			if c == nil {
				// Marked until the last batch commits: a process killed
				// meanwhile leaves a corpus that says so.
				marked := maps.Clone(provenance)
				marked[provUnfinishedImport] = time.Now().UTC().Format(time.RFC3339)
				create := tx.Corpus.Create().SetName(opt.Corpus).SetTagset(tagset).SetProvenance(marked)
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
			return s.writeDocuments(ctx, tx, c.ID, set.ID, batch, write, res)
		})
		if err != nil {
			return err
		}
		if created != nil {
			res.Corpus, res.CreatedCorpus = created, true
		}
		committed++
		if opt.Progress != nil {
			opt.Progress(res.Documents, total)
		}
		return nil
	}
	// A batch is written, in order, while the next is parsed.
	err = seqs.Ahead(ctx, func(ctx context.Context, send func([]pipeline.Document) error) error {
		var batch []pipeline.Document
		sent := 0
		err := scan(func(d pipeline.Document) error {
			if err := prepare(&d); err != nil {
				return err
			}
			if len(batch) >= importBatch && d.Patient != batch[len(batch)-1].Patient {
				if err := send(batch); err != nil {
					return err
				}
				batch, sent = nil, sent+1
			}
			batch = append(batch, d)
			return nil
		})
		if err == nil && (len(batch) > 0 || sent == 0 && existing == nil) {
			err = send(batch) // an import of no documents still creates its corpus
		}
		return err
	}, flush)
	if err != nil {
		if res.CreatedCorpus {
			// Take the corpus away whole rather than leave half an import
			// behind, unless someone else wrote to it meanwhile (an import
			// completing it with replace): its version counts every write.
			bg := context.WithoutCancel(ctx)
			c, gerr := s.Client.Corpus.Get(bg, res.Corpus.ID)
			if gerr == nil && c.ContentVersion != committed {
				return nil, fmt.Errorf("%w (corpus %q is left as it is: another writer wrote to it meanwhile)", err, c.Name)
			}
			if derr := s.Client.Corpus.DeleteOneID(res.Corpus.ID).Exec(bg); derr != nil {
				return nil, fmt.Errorf("%w (removing the partly imported corpus: %v)", err, derr)
			}
		}
		return nil, err
	}
	if unfinishedImport(res.Corpus) || res.CreatedCorpus {
		// Finished: this import, or the one it completed with replace.
		prov := maps.Clone(res.Corpus.Provenance)
		delete(prov, provUnfinishedImport)
		if err := s.Client.Corpus.UpdateOneID(res.Corpus.ID).SetProvenance(prov).Exec(ctx); err != nil {
			return nil, fmt.Errorf("mark the import of corpus %q finished: %w", res.Corpus.Name, err)
		}
	}
	// Reload outside the committed transactions so callers can follow edges.
	res.Corpus, err = s.Client.Corpus.Get(ctx, res.Corpus.ID)
	return res, err
}

// checkImport is an import's first pass: it parses and checks every
// document, and, for an existing corpus, finds the documents that conflict
// with its own a batch at a time. It returns the number of documents, and
// the documents themselves if their text is under importKeep.
func (s *Store) checkImport(ctx context.Context, opt ImportOptions, existing *ent.Corpus, scan func(func(pipeline.Document) error) error, prepare func(*pipeline.Document) error) ([]pipeline.Document, int, error) {
	setID := 0
	if existing != nil {
		set, err := s.Client.AnnotationSet.Query().Where(annotationset.CorpusID(existing.ID), annotationset.Name(opt.Set)).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return nil, 0, err
		}
		if set != nil {
			setID = set.ID
		}
	}
	var pending []pipeline.Document
	var conflicts, newText firstIDs // memory holds a few, however large the import
	resynthesized := existing != nil && existing.Provenance["source"] == "resynthesis"
	check := func() error {
		if existing != nil && len(pending) > 0 {
			found, err := lookupExisting(ctx, s.Client, existing.ID, setID, pending, opt.Resume)
			if err != nil {
				return err
			}
			conflicts.add(found.conflicts(pending)...)
			if resynthesized {
				newText.add(found.newText(pending)...)
			}
		}
		pending = pending[:0]
		return nil
	}
	total := 0
	var kept []pipeline.Document
	keep, size := true, 0
	err := scan(func(d pipeline.Document) error {
		if err := prepare(&d); err != nil {
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
		pending = append(pending, d)
		if len(pending) < docBatch {
			return nil
		}
		return check()
	})
	if err == nil {
		err = check()
	}
	if err == nil && newText.n > 0 {
		err = resynthesizedError(opt, newText)
	}
	if err == nil && !opt.Replace && conflicts.n > 0 {
		err = conflictError(opt, conflicts)
	}
	return kept, total, err
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

func getOrCreateSet(ctx context.Context, tx *ent.Tx, corpusID int, name, kind string) (*ent.AnnotationSet, error) {
	set, err := tx.AnnotationSet.Query().Where(annotationset.CorpusID(corpusID), annotationset.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		return tx.AnnotationSet.Create().SetCorpusID(corpusID).SetName(name).
			SetKind(annotationset.Kind(kind)).Save(ctx)
	}
	return set, err
}

// provUnfinishedImport marks, in a corpus's provenance, an import that made
// the corpus and has not written its last batch (when it began).
const provUnfinishedImport = "unfinishedImport"

// unfinishedImport reports whether the import that made c has not finished.
func unfinishedImport(c *ent.Corpus) bool {
	_, ok := c.Provenance[provUnfinishedImport]
	return ok
}

// writeDocuments inserts docs and their spans into set. Existing documents
// conflict unless replace is set; a replaced document whose text is unchanged
// keeps its other annotation layers, one whose text changed loses them, since
// their offsets no longer hold. With resume set, a document already there
// with the same text and spans is counted and left as it is.
func (s *Store) writeDocuments(ctx context.Context, tx *ent.Tx, corpusID, setID int, docs []pipeline.Document, opt ImportOptions, res *ImportResult) error {
	found, err := lookupExisting(ctx, tx.Client(), corpusID, setID, docs, opt.Resume)
	if err != nil {
		return err
	}
	// A batch a resumed import finds written changes nothing: the corpus's
	// cached statistics stay valid.
	if len(docs) == 0 || len(found.done) < len(docs) {
		if err := s.bumpContentVersion(ctx, tx, corpusID); err != nil {
			return err
		}
	}
	if !opt.Replace {
		var conflicts firstIDs
		if conflicts.add(found.conflicts(docs)...); conflicts.n > 0 {
			return conflictError(opt, conflicts)
		}
	}
	if len(found.done) > 0 {
		docs = slices.DeleteFunc(slices.Clone(docs), func(d pipeline.Document) bool {
			if found.done[d.ID] {
				delete(found.layered, found.old[d.ID].ID) // its spans stay
				res.Documents++
				res.Spans += len(d.Spans)
				if len(d.Spans) == 0 {
					res.WithoutSpans++
				}
				return true
			}
			return false
		})
	}
	old, layered := found.old, found.layered

	patients, err := patientIDs(ctx, tx, corpusID, docs)
	if err != nil {
		return err
	}

	var fresh []pipeline.Document
	keep := map[string]int{} // external id -> existing row id, text unchanged
	for _, d := range docs {
		o, ok := old[d.ID]
		switch {
		case !ok:
			fresh = append(fresh, d)
		case o.Checksum == checksum(d.Text):
			keep[d.ID] = o.ID
			if layered[o.ID] {
				res.Replaced++
			}
			if opt.Replace {
				moved, err := s.moveDocument(ctx, tx, o, d)
				if err != nil {
					return err
				}
				if moved {
					res.Moved++
				}
			}
		default:
			if err := tx.Document.DeleteOneID(o.ID).Exec(ctx); err != nil {
				return err
			}
			// Written anew, where the import names a place or where it was.
			split, noteType := placeOf(o, d)
			d.Split, d.NoteType = string(split), noteType
			fresh = append(fresh, d)
			res.Replaced++
		}
	}
	replacedIDs := make([]int, 0, len(layered))
	for id := range layered {
		replacedIDs = append(replacedIDs, id)
	}
	for start := 0; start < len(replacedIDs); start += docBatch {
		_, err := tx.Span.Delete().
			Where(span.AnnotationSetID(setID), span.DocumentIDIn(replacedIDs[start:min(start+docBatch, len(replacedIDs))]...)).Exec(ctx)
		if err != nil {
			return err
		}
	}

	// Each span carries a copy of its document's split and note type: a kept
	// document's are the row's (moved above, if the import moved it).
	type docRow struct {
		id              int
		split, noteType string
	}
	rows := make(map[string]docRow, len(docs))
	for id, r := range keep {
		rows[id] = docRow{r, string(old[id].Split), old[id].NoteType}
	}
	total := len(docs)
	done := len(keep)
	for start := 0; start < len(fresh); start += docBatch {
		chunk := fresh[start:min(start+docBatch, len(fresh))]
		builders := make([]*ent.DocumentCreate, len(chunk))
		for i, d := range chunk {
			sp, _ := normalizeSplit(d.Split) // validated by Import
			b := tx.Document.Create().
				SetCorpusID(corpusID).SetPatientID(patients[d.Patient]).
				SetExternalID(d.ID).SetRecordOrder(d.RecordOrder).SetNoteType(d.NoteType).
				SetSplit(sp).SetText(d.Text).
				SetCharCount(charCount(d.Text)).SetTokenCount(whitespaceTokens(d.Text)).
				SetChecksum(checksum(d.Text))
			if !d.Created.IsZero() {
				b.SetCreated(d.Created)
			}
			if !opt.importedAt.IsZero() {
				b.SetImportedAt(opt.importedAt)
			}
			builders[i] = b
		}
		created, err := tx.Document.CreateBulk(builders...).Save(ctx)
		if err != nil {
			return err
		}
		for _, r := range created {
			rows[r.ExternalID] = docRow{r.ID, string(r.Split), r.NoteType}
		}
		done += len(chunk)
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}

	// Spans go in as raw multi-row INSERTs: ent's bulk builders cost more than
	// SQLite's own work here (a builder, a mutation and a spec per span).
	args := make([]any, 0, spanBatch*len(spanInsert.columns))
	for _, d := range docs {
		row := rows[d.ID]
		if len(d.Spans) == 0 {
			res.WithoutSpans++
		}
		for _, sp := range d.Spans {
			if sp.Start < 0 || sp.End < 0 {
				return apperr.New(apperr.Invalid, "document %s: span %s: negative offset", d.ID, sp.Label())
			}
			args = append(args, row.id, setID, sp.Start, sp.End, sp.Text, sp.Category, sp.Type, sp.Comment, sp.ID, row.split, row.noteType)
			res.Spans++
			if len(args) == cap(args) {
				if err := s.insertSpans(ctx, tx, args); err != nil {
					return err
				}
				args = args[:0]
			}
		}
	}
	res.Documents += len(docs)
	return s.insertSpans(ctx, tx, args)
}

// spanInsert writes spans as rows of 11 arguments each (document, set, start,
// end, text, category, type, comment, source id, and the document's split and
// note type).
var spanInsert = rowInsert{table: "spans",
	columns: []string{"document_id", "annotation_set_id", `"start"`, `"end"`, "text", "category", `"type"`, "comment", "source_id", "split", "note_type"}}

// insertSpans writes spans given as rows of spanInsert's arguments.
func (s *Store) insertSpans(ctx context.Context, tx *ent.Tx, args []any) error {
	if err := s.insertRows(ctx, tx, &spanInsert, args); err != nil {
		return fmt.Errorf("insert spans: %w", err)
	}
	return nil
}

// patientIDs returns the row id of every patient the documents name,
// creating the missing ones.
func patientIDs(ctx context.Context, tx *ent.Tx, corpusID int, docs []pipeline.Document) (map[string]int, error) {
	ids := map[string]int{}
	var names []string
	for _, d := range docs {
		if _, ok := ids[d.Patient]; !ok {
			ids[d.Patient] = 0
			names = append(names, d.Patient)
		}
	}
	for start := 0; start < len(names); start += docBatch {
		rows, err := tx.Patient.Query().
			Where(patient.CorpusID(corpusID), patient.ExternalIDIn(names[start:min(start+docBatch, len(names))]...)).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			ids[r.ExternalID] = r.ID
		}
	}
	var missing []*ent.PatientCreate
	for _, n := range names {
		if n == "" {
			return nil, apperr.New(apperr.Invalid, "a document has no patient id")
		}
		if ids[n] == 0 {
			missing = append(missing, tx.Patient.Create().SetCorpusID(corpusID).SetExternalID(n))
		}
	}
	for start := 0; start < len(missing); start += docBatch {
		rows, err := tx.Patient.CreateBulk(missing[start:min(start+docBatch, len(missing))]...).Save(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			ids[r.ExternalID] = r.ID
		}
	}
	return ids, nil
}

// existingDocs is what a batch of documents finds in its corpus.
type existingDocs struct {
	old     map[string]*ent.Document // by external id
	layered map[int]bool             // row ids that have spans in the set
	done    map[string]bool          // external ids already imported with the same text and spans (resume)
}

// lookupExisting finds which of docs the corpus already has, and which of
// those have spans in the set (setID 0 for a set not made yet); with
// resume, also which hold exactly the document's text and spans.
func lookupExisting(ctx context.Context, client *ent.Client, corpusID, setID int, docs []pipeline.Document, resume bool) (*existingDocs, error) {
	found := &existingDocs{old: map[string]*ent.Document{}, layered: map[int]bool{}, done: map[string]bool{}}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	for start := 0; start < len(ids); start += docBatch {
		rows, err := client.Document.Query().
			Where(document.CorpusID(corpusID), document.ExternalIDIn(ids[start:min(start+docBatch, len(ids))]...)).
			Select(document.FieldID, document.FieldExternalID, document.FieldChecksum, document.FieldSplit, document.FieldNoteType).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			found.old[r.ExternalID] = r
		}
	}
	if setID == 0 {
		return found, nil
	}
	// A document that exists with the same text only gains this layer, unless
	// the layer already covers it; one whose text differs is replaced whole.
	var sameText []int
	for _, d := range docs {
		if o, ok := found.old[d.ID]; ok && o.Checksum == checksum(d.Text) {
			sameText = append(sameText, o.ID)
		}
	}
	for start := 0; start < len(sameText); start += docBatch {
		chunk := sameText[start:min(start+docBatch, len(sameText))]
		if !resume {
			ids, err := client.Span.Query().
				Where(span.AnnotationSetID(setID), span.DocumentIDIn(chunk...)).
				GroupBy(span.FieldDocumentID).Ints(ctx)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				found.layered[id] = true
			}
			continue
		}
		spans, err := client.Span.Query().Where(span.AnnotationSetID(setID), span.DocumentIDIn(chunk...)).All(ctx)
		if err != nil {
			return nil, err
		}
		have := map[int][]pipeline.Span{}
		for _, sp := range spans {
			found.layered[sp.DocumentID] = true
			have[sp.DocumentID] = append(have[sp.DocumentID], toPipelineSpan(sp))
		}
		for _, d := range docs {
			o, ok := found.old[d.ID]
			if !ok || !found.layered[o.ID] || o.Checksum != checksum(d.Text) || !sameSpans(have[o.ID], d.Spans) {
				continue
			}
			// Done only where this import would leave it: a replacing one
			// that moves it has not, until it has moved it.
			if split, noteType := placeOf(o, d); split == o.Split && noteType == o.NoteType {
				found.done[d.ID] = true
			}
		}
	}
	return found, nil
}

// moveDocument gives a document kept by a replacing import (its text
// unchanged) the split and note type the import gives it, where it gives
// one, and the copies its spans of every layer carry: o is the row, which
// it updates. It reports whether anything changed.
func (s *Store) moveDocument(ctx context.Context, tx *ent.Tx, o *ent.Document, d pipeline.Document) (bool, error) {
	split, noteType := placeOf(o, d)
	if split == o.Split && noteType == o.NoteType {
		return false, nil
	}
	for _, q := range []string{
		`UPDATE documents SET split = ?, note_type = ? WHERE id = ?`,
		`UPDATE spans SET split = ?, note_type = ? WHERE document_id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, s.rebind(q), string(split), noteType, o.ID); err != nil {
			return false, fmt.Errorf("move document %s to split %s, note type %q: %w", d.ID, split, noteType, err)
		}
	}
	o.Split, o.NoteType = split, noteType
	return true, nil
}

// placeOf is the split and note type a replacing import gives a document
// whose row is o: those it names, else the row's. The split is valid
// (Import checks it).
func placeOf(o *ent.Document, d pipeline.Document) (document.Split, string) {
	split, noteType := o.Split, o.NoteType
	if d.Split != "" {
		split, _ = normalizeSplit(d.Split)
	}
	if d.NoteType != "" {
		noteType = d.NoteType
	}
	return split, noteType
}

// sameSpans reports whether a and b hold the same spans in any order.
func sameSpans(a, b []pipeline.Span) bool {
	if len(a) != len(b) {
		return false
	}
	order := func(x, y pipeline.Span) int {
		return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.End, y.End), strings.Compare(x.Type, y.Type),
			strings.Compare(x.Category, y.Category), strings.Compare(x.Text, y.Text), strings.Compare(x.ID, y.ID),
			strings.Compare(x.Comment, y.Comment))
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, order)
	slices.SortFunc(b, order)
	return slices.Equal(a, b)
}

// conflicts lists the documents of docs that exist with another text or
// with spans in the set, those already imported aside.
func (e *existingDocs) conflicts(docs []pipeline.Document) []string {
	var out []string
	for _, d := range docs {
		if o, ok := e.old[d.ID]; ok && !e.done[d.ID] && (e.layered[o.ID] || o.Checksum != checksum(d.Text)) {
			out = append(out, d.ID)
		}
	}
	return out
}

// newText lists the documents of docs that the corpus does not hold, or
// holds with other text.
func (e *existingDocs) newText(docs []pipeline.Document) []string {
	var out []string
	for _, d := range docs {
		if o, ok := e.old[d.ID]; !ok || o.Checksum != checksum(d.Text) {
			out = append(out, d.ID)
		}
	}
	return out
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

// releaseSplits are the splits a release archive's release.json gives its
// documents (no i2b2, brat or MIMIC file can), by the id the archive's files
// give each back (its archive_id, else its id): an archive of a release
// imports with the splits it was released with. An id two entries give
// different splits keeps none.
type releaseSplits struct {
	split map[string]string
	read  map[string]bool // the release.json files read, each once
}

// watch passes src's files on, and reads each release.json at the top of an
// archive or directory as it goes by, an entry at a time
// (release.ReadMeta). The import's first pass meets it (an archive holds it
// after the documents); the splits apply in the second. One that lists no
// release's documents changes nothing.
func (r *releaseSplits) watch(src formats.Source) formats.Source {
	return func(yield func(formats.File) error) error {
		return src(func(f formats.File) error {
			if archiveMember(f.Name) == release.MetaFile && !r.read[f.Name] {
				r.read[f.Name] = true
				rc, err := f.Open()
				if err != nil {
					return err
				}
				defer rc.Close()
				_, _, err = release.ReadMeta(rc, func(e release.Entry) error {
					if _, err := normalizeSplit(e.Split); err != nil {
						return fmt.Errorf("document %s: split: %w", e.ID, err)
					}
					id := cmp.Or(e.ArchiveID, e.ID)
					if prev, ok := r.split[id]; ok && prev != e.Split {
						e.Split = ""
					}
					r.split[id] = e.Split
					return nil
				})
				if err != nil {
					return &formats.Error{File: f.Name, Err: err}
				}
			}
			return yield(f)
		})
	}
}

// archiveMember is a file's name within the archive or directory it was
// read from ("notes.zip:release.json" -> "release.json").
func archiveMember(name string) string { return name[strings.LastIndex(name, ":")+1:] }

// of is the split release.json gave a document, "" for none.
func (r *releaseSplits) of(id string) string { return r.split[id] }
