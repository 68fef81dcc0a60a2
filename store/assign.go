package store

import (
	"context"
	"fmt"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/document"
	"deidcorpus/ent/documentprogress"
	"deidcorpus/ent/patient"
	"deidcorpus/ent/span"
	"deidcorpus/ent/user"
)

// Assignment is a batch of a corpus's documents given to annotators, each
// to work on in a set of its own, named Set + ":" + the account
// ("batch-1:ann"). The documents are those matching every criterion given
// (patients, split, note type, ids); at least one must be.
type Assignment struct {
	Corpus     string
	Set        string
	Annotators []string
	Patients   []string // the patients' ids in the source
	Split      string
	NoteType   string
	Documents  []int // document ids
	// Limit keeps the first Limit matching documents (by id); 0 keeps all.
	// Alone it chooses the corpus's first documents. At most MaxAssign.
	Limit int
	// PreannotateFrom names a set of the corpus (a tagging run's output)
	// whose spans each newly assigned document starts with; "" starts
	// empty. The set's provenance says which.
	PreannotateFrom string
	// Open lets the annotators read the corpus's other sets (gold, each
	// other's); without it they read their own only (auth/filter.go).
	Open bool
}

// MaxAssign is the most documents an assignment's Limit may ask for.
const MaxAssign = 10_000

// AssignDocuments gives the batch to each annotator: its set is made where
// missing, each document not yet in it gets its progress (todo, version 0)
// and, with PreannotateFrom, a copy of that set's spans. A document already
// assigned keeps its state and spans. It returns the annotators' sets.
func (s *Store) AssignDocuments(ctx context.Context, a Assignment) ([]*ent.AnnotationSet, error) {
	if len(a.Annotators) == 0 {
		return nil, apperr.New(apperr.Invalid, "assignment: name at least one annotator")
	}
	if a.Set == "" || strings.Contains(a.Set, ":") {
		return nil, apperr.New(apperr.Invalid, "assignment: set %q: give a name without ':' (each annotator's set is NAME:ACCOUNT)", a.Set)
	}
	c, err := s.CorpusByName(ctx, a.Corpus)
	if err != nil {
		return nil, err
	}
	for _, name := range a.Annotators {
		// Curators may not list accounts: the check reads as the system.
		ok, err := s.Client.User.Query().Where(user.Name(name), user.RoleEQ(user.RoleAnnotator), user.Disabled(false),
			user.HasAssignedCorporaWith(corpus.ID(c.ID))).Exist(auth.System(ctx))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apperr.New(apperr.Invalid, "assignment: %s is not an annotator of corpus %q (an admin assigns corpora: assignCorpus)", name, c.Name)
		}
	}
	docs, err := s.selectDocuments(ctx, c, a)
	if err != nil {
		return nil, err
	}
	var from *ent.AnnotationSet
	prov := map[string]any{"preannotation": "none"}
	if a.PreannotateFrom != "" {
		if from, err = s.AnnotationSet(ctx, c, a.PreannotateFrom); err != nil {
			return nil, err
		}
		pre := map[string]any{"set": from.Name, "kind": string(from.Kind)}
		if m, ok := from.Provenance["model"]; ok {
			pre["model"] = m
		}
		prov["preannotation"] = pre
	}
	var sets []*ent.AnnotationSet
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		for _, name := range a.Annotators {
			set, err := assignOne(ctx, tx, c, a.Set+":"+name, name, a.Open, prov, docs, from)
			if err != nil {
				return err
			}
			sets = append(sets, set)
		}
		return s.bumpContentVersion(ctx, tx, c.ID)
	})
	if err != nil {
		return nil, err
	}
	detail := fmt.Sprintf("corpus %q: %d documents to %s in sets %s:ACCOUNT", c.Name, len(docs), strings.Join(a.Annotators, ", "), a.Set)
	if a.Open {
		detail += ", open (they read the corpus's other sets)"
	}
	if from != nil {
		detail += fmt.Sprintf(", pre-annotated from set %q", from.Name)
	}
	if aerr := s.Audit(context.WithoutCancel(ctx), AuditRecord{Action: "write", Target: "annotation.assign", Detail: detail}); aerr != nil {
		s.logger.Error("write audit log", "target", "annotation.assign", "err", aerr)
	}
	return sets, nil
}

