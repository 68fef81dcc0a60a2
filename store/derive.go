package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
)

// DeriveOptions say what Derive makes from what.
type DeriveOptions struct {
	Source, Set string // the corpus and its annotation set to map
	Mapping     *phi.Mapping
	Out         string // the corpus to make
	// Progress, if not nil, is called as documents are written; Checked,
	// if not nil, as they are checked before (their total not known yet).
	Progress func(done, total int)
	Checked  func(done int)
	// Resume continues the derivation an earlier attempt of job Job began
	// (a retry after its worker died): Out may then exist, made by that
	// job from the same source, set and mapping, unfinished or finished
	// (the worker died before the job could record its success).
	Resume bool
	// Job is the job deriving, 0 for none; the corpus's provenance names it.
	Job int
}

// Derive makes a new corpus from one annotation set of another, its labels
// rewritten by a tag-set mapping (merging, renaming or dropping classes). The
// new corpus's provenance names the source and the mapping with its hash.
// The source is read a batch of patients at a time, in each of the import's
// passes: memory does not grow with the corpus.
func (s *Store) Derive(ctx context.Context, opt DeriveOptions) (*ImportResult, error) {
	src, resumed, err := s.CheckDerive(ctx, opt)
	if err != nil {
		return nil, err
	}
	// The import writes into the corpus checked here, and no other that a
	// writer made meanwhile under the same name.
	into := 0
	if resumed != nil {
		into = resumed.ID
	}
	source, set, m, out := opt.Source, opt.Set, opt.Mapping, opt.Out
	before, after := 0, 0
	labels := map[string]bool{}
	var mapErr error // the source's documents do not map: not the target's labels' fault
	// Each pass counts the spans before and after the mapping; the first,
	// which checks every document before anything is written, refuses a
	// mapping that drops them all.
	scan := func(fn func(pipeline.Document) error) error {
		before, after = 0, 0
		err := s.EachBatch(ctx, src, set, "", readBatch, func(batch []pipeline.Document) error {
			for _, d := range batch {
				mapped, err := m.Apply(d)
				if err != nil {
					mapErr = apperr.Wrap(apperr.Invalid, err) // it names the document
					return mapErr
				}
				before += len(d.Spans)
				after += len(mapped.Spans)
				for _, sp := range d.Spans {
					labels[sp.Label()] = true
				}
				if err := fn(mapped); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil && before > 0 && after == 0 {
			// A mapping for another tag set drops every label it does not know.
			mapErr = apperr.New(apperr.Invalid, "mapping %s drops every one of the %d spans of %q (labels %s; the mapping is for %s): is it the mapping for this corpus?",
				m.Label, before, source, strings.Join(firstSorted(labels, 5), ", "), cmp.Or(m.From, "an undeclared tag set"))
			err = mapErr
		}
		return err
	}
	tagset := phi.Open
	if _, ok := phi.Lookup(m.To); ok && m.To != "" {
		tagset = m.To
	}
	prov := map[string]any{"source": "derived", "from": source, "fromID": src.ID, "set": set,
		"mapping": m.Name, "mappingHash": m.Hash}
	if opt.Job != 0 {
		prov["job"] = opt.Job
	}
	res, err := s.importParsed(ctx, ImportOptions{
		Corpus: out, TagSet: tagset, Set: set, CorpusKind: string(src.Kind), Progress: opt.Progress, Checked: opt.Checked, Resume: opt.Resume, into: &into,
		Provenance: prov, Origin: corpus.OriginDerived, SourceID: src.ID,
	}, scan)
	if res != nil {
		res.Dropped = before - after
	}
	var ae *apperr.Error
	switch {
	case errors.As(err, &ae) && ae.Code == apperr.Invalid && (mapErr == nil || !errors.Is(err, mapErr)):
		return nil, apperr.New(apperr.Invalid, "mapping %s does not give valid %s labels: %v", m.Label, tagset, err)
	case apperr.CodeOf(err) == apperr.Conflict && resumed == nil:
		// Another writer made the corpus between the check and the
		// first batch (two derivations of one name at once): its name
		// says which, where the database's unique index would not.
		return nil, apperr.New(apperr.Conflict, "a corpus named %q was made by another writer meanwhile", out)
	}
	return res, err
}

// CheckDerive finds what would stop Derive before it reads a document (the
// output's name taken or not a corpus name, the source or its set missing, a
// quarantined source, a mapping without a rule for some of the set's
// labels), so that a job can be refused as it is queued. It returns the
// source, and the corpus a resumed derivation goes on with (nil for a new
// one).
func (s *Store) CheckDerive(ctx context.Context, opt DeriveOptions) (src, resumed *ent.Corpus, err error) {
	switch {
	case opt.Out == "" || opt.Out == opt.Source:
		return nil, nil, apperr.New(apperr.Invalid, "out: the derived corpus needs a name of its own")
	case opt.Resume && (opt.Mapping == nil || opt.Job == 0):
		return nil, nil, apperr.New(apperr.Invalid, "resuming a derivation needs its mapping and its job")
	}
	if err := checkCorpusName(opt.Out); err != nil {
		return nil, nil, apperr.New(apperr.Invalid, "out: %v", err)
	}
	if src, err = s.CorpusByName(ctx, opt.Source); err != nil {
		return nil, nil, err
	}
	// A derived copy of a surrogate corpus is surrogate too, and would be
	// outside the quarantine.
	if err := refuseTakingOut(src, "deriving from it"); err != nil {
		return nil, nil, err
	}
	if _, err := s.AnnotationSet(ctx, src, opt.Set); err != nil {
		return nil, nil, err
	}
	if opt.Mapping != nil {
		if _, err := s.MappedLabels(ctx, src, opt.Set, opt.Mapping); err != nil {
			return nil, nil, err
		}
	}
	existing, err := s.CorpusByName(ctx, opt.Out)
	switch {
	case err != nil && apperr.CodeOf(err) != apperr.NotFound:
		return nil, nil, err
	case existing == nil:
		return src, nil, nil
	case opt.Resume && ownDerivation(existing, src, opt):
		return src, existing, nil
	case unfinishedImport(existing):
		return nil, nil, apperr.New(apperr.Conflict, "a corpus named %q exists, holding an unfinished import or derivation "+
			"(still running, or its process ended first); delete it (deidcorpus corpora delete %s) or name another", opt.Out, opt.Out)
	}
	return nil, nil, apperr.New(apperr.Conflict, "a corpus named %q exists", opt.Out)
}

// MappedLabels returns the labels of a corpus's annotation set as mapping m
// gives them (those it drops left out), sorted, each once; nil m keeps them.
// A mapping that has no rule for some of the labels (and no @default) is
// refused, every such label named at once rather than the first a document
// shows.
func (s *Store) MappedLabels(ctx context.Context, c *ent.Corpus, set string, m *phi.Mapping) ([]string, error) {
	labels, err := s.Labels(ctx, c, set)
	if err != nil {
		return nil, err
	}
	var mapped, missing []string
	for _, l := range labels {
		cat, typ, keep := l[0], l[1], true
		if m != nil {
			if cat, typ, keep, err = m.Map(l[0], l[1]); err != nil {
				missing = append(missing, pipeline.Span{Category: l[0], Type: l[1]}.Label())
				continue
			}
		}
		if keep {
			mapped = append(mapped, pipeline.Span{Category: cat, Type: typ}.Label())
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		hint := ""
		if m.From != "" && m.From != c.Tagset {
			hint = fmt.Sprintf("; the mapping is for tag set %s, the corpus's is %s: is it the mapping for this corpus?", m.From, c.Tagset)
		}
		return nil, apperr.New(apperr.Invalid, "mapping %s has no rule for %d of the %d labels of %q: %s (give each a rule, or an @default: keep, drop or a LABEL)%s",
			m.Label, len(missing), len(labels), c.Name, strings.Join(missing, ", "), hint)
	}
	slices.Sort(mapped)
	return slices.Compact(mapped), nil
}

// ownDerivation tells whether c is what a retry of the job deriving opt
// goes on with: the corpus that job began, from the same source's set by
// the same mapping, unfinished or (the worker died before the job recorded
// its success) finished.
func ownDerivation(c, src *ent.Corpus, opt DeriveOptions) bool {
	p := c.Provenance
	return c.Origin == corpus.OriginDerived && c.SourceID != nil && *c.SourceID == src.ID && intOf(p["job"]) == opt.Job &&
		p["set"] == opt.Set && p["mappingHash"] == opt.Mapping.Hash
}

// firstSorted returns the first n of a set's keys in order, and "..." when
// there are more.
func firstSorted(set map[string]bool, n int) []string {
	keys := slices.Sorted(maps.Keys(set))
	if len(keys) > n {
		keys = append(keys[:n], "...")
	}
	return keys
}
