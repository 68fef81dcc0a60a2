package store

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/dateshift"
	"deidcorpus/ent/document"
	"deidcorpus/ent/span"
	"deidcorpus/ent/surrogatemapping"
	"deidcorpus/pipeline/phi"
)

// CreateCorpus makes an empty corpus with a declared tag set. Its kind is
// original unless a curator attests that its text is surrogate already.
func (s *Store) CreateCorpus(ctx context.Context, name, tagset, description string, kind corpus.Kind) (*ent.Corpus, error) {
	if err := checkCorpusName(name); err != nil {
		return nil, err
	}
	if _, ok := phi.Lookup(tagset); !ok {
		return nil, apperr.Wrap(apperr.Invalid, phi.UnknownTagSet(tagset, phi.Names()))
	}
	if err := corpus.KindValidator(kind); err != nil {
		return nil, apperr.New(apperr.Invalid, "unknown corpus kind %q (original or surrogate)", kind)
	}
	c, err := s.Client.Corpus.Create().SetName(name).SetTagset(tagset).SetDescription(description).SetKind(kind).
		SetProvenance(map[string]any{"source": "created"}).SetOrigin(corpus.OriginCreated).Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, apperr.New(apperr.Conflict, "a corpus named %q exists", name)
	}
	return c, err
}

// checkCorpusName refuses a name for a new corpus that paths and URLs would
// split or that could not be typed back: empty, with '/', '\\' or a control
// character, or with spaces at either end. Corpora named before keep their
// names.
func checkCorpusName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return apperr.New(apperr.Invalid, "a corpus name is required")
	case strings.TrimSpace(name) != name:
		return apperr.New(apperr.Invalid, "corpus name %q begins or ends with a space", name)
	case strings.ContainsAny(name, `/\`) || strings.ContainsFunc(name, unicode.IsControl):
		return apperr.New(apperr.Invalid, "corpus name %q holds '/', '\\' or a control character: name it without", name)
	}
	return nil
}

// DocumentSpans returns a document's spans in the named annotation set of its
// corpus, in text order; a set the corpus lacks is not_found.
func (s *Store) DocumentSpans(ctx context.Context, doc *ent.Document, setName string) ([]*ent.Span, error) {
	set, err := s.Client.AnnotationSet.Query().
		Where(annotationset.CorpusID(doc.CorpusID), annotationset.Name(setName)).Only(ctx)
	if ent.IsNotFound(err) {
		if c, err := s.Client.Corpus.Get(ctx, doc.CorpusID); err == nil {
			return nil, apperr.New(apperr.NotFound, "corpus %q has no annotation set %q", c.Name, setName)
		}
		return nil, apperr.New(apperr.NotFound, "the document's corpus has no annotation set %q", setName)
	}
	if err != nil {
		return nil, err
	}
	return s.Client.Span.Query().
		Where(span.DocumentID(doc.ID), span.AnnotationSetID(set.ID)).
		Order(ent.Asc(span.FieldStart), ent.Asc(span.FieldEnd)).All(ctx)
}

// CorpusSummary is one corpus as a listing shows it.
type CorpusSummary struct {
	Name   string `json:"name"`
	TagSet string `json:"tagset"`
	Kind   string `json:"kind"`   // original or surrogate
	Source string `json:"source"` // how it was made: import, resynthesis, derive, created
	Check  string `json:"check"`  // a surrogate corpus's resynthesis check: none, passed, failed, resolved
	// UnfinishedImport: the import that made it has not written its last
	// batch (still running, or its process was killed).
	UnfinishedImport bool      `json:"unfinishedImport,omitempty"`
	Documents        int       `json:"documents"`
	Sets             []string  `json:"sets"`
	Created          time.Time `json:"created"`
}

// CorpusList lists the corpora the caller may see, by name, with their
// documents counted in one grouped query.
func (s *Store) CorpusList(ctx context.Context) ([]CorpusSummary, error) {
	cs, err := s.Client.Corpus.Query().Order(ent.Asc(corpus.FieldName)).WithAnnotationSets().All(ctx)
	if err != nil {
		return nil, err
	}
	var counts []struct {
		CorpusID int `json:"corpus_id"`
		Count    int `json:"count"`
	}
	if err := s.Client.Document.Query().GroupBy(document.FieldCorpusID).Aggregate(ent.Count()).Scan(ctx, &counts); err != nil {
		return nil, err
	}
	docs := map[int]int{}
	for _, c := range counts {
		docs[c.CorpusID] = c.Count
	}
	out := make([]CorpusSummary, len(cs))
	for i, c := range cs {
		source, _ := c.Provenance["source"].(string)
		out[i] = CorpusSummary{Name: c.Name, TagSet: c.Tagset, Kind: string(c.Kind), Source: source,
			Check: string(c.CheckStatus), Documents: docs[c.ID], Created: c.CreatedAt, UnfinishedImport: unfinishedImport(c)}
		for _, set := range c.Edges.AnnotationSets {
			out[i].Sets = append(out[i].Sets, set.Name)
		}
		slices.Sort(out[i].Sets)
	}
	return out, nil
}

// DeleteCorpus removes a corpus and everything in it, and, for a source of
// resynthesis, the surrogate mappings and date shifts kept for it (they hold
// its original values, encrypted). Releases frozen from it stay.
func (s *Store) DeleteCorpus(ctx context.Context, name string) error {
	c, err := s.CorpusByName(ctx, name)
	if err != nil {
		return err
	}
	return s.withTx(ctx, func(tx *ent.Tx) error {
		if _, err := tx.SurrogateMapping.Delete().Where(surrogatemapping.CorpusID(c.ID)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.DateShift.Delete().Where(dateshift.CorpusID(c.ID)).Exec(ctx); err != nil {
			return err
		}
		return tx.Corpus.DeleteOneID(c.ID).Exec(ctx)
	})
}
