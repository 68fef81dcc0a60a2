package auth

import (
	"context"

	"entgo.io/ent/dialect/sql"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/artifact"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/document"
	"deidcorpus/ent/documentprogress"
	"deidcorpus/ent/evaluation"
	"deidcorpus/ent/intercept"
	"deidcorpus/ent/job"
	"deidcorpus/ent/model"
	"deidcorpus/ent/patient"
	"deidcorpus/ent/release"
	"deidcorpus/ent/span"
	"deidcorpus/ent/spanedit"
	"deidcorpus/ent/token"
	"deidcorpus/ent/user"
)

// Install adds the row filters to every query of the client: a viewer's
// queries, root or traversal or eager load, return only the rows its role may
// see, and queries of a type its role may never read fail with a forbidden
// error. An HTTP request without a viewer (Anonymous) reads and writes
// nothing.
func Install(c *ent.Client) {
	c.Use(func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if Anonymous(ctx) {
				return nil, errAnonymous()
			}
			return next.Mutate(ctx, m)
		})
	})
	c.Intercept(intercept.TraverseFunc(func(ctx context.Context, q intercept.Query) error {
		v := FromContext(ctx)
		if v == nil {
			if Anonymous(ctx) {
				return errAnonymous()
			}
			return nil
		}
		f, ok := rowFilters[q.Type()]
		if !ok {
			// A new type without a rule is closed to all but admins.
			if v.Role == Admin {
				return nil
			}
			return apperr.New(apperr.Forbidden, "%s rows have no access rule", q.Type())
		}
		p, err := f(ctx, c, v)
		if err != nil || p == nil {
			return err
		}
		q.WhereP(p)
		return nil
	}))
}

// rowFilter returns the predicate restricting v's queries of one type, nil
// for none, or an error when v may not read the type at all.
type rowFilter func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error)