// selectDocuments finds the documents of an assignment, in id order.
func (s *Store) selectDocuments(ctx context.Context, c *ent.Corpus, a Assignment) ([]*ent.Document, error) {
	where := []func(*ent.DocumentQuery){}
	if len(a.Patients) > 0 {
		where = append(where, func(q *ent.DocumentQuery) { q.Where(document.HasPatientWith(patient.ExternalIDIn(a.Patients...))) })
	}
	if a.Split != "" {
		sp, err := normalizeSplit(a.Split)
		if err != nil {
			return nil, err
		}
		where = append(where, func(q *ent.DocumentQuery) { q.Where(document.SplitEQ(sp)) })
	}
	if a.NoteType != "" {
		where = append(where, func(q *ent.DocumentQuery) { q.Where(document.NoteType(a.NoteType)) })
	}
	if len(a.Documents) > 0 {
		where = append(where, func(q *ent.DocumentQuery) { q.Where(document.IDIn(a.Documents...)) })
	}
	if a.Limit < 0 || a.Limit > MaxAssign {
		return nil, apperr.New(apperr.Invalid, "assignment: count %d is out of range: assign 1 to %d documents at a time", a.Limit, MaxAssign)
	}
	if len(where) == 0 && a.Limit == 0 {
		return nil, apperr.New(apperr.Invalid, "assignment: choose the documents by patients, split, note type, ids or a count")
	}
	q := s.Client.Document.Query().Where(document.CorpusID(c.ID))
	for _, w := range where {
		w(q)
	}
	if a.Limit > 0 {
		q.Limit(a.Limit)
	}
	docs, err := q.Order(ent.Asc(document.FieldID)).
		Select(document.FieldID, document.FieldSplit, document.FieldNoteType).All(ctx)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, apperr.New(apperr.Invalid, "assignment: no document of corpus %q matches", c.Name)
	}
	return docs, nil
}

// assignOne gives docs to one annotator's set, made if missing.
func assignOne(ctx context.Context, tx *ent.Tx, c *ent.Corpus, setName, annotator string, open bool, prov map[string]any,
	docs []*ent.Document, from *ent.AnnotationSet) (*ent.AnnotationSet, error) {
	set, err := tx.AnnotationSet.Query().Where(annotationset.CorpusID(c.ID), annotationset.Name(setName)).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		set, err = tx.AnnotationSet.Create().SetCorpusID(c.ID).SetName(setName).SetKind(annotationset.KindAnnotator).
			SetAnnotator(annotator).SetOpen(open).SetProvenance(prov).Save(ctx)
		if err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case set.Annotator != annotator:
		return nil, apperr.New(apperr.Conflict, "corpus %q already has a set %q that is not %s's", c.Name, setName, annotator)
	case set.Open != open: // the latest assignment says
		if set, err = set.Update().SetOpen(open).Save(ctx); err != nil {
			return nil, err
		}
	}
	have, err := tx.DocumentProgress.Query().Where(documentprogress.AnnotationSetID(set.ID)).
		Select(documentprogress.FieldDocumentID).Ints(ctx)
	if err != nil {
		return nil, err
	}
	assigned := make(map[int]bool, len(have))
	for _, id := range have {
		assigned[id] = true
	}
	var fresh []*ent.Document
	for _, d := range docs {
		if !assigned[d.ID] {
			fresh = append(fresh, d)
		}
	}
	for start := 0; start < len(fresh); start += docBatch {
		chunk := fresh[start:min(start+docBatch, len(fresh))]
		builders := make([]*ent.DocumentProgressCreate, len(chunk))
		ids := make([]int, len(chunk))
		for i, d := range chunk {
			builders[i] = tx.DocumentProgress.Create().SetCorpusID(c.ID).SetAnnotationSetID(set.ID).SetDocumentID(d.ID)
			ids[i] = d.ID
		}
		if err := tx.DocumentProgress.CreateBulk(builders...).Exec(ctx); err != nil {
			return nil, err
		}
		if from == nil {
			continue
		}
		spans, err := tx.Span.Query().Where(span.AnnotationSetID(from.ID), span.DocumentIDIn(ids...)).All(ctx)
		if err != nil {
			return nil, err
		}
		copies := make([]*ent.SpanCreate, len(spans))
		for i, sp := range spans {
			copies[i] = tx.Span.Create().SetDocumentID(sp.DocumentID).SetAnnotationSetID(set.ID).
				SetStart(sp.Start).SetEnd(sp.End).SetText(sp.Text).SetCategory(sp.Category).SetType(sp.Type).
				SetSplit(sp.Split).SetNoteType(sp.NoteType)
		}
		for i := 0; i < len(copies); i += spanBatch {
			if err := tx.Span.CreateBulk(copies[i:min(i+spanBatch, len(copies))]...).Exec(ctx); err != nil {
				return nil, err
			}
		}
	}
	return set, nil
}

// SetProgress lists the documents of a set with their state (for an
// annotator's set, the documents assigned to it), in document order.
func (s *Store) SetProgress(ctx context.Context, set *ent.AnnotationSet) ([]*AnnotationState, error) {
	rows, err := s.Client.DocumentProgress.Query().Where(documentprogress.AnnotationSetID(set.ID)).
		Order(ent.Asc(documentprogress.FieldDocumentID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*AnnotationState, len(rows))
	for i, r := range rows {
		out[i] = &AnnotationState{SetID: set.ID, DocumentID: r.DocumentID, Status: r.Status, Version: r.Version}
	}
	return out, nil
}
