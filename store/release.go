package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/evaluation"
	"deidcorpus/ent/job"
	entrelease "deidcorpus/ent/release"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/experiment"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/gate"
	"deidcorpus/pipeline/release"
	"deidcorpus/version"
)

// ReleaseOptions say what a new release freezes.
type ReleaseOptions struct {
	Corpus, Name, Version string
	Sets                  []string // annotation sets to include; default gold
	Parent                string   // name@version of the release of the same corpus this one follows
	// Share marks the release for outside sharing: refused unless the corpus
	// is surrogate text whose check found no leak and no misaligned span.
	Share bool
	// PseudonymousIDs replaces the corpus's document and patient ids by
	// keyed hashes in the release (see releaseIDs): a source's ids are
	// often medical record or accession numbers. A release that follows one
	// with pseudonymous ids has them too, the same for the same document.
	PseudonymousIDs bool
	// AcceptUnannotated is a curator's reason for sharing a surrogate corpus
	// that holds originals copied where the source's gold has no span
	// (unannotated finds), which sharing is otherwise refused; the datasheet
	// states it.
	AcceptUnannotated string
	Description       string
	By                string
	// Progress, if not nil, is called as documents are frozen: done of
	// total, each set's documents counted.
	Progress func(done, total int)
}

// CreateRelease freezes a corpus's documents and annotation sets into an
// immutable release with its manifest and datasheet.
func (s *Store) CreateRelease(ctx context.Context, opt ReleaseOptions) (*ent.Release, error) {
	if opt.Name == "" || strings.ContainsAny(opt.Name, "@/ ") {
		return nil, apperr.New(apperr.Invalid, "release name %q must be non-empty, without '@', '/' or spaces", opt.Name)
	}
	if !release.ValidVersion(opt.Version) {
		return nil, apperr.New(apperr.Invalid, "version %q is not a semantic version (MAJOR.MINOR.PATCH)", opt.Version)
	}
	if len(opt.Sets) == 0 {
		opt.Sets = []string{"gold"}
	}
	var sets []string // each once, the first (the datasheet's) first
	for _, set := range opt.Sets {
		if !slices.Contains(sets, set) {
			sets = append(sets, set)
		}
	}
	opt.Sets = sets
	c, err := s.CorpusByName(ctx, opt.Corpus)
	if err != nil {
		return nil, err
	}
	if err := refuseTakingOut(c, "releasing it"); err != nil {
		return nil, err
	}
	if opt.Share {
		if err := shareable(c, opt.AcceptUnannotated); err != nil {
			return nil, err
		}
	}
	var parent *ent.Release
	if opt.Parent != "" {
		if parent, err = s.ReleaseByRef(ctx, opt.Parent); err != nil {
			return nil, err
		}
		if parent.Corpus != c.Name {
			// Names are not per corpus, and a line that changed corpus would
			// diff unrelated notes and carry its ids over to them.
			return nil, apperr.New(apperr.Invalid, "parent: release %q is of corpus %q, not %q", release.Ref(parent.Name, parent.Version), parent.Corpus, c.Name)
		}
		if opt.Share && !parent.Share {
			// Its datasheet names the parent: a release shared outside follows
			// only releases shared outside.
			return nil, apperr.New(apperr.Invalid, "a release for sharing must follow a shared release, and %s is not shared", opt.Parent)
		}
		if parent.Name == opt.Name && release.CompareVersions(opt.Version, parent.Version) <= 0 {
			return nil, apperr.New(apperr.Invalid, "version %s does not come after its parent %s", opt.Version, release.Ref(parent.Name, parent.Version))
		}
	}
	ids, err := s.releaseIDs(opt, parent)
	if err != nil {
		return nil, err
	}
	// The datasheet's statistics are read before the documents, so that the
	// memory they take is reused by the encoding instead of added to it.
	st, err := s.statistics(ctx, c, opt.Sets[0], []Dimension{ByCategory, ByType})
	if err != nil {
		return nil, err
	}
	if err := s.dropAbandonedChunks(ctx); err != nil {
		return nil, err
	}
	// The snapshot is encoded as its documents are read, a batch at a time,
	// and stored in chunks as it is made: memory holds a batch, a chunk and
	// a run of the manifest's entries.
	frozen := func(int) {}
	if opt.Progress != nil {
		n, err := s.CountDocuments(ctx, c, "")
		if err != nil {
			return nil, err
		}
		done, total := 0, n*len(opt.Sets)
		frozen = func(batch int) {
			done += batch
			opt.Progress(done, total)
		}
	}
	content := newChunkWriter(s.chunkSize, s.insertChunk(ctx))
	r, err := s.createRelease(ctx, opt, c, parent, st, content, ids, frozen)
	if err != nil {
		s.dropChunks(ctx, content.key)
	}
	return r, err
}

