package store

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/document"
	"deidcorpus/ent/patient"
	"deidcorpus/pipeline"
)

// pseudonyms rename documents and patients: each id becomes an 18-digit
// number (about 60 bits) drawn from its keyed hash (Ring.Hash, under the
// lookup key that rotation keeps) with a label and a scope, so that no one
// without the key can tell which source id a pseudonym stands for, and every
// run or version of one scope names a document alike. Numbers, because some
// formats (PhysioNet) number patients. Releases use them with the line's
// scope (releaseIDs), surrogate corpora with their source's (SurrogateNames).
type pseudonyms struct {
	hash  func(parts ...string) string
	label string
	scope string
}

// rename gives a document its pseudonymous ids; a nil pseudonyms keeps them.
func (p *pseudonyms) rename(d *pipeline.Document) {
	if p == nil {
		return
	}
	d.ID = p.number("document", d.ID)
	d.Patient = p.number("patient", d.Patient)
}

// number is an id's pseudonym: 18 digits, the first not 0.
func (p *pseudonyms) number(kind, id string) string {
	h, _ := strconv.ParseUint(p.hash(p.label, p.scope, kind, id)[:16], 16, 64)
	const low = 100_000_000_000_000_000
	return strconv.FormatUint(low+h%(9*low), 10)
}

// SurrogateNames is how a surrogate corpus names the notes and patients of
// its source: by keyed pseudonyms of their ids (a source's ids are record
// and accession numbers), the same in every run from that source, so that
// incremental runs and later releases agree. A corpus made before
// pseudonyms (corpus.IdsSource) keeps its source's ids.
type SurrogateNames struct{ p *pseudonyms }

// Doc is the surrogate corpus's id of a source note.
func (n SurrogateNames) Doc(id string) string {
	if n.p == nil {
		return id
	}
	return n.p.number("document", id)
}

// Rename gives a surrogate note its corpus's ids.
func (n SurrogateNames) Rename(d *pipeline.Document) { n.p.rename(d) }

// Pseudonymous reports whether the names are pseudonyms.
func (n SurrogateNames) Pseudonymous() bool { return n.p != nil }

// SurrogateNames returns how target, a surrogate corpus of the source with
// id sourceID, names its notes; a nil target is one a resynthesis is about
// to create, which gets pseudonyms.
func (s *Store) SurrogateNames(target *ent.Corpus, sourceID int) (SurrogateNames, error) {
	if target != nil && target.Ids == corpus.IdsSource {
		return SurrogateNames{}, nil
	}
	ring, err := s.KeyRing()
	if err != nil {
		return SurrogateNames{}, err
	}
	return SurrogateNames{&pseudonyms{hash: ring.Hash, label: "surrogate id", scope: strconv.Itoa(sourceID)}}, nil
}

// surrogateSource is the corpus a surrogate corpus was resynthesized from,
// refused when c was not made by resynthesis or its source is gone.
func (s *Store) surrogateSource(ctx context.Context, c *ent.Corpus) (*ent.Corpus, error) {
	if c.Origin != corpus.OriginResynthesis || c.SourceID == nil {
		return nil, apperr.New(apperr.Invalid, "corpus %q was not made by resynthesis: it has no source ids", c.Name)
	}
	id := *c.SourceID
	src, err := s.Client.Corpus.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "the source of corpus %q (corpus id %d) was deleted: its ids cannot be paired", c.Name, id)
	}
	return src, Coded(err)
}