// rowFilters has a rule for every ent type (a test checks that).
var rowFilters = map[string]rowFilter{
	"Corpus": byCorpus(corpus.FieldID),
	// Rows inside a corpus follow their corpus.
	"Patient":  byCorpus(patient.FieldCorpusID),
	"Document": byCorpus(document.FieldCorpusID),
	// Annotators are blind (annotatorSets): the sets, spans and edits of
	// others, and the gold, are curators'.
	"AnnotationSet": bySet(annotationset.FieldCorpusID, annotationset.FieldID),
	// An annotator's evaluations are those its own jobs made (which read
	// only sets it sees), or any in a corpus it annotates openly.
	"Evaluation": func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
		corpusRule, err := byCorpus(evaluation.FieldCorpusID)(ctx, c, v)
		if err != nil || v.Role != Annotator {
			return corpusRule, err
		}
		return func(s *sql.Selector) {
			corpusRule(s)
			s.Where(sql.Or(sql.EQ(s.C(evaluation.FieldCreatedBy), v.Name),
				sql.In(s.C(evaluation.FieldCorpusID), openCorpora(v))))
		}, nil
	},
	// Hand edits' bookkeeping (offsets, labels, statuses; no text).
	"DocumentProgress": bySet(documentprogress.FieldCorpusID, documentprogress.FieldAnnotationSetID),
	"SpanEdit":         bySet(spanedit.FieldCorpusID, spanedit.FieldAnnotationSetID),
	"Span": func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
		if v.SeesAllCorpora() {
			return nil, nil
		}
		ids, err := v.visible(ctx, c)
		if err != nil {
			return nil, err
		}
		return func(s *sql.Selector) {
			d := sql.Table(document.Table)
			s.Where(sql.In(s.C(span.FieldDocumentID),
				sql.Select(d.C(document.FieldID)).From(d).Where(sql.InInts(d.C(document.FieldCorpusID), ids...))))
			if v.Role == Annotator {
				s.Where(sql.In(s.C(span.FieldAnnotationSetID), annotatorSets(v)))
			}
		}, nil
	},
	// A release shared outside (surrogate text that passed its check) is
	// everyone's, unless its corpus has since been quarantined (a later
	// run into it failed its check); others follow the corpus they were
	// frozen from.
	"Release": func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
		if v.SeesAllCorpora() {
			return nil, nil
		}
		ids, err := v.visible(ctx, c)
		if err != nil {
			return nil, err
		}
		return func(s *sql.Selector) {
			q := sql.Table(corpus.Table)
			quarantined := sql.Select(q.C(corpus.FieldID)).From(q).
				Where(sql.EQ(q.C(corpus.FieldCheckStatus), corpus.CheckStatusFailed))
			s.Where(sql.Or(
				sql.And(sql.EQ(s.C(release.FieldShare), true),
					sql.Or(sql.IsNull(s.C(release.FieldCorpusID)), sql.NotIn(s.C(release.FieldCorpusID), quarantined))),
				sql.InInts(s.C(release.FieldCorpusID), ids...)))
		}, nil
	},
	// Chunks (a release's snapshot, an artifact's file) are read only by the
	// key of a release or artifact row, which that row's rule has already
	// let the viewer read.
	"Chunk": func(context.Context, *ent.Client, *Viewer) (func(*sql.Selector), error) { return nil, nil },
	// Kept statistics (counts and label names, no text) are read only for
	// a set that the set's rule has already let the viewer read.
	"StatisticsResult": func(context.Context, *ent.Client, *Viewer) (func(*sql.Selector), error) { return nil, nil },
	// A trained model holds words of its training text (learnt gazetteer,
	// triggers): it follows its training corpus, by id (a name can be
	// reused). External taggers are everyone's.
	"Model": func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
		if v.SeesAllCorpora() {
			return nil, nil
		}
		ids, err := v.visible(ctx, c)
		if err != nil {
			return nil, err
		}
		return func(s *sql.Selector) {
			s.Where(sql.Or(sql.EQ(s.C(model.FieldKind), model.KindExternal), sql.InInts(s.C(model.FieldTrainingCorpusID), ids...)))
		}, nil
	},
	// Annotators and researchers see their own jobs and what they produced,
	// of the kinds their role may start: an account demoted from curator
	// no longer reads its old resynthesis jobs' parameters (source corpus,
	// seed), nor one demoted from annotator its imports'.
	"Job": func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
		if v.SeesAllCorpora() {
			return nil, nil
		}
		kinds := make([]any, len(JobKinds[v.Role]))
		for i, k := range JobKinds[v.Role] {
			kinds[i] = k
		}
		return func(s *sql.Selector) {
			s.Where(sql.And(sql.EQ(s.C(job.FieldCreatedBy), v.Name), sql.In(s.C(job.FieldKind), kinds...)))
		}, nil
	},
	// A file is its creator's while the corpus whose text it holds is
	// visible to it; sealed files (check reports) are curators' only.
	"Artifact": func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
		if v.SeesAllCorpora() {
			return nil, nil
		}
		ids, err := v.visible(ctx, c)
		if err != nil {
			return nil, err
		}
		return func(s *sql.Selector) {
			s.Where(sql.And(
				sql.EQ(s.C(artifact.FieldCreatedBy), v.Name),
				sql.EQ(s.C(artifact.FieldKeyID), ""),
				sql.Or(sql.IsNull(s.C(artifact.FieldCorpusID)), sql.InInts(s.C(artifact.FieldCorpusID), ids...)),
			))
		}, nil
	},
	// Mappings and date shifts lead from surrogates back to real people.
	"SurrogateMapping": curatorsOnly,
	"DateShift":        curatorsOnly,
	"AuditEntry": func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
		if v.Role != Admin {
			return nil, apperr.New(apperr.Forbidden, "the audit log is for admins")
		}
		return nil, nil
	},
	// Accounts: admins see all, others themselves.
	"User": func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
		if v.Role == Admin {
			return nil, nil
		}
		return func(s *sql.Selector) { s.Where(sql.EQ(s.C(user.FieldID), v.UserID)) }, nil
	},
	"Token": func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
		if v.Role == Admin {
			return nil, nil
		}
		return func(s *sql.Selector) { s.Where(sql.EQ(s.C(token.FieldUserID), v.UserID)) }, nil
	},
}