// createRelease writes the snapshot to content and then the release row;
// frozen is told of each batch of documents encoded.
func (s *Store) createRelease(ctx context.Context, opt ReleaseOptions, c *ent.Corpus, parent *ent.Release, st *Statistics,
	content *chunkWriter, ids *pseudonyms, frozen func(documents int)) (*ent.Release, error) {
	enc := release.NewEncoder(content)
	defer enc.Close() // on an early return: removes the manifest's temporary file
	documents, spans := 0, 0
	for _, set := range slices.Sorted(slices.Values(opt.Sets)) { // each once (CreateRelease)
		enc.Set(set)
		err := s.EachBatch(ctx, c, set, "", readBatch, func(docs []pipeline.Document) error {
			if set == opt.Sets[0] {
				documents += len(docs)
			}
			for i := range docs {
				spans += len(docs[i].Spans)
				ids.rename(&docs[i])
			}
			enc.Add(docs)
			frozen(len(docs))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	root, err := enc.Close()
	if err == nil {
		err = content.Close()
	}
	if err != nil {
		return nil, err
	}
	sheet, err := s.datasheet(ctx, c, st, opt, parent, root)
	if err != nil {
		return nil, err
	}
	sheet.PseudonymousIDs = ids != nil
	sheet.CorpusPseudonyms = c.Ids == corpus.IdsPseudonymous
	prov := map[string]any{"corpus": c.Name, "tagset": c.Tagset, "corpusProvenance": release.PublicProvenance(c.Provenance), "codeVersion": version.String()}
	if finds, docs := release.UnannotatedTotal(c.Provenance); finds > 0 && opt.Share {
		reason := strings.TrimSpace(opt.AcceptUnannotated)
		prov["unannotatedAccepted"] = map[string]any{"finds": finds, "documents": docs, "reason": reason, "by": opt.By}
		// The reason and who gave it stay with the release row: a reason may
		// quote the values or the notes' ids, which the archive must not hold.
		sheet.UnannotatedAccepted = fmt.Sprintf("%s in %s, copied where the source's gold has no span, were read by a curator "+
			"and accepted for sharing (the reason is recorded with the release, not in this archive)",
			plural(finds, "original value"), notesOf(docs))
	}
	if ids != nil {
		prov["ids"], prov["idScope"] = "pseudonymous", ids.scope
	}
	create := s.Client.Release.Create().SetName(opt.Name).SetVersion(opt.Version).SetCorpus(c.Name).SetCorpusID(c.ID).
		SetSets(opt.Sets).SetRootHash(root).SetDocuments(documents).SetSpans(spans).
		SetShare(opt.Share).SetDatasheet(sheet.Markdown()).SetContentKey(content.key).SetCreatedBy(opt.By).
		SetProvenance(prov)
	if parent != nil {
		create.SetParentID(parent.ID)
	}
	r, err := create.Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, apperr.New(apperr.Conflict, "release %s exists", release.Ref(opt.Name, opt.Version))
	}
	return r, err
}

// notesOf writes how many notes hold a corpus's unannotated finds: 0 for a
// corpus resynthesized before they were counted per note.
func notesOf(docs int) string {
	if docs == 0 {
		return "its notes (counted as a whole: the corpus was resynthesized before finds were counted per note)"
	}
	return plural(docs, "note")
}

// plural writes a count with its noun, singular for one.
func plural(n int, noun string) string {
	if n != 1 {
		noun += "s"
	}
	return strconv.Itoa(n) + " " + noun
}

// releaseIDs says how a new release names its documents: as its parent does
// (a line keeps its ids), else as the options ask.
func (s *Store) releaseIDs(opt ReleaseOptions, parent *ent.Release) (*pseudonyms, error) {
	scope := opt.Name
	if parent != nil {
		parentScope, _ := parent.Provenance["idScope"].(string)
		switch {
		case parentScope != "":
			scope = parentScope
		case opt.PseudonymousIDs:
			return nil, apperr.New(apperr.Invalid, "%s keeps the corpus's own ids: a release that follows it cannot have pseudonymous ids "+
				"(its diff would show every document changed); start a new line without --parent", release.Ref(parent.Name, parent.Version))
		default:
			return nil, nil
		}
	} else if !opt.PseudonymousIDs {
		return nil, nil
	}
	ring, err := s.KeyRing()
	if err != nil {
		return nil, err
	}
	return &pseudonyms{hash: ring.Hash, label: "release id", scope: scope}, nil
}

// shareable refuses outside sharing of anything but surrogate text that
// passed its check, and says why. Originals the surrogate text holds where
// the gold had no span (unannotated finds, often real names the annotators
// missed) are shared only with a curator's reason (accept).
func shareable(c *ent.Corpus, accept string) error {
	if c.Origin != corpus.OriginResynthesis {
		return apperr.New(apperr.Invalid, "corpus %q holds original text (it was not made by resynthesis): it cannot be released for outside sharing", c.Name)
	}
	// A failed check is refused before (quarantine); a resolved one was
	// reviewed by a curator, whose reason the corpus records.
	if c.CheckStatus != corpus.CheckStatusPassed && c.CheckStatus != corpus.CheckStatusResolved {
		return apperr.New(apperr.Invalid, "corpus %q has no resynthesis check report: it cannot be released for outside sharing", c.Name)
	}
	// A tagger's spans: only with its held-out estimate, under the policy's ceiling.
	runs, err := gate.Runs(c.Provenance)
	if err != nil {
		return apperr.New(apperr.Internal, "corpus %q: %v", c.Name, err)
	}
	if err := gate.Check(c.Name, runs); err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	finds, docs := release.UnannotatedTotal(c.Provenance)
	if finds > 0 && accept != "" && strings.TrimSpace(accept) == "" {
		return apperr.New(apperr.Invalid, "the reason for sharing the unannotated finds of corpus %q is blank", c.Name)
	}
	if finds > 0 && strings.TrimSpace(accept) == "" {
		// Each run's report lists the finds of the notes it wrote.
		read := "deidcorpus resynth report " + c.Name
		if runs := resynthesisRuns(c); len(runs) > 1 {
			read = fmt.Sprintf("the reports of the runs that wrote them, deidcorpus resynth report %s --job N for N in %v", c.Name, runs)
		}
		return apperr.New(apperr.Invalid, "corpus %q holds %s in %s copied where the source's gold has no span "+
			"(unannotated finds; read them with: %s): annotate them in the source and resynthesize into %q "+
			"again (the changed notes are rewritten), or, once a curator has read them, share with the reason they may be "+
			"shared (--accept-unannotated REASON; GraphQL acceptUnannotated)", c.Name, plural(finds, "original value"), notesOf(docs), read, c.Name)
	}
	return nil
}

func (s *Store) datasheet(ctx context.Context, c *ent.Corpus, st *Statistics, opt ReleaseOptions, parent *ent.Release, root string) (release.Datasheet, error) {
	d := release.Datasheet{Name: opt.Name, Version: opt.Version, Corpus: c.Name, Description: opt.Description,
		TagSet: c.Tagset, Sets: opt.Sets, Root: root, Share: opt.Share, Provenance: c.Provenance,
		Documents: st.Documents, Patients: st.Patients, Characters: st.Characters, Tokens: st.Tokens,
		Spans: st.Spans, UniqueSpans: st.UniqueSpans}
	d.Created = time.Now()
	if parent != nil {
		d.Parent = release.Ref(parent.Name, parent.Version)
	}
	for _, sp := range st.Splits {
		d.Splits = append(d.Splits, release.Count{Name: sp.Name, Documents: sp.Documents, Tokens: sp.Tokens, Spans: sp.Spans})
	}
	for _, nt := range st.NoteTypes {
		d.NoteTypes = append(d.NoteTypes, release.Count{Name: nt.Name, Documents: nt.Documents, Tokens: nt.Tokens, Spans: nt.Spans})
	}
	for _, g := range st.Groups {
		d.Labels = append(d.Labels, release.LabelCount{Category: g.Keys[0], Type: g.Keys[1], Total: g.Total, Unique: g.Unique})
	}
	// Only the scores: an evaluation's report (per-document scores of every
	// measure) grows with the corpus.
	evs, err := s.Client.Evaluation.Query().Where(evaluation.CorpusID(c.ID)).
		Select(evaluation.FieldGoldSet, evaluation.FieldSystemSet, evaluation.FieldMetric,
			evaluation.FieldPrecision, evaluation.FieldRecall, evaluation.FieldF1).All(ctx)
	if err != nil {
		return d, err
	}
	for _, e := range evs {
		d.Evaluations = append(d.Evaluations, release.EvaluationLine{Gold: e.GoldSet, System: e.SystemSet,
			Metric: e.Metric, Precision: e.Precision, Recall: e.Recall, F1: e.F1})
	}
	if c.Kind == corpus.KindSurrogate {
		runs, err := gate.Runs(c.Provenance)
		if err != nil {
			return d, apperr.New(apperr.Internal, "corpus %q: %v", c.Name, err)
		}
		for _, r := range runs {
			if r.Tagger != nil {
				d.Tagged = append(d.Tagged, r)
			}
		}
	}
	d.ResidualRisk, err = s.residualRisk(ctx, c)
	return d, err
}

// residualRisk finds the latest residual-risk experiment that measured the
// system set a surrogate corpus was resynthesized from; nil when it was not
// made from one, or none measured it.
func (s *Store) residualRisk(ctx context.Context, c *ent.Corpus) (*release.RiskLine, error) {
	from, _ := c.Provenance["from"].(string)
	set, _ := c.Provenance["set"].(string)
	if c.Kind != corpus.KindSurrogate || from == "" || set == "" || set == "gold" {
		return nil, nil
	}
	runs, err := s.Jobs(ctx, JobFilter{Kind: "experiment", Status: []job.Status{job.StatusSucceeded}})
	if err != nil {
		return nil, err
	}
	for _, j := range runs { // newest first
		if j.Result["kind"] != "residual-risk" || j.Result["corpus"] != from || j.Result["system"] != set {
			continue
		}
		data, err := json.Marshal(j.Result)
		if err != nil {
			return nil, err
		}
		var r experiment.RiskResult
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, err
		}
		return &release.RiskLine{Job: j.ID, Seed: int(r.Seed), Corpus: from, System: set, GoldSpans: r.Residual.GoldSpans,
			Leaked: r.Residual.Leaked, LeakRate: r.Residual.LeakRate, LeakLow: r.Residual.LeakCI.Low, LeakHigh: r.Residual.LeakCI.High,
			Documents: r.Residual.Documents, DocumentsWithLeak: r.Residual.DocumentsWithLeak,
			ParrotRecall: r.Parrot.Recall, ParrotPrecision: r.Parrot.Precision, AUC: r.Distinguishability.AUC}, nil
	}
	return nil, nil
}

// ReleaseByRef returns the release "name@version".
func (s *Store) ReleaseByRef(ctx context.Context, ref string) (*ent.Release, error) {
	name, ver, err := release.ParseRef(ref)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	r, err := s.Client.Release.Query().Where(entrelease.Name(name), entrelease.Version(ver)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no release %s", ref)
	}
	return r, err
}

// releaseReader reads a release's snapshot, n documents at a time, from its
// chunks: memory holds a chunk and a batch. Errors fn returns come back as
// they are; the snapshot's own are internal. progress, if not nil, is told
// of the documents fn has taken: done of total, each set's counted.
func (s *Store) releaseReader(ctx context.Context, r *ent.Release, n int, progress func(done, total int)) release.Reader {
	return func(fn func(set string, docs []pipeline.Document) error) error {
		var fromFn error
		done, total := 0, r.Documents*len(slices.Compact(slices.Sorted(slices.Values(r.Sets)))) // older releases may name a set twice
		err := release.Each(s.chunks(ctx, r.ContentKey), n, func(set string, docs []pipeline.Document) error {
			fromFn = fn(set, docs)
			if done += len(docs); progress != nil && fromFn == nil {
				progress(min(done, total), total)
			}
			return fromFn
		})
		if err != nil && fromFn == nil {
			return apperr.New(apperr.Internal, "release %s: %v", release.Ref(r.Name, r.Version), err)
		}
		return err
	}
}

// DiffReleases lists what changed from release a to release b, reading
// their snapshots a batch at a time (release.CompareReaders): memory holds
// what differs, not the releases.
func (s *Store) DiffReleases(ctx context.Context, a, b string) (release.Diff, error) {
	var readers [2]release.Reader
	for i, ref := range []string{a, b} {
		r, err := s.ReleaseByRef(ctx, ref)
		if err != nil {
			return release.Diff{}, err
		}
		readers[i] = s.releaseReader(ctx, r, readBatch, nil)
	}
	return release.CompareReaders(readers[0], readers[1])
}

// ExportRelease renders a release as archive files in a format, with its
// MANIFEST and DATASHEET.md.
func (s *Store) ExportRelease(ctx context.Context, ref, format string) ([]formats.File, error) {
	var c formats.Collector
	if err := s.ExportReleaseTo(ctx, ref, format, c.Create, nil); err != nil {
		return nil, err
	}
	return c.Files(), nil
}

// ExportReleaseTo writes a release's archive files (release.PackTo) to files
// made by create, decoding its snapshot a batch at a time: memory holds the
// snapshot's chunk and a batch. Errors create returns keep their code;
// other write errors are the documents' (invalid). progress, if not nil, is
// called as documents are written: done of total, each set's counted.
func (s *Store) ExportReleaseTo(ctx context.Context, ref, format string, create func(name string) (io.Writer, error), progress func(done, total int)) error {
	f, err := formats.Lookup(format)
	if err != nil {
		return apperr.Wrap(apperr.Invalid, err)
	}
	r, err := s.ReleaseByRef(ctx, ref)
	if err != nil {
		return err
	}
	meta := release.Meta{Name: r.Name, Version: r.Version, Corpus: r.Corpus, TagSet: s.releaseTagSet(ctx, r),
		Manifest: release.Manifest{Root: r.RootHash}}
	if r.ParentID != nil {
		if p, err := s.Client.Release.Get(ctx, *r.ParentID); err == nil {
			meta.Parent = release.Ref(p.Name, p.Version)
		}
	}
	return classify(release.PackTo(meta, s.releaseReader(ctx, r, batchOf(f), progress), f, r.Datasheet, sinkCreate(create)))
}

// releaseTagSet is the tag set of the corpus r was frozen from: kept in its
// provenance since 2 December 2026, and for a release made before, the
// corpus's if it is still there ("" if not: its archive then names none).
func (s *Store) releaseTagSet(ctx context.Context, r *ent.Release) string {
	if ts, ok := r.Provenance["tagset"].(string); ok {
		return ts
	}
	if r.CorpusID == 0 {
		return ""
	}
	c, err := s.Client.Corpus.Get(ctx, r.CorpusID)
	if err != nil || c.Name != r.Corpus {
		return ""
	}
	return c.Tagset
}

// Releases lists the releases by name, each name's versions in version
// order (1.0.0 before 1.10.0), those of one version in the order they were
// made.
func (s *Store) Releases(ctx context.Context) ([]*ent.Release, error) {
	rs, err := s.Client.Release.Query().Order(ent.Asc(entrelease.FieldName), ent.Asc(entrelease.FieldCreatedAt)).All(ctx)
	slices.SortStableFunc(rs, func(a, b *ent.Release) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), release.CompareVersions(a.Version, b.Version))
	})
	return rs, err
}