// TwinNames tells, for two corpora of which one may be a pseudonymous
// surrogate corpus resynthesized from the other, the name of the original
// of the pair and how its twin names its notes; original is "" when
// neither is the other's pseudonymous twin.
func (s *Store) TwinNames(ctx context.Context, a, b string) (original string, names SurrogateNames, err error) {
	ca, err := s.CorpusByName(ctx, a)
	if err != nil {
		return "", SurrogateNames{}, err
	}
	cb, err := s.CorpusByName(ctx, b)
	if err != nil {
		return "", SurrogateNames{}, err
	}
	for _, pair := range [][2]*ent.Corpus{{ca, cb}, {cb, ca}} {
		orig, sur := pair[0], pair[1]
		if sur.Ids == corpus.IdsPseudonymous && sur.SourceID != nil && *sur.SourceID == orig.ID {
			names, err := s.SurrogateNames(sur, orig.ID)
			return orig.Name, names, err
		}
	}
	return "", SurrogateNames{}, nil
}

// IDFilter keeps the pairs of some source or surrogate ids; an empty
// filter keeps every pair.
type IDFilter struct{ Source, Surrogate []string }

func (f IDFilter) keeps(p IDPair) bool {
	return len(f.Source) == 0 && len(f.Surrogate) == 0 || slices.Contains(f.Source, p.Source) || slices.Contains(f.Surrogate, p.Surrogate)
}

// IDPair is the id of a source's note or patient beside its surrogate
// corpus's.
type IDPair struct {
	Kind      string `json:"kind"` // "document" or "patient"
	Source    string `json:"source"`
	Surrogate string `json:"surrogate"`
}

// SurrogateIDs returns the pairs of a surrogate corpus's note and patient
// ids with its source's, documents first, each kind by source id: only
// curators may read them (auth's cli.resynth.ids), since the source's ids
// are record and accession numbers. A corpus that keeps its source's ids
// has pairs of equal ids. It holds the ids of both corpora in memory (about
// 100 bytes a note).
func (s *Store) SurrogateIDs(ctx context.Context, name string, only IDFilter) ([]IDPair, error) {
	c, err := s.CorpusByName(ctx, name)
	if err != nil {
		return nil, err
	}
	src, err := s.surrogateSource(ctx, c)
	if err != nil {
		return nil, err
	}
	names, err := s.SurrogateNames(c, src.ID)
	if err != nil {
		return nil, err
	}
	var out []IDPair
	for _, kind := range []string{"document", "patient"} {
		source, err := s.externalIDs(ctx, kind, src.ID)
		if err != nil {
			return nil, err
		}
		held, err := s.externalIDs(ctx, kind, c.ID)
		if err != nil {
			return nil, err
		}
		in := make(map[string]bool, len(held))
		for _, id := range held {
			in[id] = true
		}
		slices.Sort(source)
		for _, id := range source {
			sur := id
			if names.p != nil {
				sur = names.p.number(kind, id)
			}
			if p := (IDPair{Kind: kind, Source: id, Surrogate: sur}); in[sur] && only.keeps(p) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// externalIDs are the ids of a corpus's documents or patients.
func (s *Store) externalIDs(ctx context.Context, kind string, corpusID int) ([]string, error) {
	var ids []string
	var err error
	if kind == "patient" {
		ids, err = s.Client.Patient.Query().Where(patient.CorpusID(corpusID)).Select(patient.FieldExternalID).Strings(ctx)
	} else {
		ids, err = s.Client.Document.Query().Where(document.CorpusID(corpusID)).Select(document.FieldExternalID).Strings(ctx)
	}
	return ids, Coded(err)
}

// sourceNamer renames a surrogate corpus's notes and patients back to its
// source's ids (export --source-ids), so that original and surrogate can
// be compared file by file.
func (s *Store) sourceNamer(ctx context.Context, c *ent.Corpus) (func(*pipeline.Document), error) {
	pairs, err := s.SurrogateIDs(ctx, c.Name, IDFilter{})
	if err != nil {
		return nil, err
	}
	back := map[[2]string]string{}
	for _, p := range pairs {
		back[[2]string{p.Kind, p.Surrogate}] = p.Source
	}
	return func(d *pipeline.Document) {
		d.ID = cmp.Or(back[[2]string{"document", d.ID}], d.ID)
		d.Patient = cmp.Or(back[[2]string{"patient", d.Patient}], d.Patient)
	}, nil
}