// JobKinds are the kinds of job each restricted role may start (the rules of
// the start* mutations; a test in server checks both agree). Curators and
// admins start and read every kind.
var JobKinds = map[Role][]string{
	Annotator:  {"import", "export", "evaluate", "train", "tag", "experiment"},
	Researcher: {"export", "evaluate", "train", "tag", "experiment"},
}

func curatorsOnly(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
	if !v.SeesAllCorpora() {
		return nil, apperr.New(apperr.Forbidden, "surrogate mappings and date shifts need the curator or admin role")
	}
	return nil, nil
}

// byCorpus keeps the rows whose corpus column names a corpus v may see.
func byCorpus(column string) rowFilter {
	return func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
		if v.SeesAllCorpora() {
			return nil, nil
		}
		ids, err := v.visible(ctx, c)
		if err != nil {
			return nil, err
		}
		return func(s *sql.Selector) { s.Where(sql.InInts(s.C(column), ids...)) }, nil
	}
}

// bySet keeps the rows of corpora v may see (corpusColumn) and, for an
// annotator, of the sets it may see (setColumn, annotatorSets).
func bySet(corpusColumn, setColumn string) rowFilter {
	return func(ctx context.Context, c *ent.Client, v *Viewer) (func(*sql.Selector), error) {
		corpusRule, err := byCorpus(corpusColumn)(ctx, c, v)
		if err != nil || v.Role != Annotator {
			return corpusRule, err
		}
		return func(s *sql.Selector) {
			corpusRule(s)
			s.Where(sql.In(s.C(setColumn), annotatorSets(v)))
		}, nil
	}
}

// annotatorSets selects the ids of the annotation sets annotator v may
// read, besides the corpus rule: its own; the output of taggers (system
// sets: a model's guesses, which pre-annotation copies anyway); and every
// set of a corpus in which one of its sets is open (assignDocuments with
// open). The gold, adjudicated and surrogate sets and other annotators'
// are the curators': an annotator who read them would copy, not annotate.
func annotatorSets(v *Viewer) *sql.Selector {
	a := sql.Table(annotationset.Table)
	return sql.Select(a.C(annotationset.FieldID)).From(a).Where(sql.Or(
		sql.EQ(a.C(annotationset.FieldAnnotator), v.Name),
		sql.EQ(a.C(annotationset.FieldKind), annotationset.KindSystem),
		sql.In(a.C(annotationset.FieldCorpusID), openCorpora(v)),
	))
}

// openCorpora selects the corpora in which annotator v annotates openly.
func openCorpora(v *Viewer) *sql.Selector {
	o := sql.Table(annotationset.Table).As("open_sets")
	return sql.Select(o.C(annotationset.FieldCorpusID)).From(o).
		Where(sql.And(sql.EQ(o.C(annotationset.FieldAnnotator), v.Name), sql.EQ(o.C(annotationset.FieldOpen), true)))
}

// visible lists the ids of the corpora a restricted viewer may see, once per
// viewer (a request, a websocket operation, a CLI command, a job attempt):
// surrogate corpora for a researcher, the assigned ones for an annotator;
// never a quarantined one (its resynthesis check failed: it may hold PHI).
// Everything that follows a corpus (its rows, evaluations, releases, models
// trained on it, files made from it) is hidden with it.
func (v *Viewer) visible(ctx context.Context, c *ent.Client) ([]int, error) {
	v.once.Do(func() {
		q := c.Corpus.Query().Where(corpus.CheckStatusNEQ(corpus.CheckStatusFailed))
		switch v.Role {
		case Researcher:
			q = q.Where(corpus.KindEQ(corpus.KindSurrogate))
		case Annotator:
			q = q.Where(corpus.HasAnnotatorsWith(user.ID(v.UserID)))
		}
		v.corpora, v.err = q.IDs(System(ctx))
	})
	return v.corpora, v.err
}
