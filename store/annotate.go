package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/documentprogress"
	"deidcorpus/ent/span"
	"deidcorpus/ent/spanedit"
	"deidcorpus/pipeline/phi"
)

// Hand edits of an annotation set: a span added, changed or removed, a
// document's status set, the last edit undone. Each is made against the
// version of the document in the set that the editor read (DocumentProgress)
// and raises it by one, so that of two people editing the same document the
// second to write is refused rather than silently undoing the first; each
// bumps the corpus's content version (statistics, comparisons and releases
// see it), is kept as a SpanEdit (for undo) and is written to the audit log
// with the span's offsets and label before and after, never its text.

// AnnotationState is a document's status and version in one set.
type AnnotationState struct {
	SetID, DocumentID int
	Status            documentprogress.Status
	Version           int
}

// SpanChange is a span's new offsets and label. A zero End, or an empty
// Type, keeps the span's own (ChangeSpan); Category may be left empty where
// the corpus's tag set knows the type's.
type SpanChange struct {
	Start, End     int
	Category, Type string
}

// AnnotationEdit is the outcome of an edit: the document's new state and the
// span added or changed (nil for a removal or a status).
type AnnotationEdit struct {
	State AnnotationState
	Span  *ent.Span
}

// editing is what an edit reads before it writes, in its transaction.
type editing struct {
	s      *Store
	tx     *ent.Tx
	set    *ent.AnnotationSet
	doc    *ent.Document
	corpus *ent.Corpus
	runes  []rune
	state  AnnotationState
	record ent.SpanEdit // the edit's before and after, filled by the change
	undone int          // the version an undo reverses
}

// AnnotationState reads a document's state in a set (version 0, todo, for
// one never edited).
func (s *Store) AnnotationState(ctx context.Context, setID, docID int) (AnnotationState, error) {
	st := AnnotationState{SetID: setID, DocumentID: docID, Status: documentprogress.StatusTodo}
	p, err := s.Client.DocumentProgress.Query().
		Where(documentprogress.AnnotationSetID(setID), documentprogress.DocumentID(docID)).Only(ctx)
	if ent.IsNotFound(err) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	st.Status, st.Version = p.Status, p.Version
	return st, nil
}

// DocumentAnnotationState is AnnotationState for a document the viewer has
// read, in a set of its corpus that the viewer sees.
func (s *Store) DocumentAnnotationState(ctx context.Context, setID int, doc *ent.Document) (AnnotationState, error) {
	set, err := s.Client.AnnotationSet.Get(ctx, setID)
	if err != nil || set.CorpusID != doc.CorpusID {
		return AnnotationState{}, notFound(err, "no annotation set with id %d in the document's corpus", setID)
	}
	return s.AnnotationState(ctx, setID, doc.ID)
}

// AddSpan adds a span to a document in a set; its text is the note's at the
// offsets.
func (s *Store) AddSpan(ctx context.Context, setID, docID, version int, c SpanChange) (*AnnotationEdit, error) {
	var added *ent.Span
	state, err := s.edit(ctx, setID, docID, version, func(ctx context.Context, e *editing) error {
		cat, typ, err := e.check(c)
		if err != nil {
			return err
		}
		added, err = e.tx.Span.Create().SetDocumentID(e.doc.ID).SetAnnotationSetID(e.set.ID).
			SetStart(c.Start).SetEnd(c.End).SetText(string(e.runes[c.Start:c.End])).
			SetCategory(cat).SetType(typ).SetSplit(string(e.doc.Split)).SetNoteType(e.doc.NoteType).Save(ctx)
		if err != nil {
			return err
		}
		e.record.Op, e.record.SpanID = spanedit.OpAdd, added.ID
		e.record.AfterStart, e.record.AfterEnd, e.record.AfterLabel = &added.Start, &added.End, label(cat, typ)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &AnnotationEdit{State: state, Span: added}, nil
}

// ChangeSpan moves a span's boundaries or changes its label.
func (s *Store) ChangeSpan(ctx context.Context, spanID, version int, c SpanChange) (*AnnotationEdit, error) {
	sp, err := s.Client.Span.Get(ctx, spanID)
	if err != nil {
		return nil, notFoundSpan(err, spanID)
	}
	var changed *ent.Span
	state, err := s.edit(ctx, sp.AnnotationSetID, sp.DocumentID, version, func(ctx context.Context, e *editing) error {
		cur, err := e.tx.Span.Get(ctx, spanID)
		if err != nil {
			return notFoundSpan(err, spanID)
		}
		if c.End == 0 {
			c.Start, c.End = cur.Start, cur.End
		}
		if c.Type == "" {
			c.Category, c.Type = cur.Category, cur.Type
		}
		cat, typ, err := e.check(c)
		if err != nil {
			return err
		}
		changed, err = e.tx.Span.UpdateOne(cur).SetStart(c.Start).SetEnd(c.End).
			SetText(string(e.runes[c.Start:c.End])).SetCategory(cat).SetType(typ).Save(ctx)
		if err != nil {
			return err
		}
		e.record.Op, e.record.SpanID = spanedit.OpChange, spanID
		e.record.BeforeStart, e.record.BeforeEnd, e.record.BeforeLabel = &cur.Start, &cur.End, label(cur.Category, cur.Type)
		e.record.AfterStart, e.record.AfterEnd, e.record.AfterLabel = &changed.Start, &changed.End, label(cat, typ)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &AnnotationEdit{State: state, Span: changed}, nil
}

// RemoveSpan removes a span from its set.
func (s *Store) RemoveSpan(ctx context.Context, spanID, version int) (*AnnotationEdit, error) {
	sp, err := s.Client.Span.Get(ctx, spanID)
	if err != nil {
		return nil, notFoundSpan(err, spanID)
	}
	state, err := s.edit(ctx, sp.AnnotationSetID, sp.DocumentID, version, func(ctx context.Context, e *editing) error {
		cur, err := e.tx.Span.Get(ctx, spanID)
		if err != nil {
			return notFoundSpan(err, spanID)
		}
		if err := e.tx.Span.DeleteOne(cur).Exec(ctx); err != nil {
			return err
		}
		e.record.Op, e.record.SpanID = spanedit.OpRemove, spanID
		e.record.BeforeStart, e.record.BeforeEnd, e.record.BeforeLabel = &cur.Start, &cur.End, label(cur.Category, cur.Type)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &AnnotationEdit{State: state}, nil
}

// SetDocumentStatus sets a document's status in a set.
func (s *Store) SetDocumentStatus(ctx context.Context, setID, docID, version int, status documentprogress.Status) (AnnotationState, error) {
	if err := documentprogress.StatusValidator(status); err != nil {
		return AnnotationState{}, apperr.New(apperr.Invalid, "unknown status %q (known: todo, in_progress, done)", status)
	}
	return s.edit(ctx, setID, docID, version, func(ctx context.Context, e *editing) error {
		e.record.Op = spanedit.OpStatus
		e.record.BeforeLabel, e.record.AfterLabel = string(e.state.Status), string(status)
		e.state.Status = status
		return nil
	})
}

// UndoEdit reverses the last edit of a document in a set not yet undone
// (edits made by anyone, undos aside); undoing again reverses the one
// before. The undo is itself an edit, against version.
func (s *Store) UndoEdit(ctx context.Context, setID, docID, version int) (*AnnotationEdit, error) {
	var restored *ent.Span
	state, err := s.edit(ctx, setID, docID, version, func(ctx context.Context, e *editing) error {
		last, err := e.tx.SpanEdit.Query().Where(spanedit.AnnotationSetID(setID), spanedit.DocumentID(docID),
			spanedit.Undone(false), spanedit.UndoesIsNil()).Order(ent.Desc(spanedit.FieldID)).First(ctx)
		if ent.IsNotFound(err) {
			return apperr.New(apperr.Conflict, "document %d has no edit in set %q left to undo", docID, e.set.Name)
		}
		if err != nil {
			return err
		}
		if restored, err = e.reverse(ctx, last); err != nil {
			return err
		}
		undoes := last.ID
		e.record.Undoes, e.undone = undoes, last.Version
		e.record.BeforeStart, e.record.BeforeEnd, e.record.BeforeLabel = last.AfterStart, last.AfterEnd, last.AfterLabel
		e.record.AfterStart, e.record.AfterEnd, e.record.AfterLabel = last.BeforeStart, last.BeforeEnd, last.BeforeLabel
		e.record.SpanID = last.SpanID
		return e.tx.SpanEdit.UpdateOne(last).SetUndone(true).Exec(ctx)
	})
	if err != nil {
		return nil, err
	}
	return &AnnotationEdit{State: state, Span: restored}, nil
}

// reverse applies the inverse of an edit and sets the undo's op: the span an
// add made is removed, a removed span comes back under its id, a change
// goes back, a status returns.
func (e *editing) reverse(ctx context.Context, last *ent.SpanEdit) (*ent.Span, error) {
	switch last.Op {
	case spanedit.OpAdd:
		e.record.Op = spanedit.OpRemove
		_, err := e.tx.Span.Delete().Where(span.ID(last.SpanID), span.AnnotationSetID(e.set.ID)).Exec(ctx)
		return nil, err
	case spanedit.OpRemove:
		e.record.Op = spanedit.OpAdd
		cat, typ := unlabel(last.BeforeLabel)
		start, end := *last.BeforeStart, *last.BeforeEnd
		// The same id: edits made before the removal name it.
		seal, err := e.s.setSeal(ctx, e.set.ID)
		if err != nil {
			return nil, err
		}
		_, err = e.tx.ExecContext(ctx, e.s.rebind(`INSERT INTO spans (id, document_id, annotation_set_id, "start", "end", text, category, "type", comment, source_id, split, note_type)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', '', ?, ?)`),
			last.SpanID, e.doc.ID, e.set.ID, start, end, seal.seal(fieldSpanText, string(e.runes[start:end])), cat, typ, string(e.doc.Split), e.doc.NoteType)
		if err != nil {
			return nil, err
		}
		return e.tx.Span.Get(ctx, last.SpanID)
	case spanedit.OpChange:
		e.record.Op = spanedit.OpChange
		cat, typ := unlabel(last.BeforeLabel)
		start, end := *last.BeforeStart, *last.BeforeEnd
		sp, err := e.tx.Span.UpdateOneID(last.SpanID).Where(span.AnnotationSetID(e.set.ID)).SetStart(start).SetEnd(end).
			SetText(string(e.runes[start:end])).SetCategory(cat).SetType(typ).Save(ctx)
		if ent.IsNotFound(err) {
			return nil, apperr.New(apperr.Conflict, "span %d, changed by edit %d, no longer exists: that edit cannot be undone", last.SpanID, last.ID)
		}
		return sp, err
	default: // status
		e.record.Op = spanedit.OpStatus
		e.state.Status = documentprogress.Status(last.BeforeLabel)
		return nil, nil
	}
}

// edit runs one edit of a document in a set made against version: it checks
// that the viewer may edit the set and that nobody wrote the document since
// version, runs change, raises the version, keeps the edit and bumps the
// corpus's content version, all in one transaction, then writes the audit
// record.
func (s *Store) edit(ctx context.Context, setID, docID, version int, change func(context.Context, *editing) error) (AnnotationState, error) {
	e := &editing{s: s}
	var err error
	if e.set, err = s.Client.AnnotationSet.Get(ctx, setID); err != nil {
		return AnnotationState{}, notFound(err, "no annotation set with id %d", setID)
	}
	if e.doc, err = s.Client.Document.Get(ctx, docID); err != nil || e.doc.CorpusID != e.set.CorpusID {
		return AnnotationState{}, notFound(err, "no document with id %d in the corpus of annotation set %q", docID, e.set.Name)
	}
	if e.corpus, err = s.Client.Corpus.Get(ctx, e.set.CorpusID); err != nil {
		return AnnotationState{}, err
	}
	if err := mayEdit(ctx, e.corpus, e.set); err != nil {
		return AnnotationState{}, err
	}
	e.runes = []rune(e.doc.Text)
	actor := auth.Name(ctx)
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		e.tx = tx
		if e.state, err = s.claimVersion(ctx, tx, e.set, docID, version); err != nil {
			return err
		}
		if err := change(ctx, e); err != nil {
			return err
		}
		if e.record.Op != spanedit.OpStatus && e.state.Status == documentprogress.StatusTodo {
			e.state.Status = documentprogress.StatusInProgress
		}
		if err := tx.DocumentProgress.Update().
			Where(documentprogress.AnnotationSetID(setID), documentprogress.DocumentID(docID)).
			SetStatus(e.state.Status).SetUpdatedAt(time.Now()).SetUpdatedBy(actor).Exec(ctx); err != nil {
			return err
		}
		r := e.record
		create := tx.SpanEdit.Create().SetCorpusID(e.set.CorpusID).SetAnnotationSetID(setID).SetDocumentID(docID).
			SetVersion(e.state.Version).SetOp(r.Op).SetSpanID(r.SpanID).SetBeforeLabel(r.BeforeLabel).SetAfterLabel(r.AfterLabel).
			SetNillableBeforeStart(r.BeforeStart).SetNillableBeforeEnd(r.BeforeEnd).
			SetNillableAfterStart(r.AfterStart).SetNillableAfterEnd(r.AfterEnd).SetActor(actor)
		if r.Undoes != 0 {
			create.SetUndoes(r.Undoes)
		}
		saved, err := create.Save(ctx)
		if err != nil {
			return err
		}
		e.record.ID = saved.ID
		return s.bumpContentVersion(ctx, tx, e.set.CorpusID)
	})
	if err != nil {
		return AnnotationState{}, err
	}
	// The edit is committed: a failure to audit it is logged, as the
	// server's own audit failures are, and the edit stands.
	if aerr := s.Audit(context.WithoutCancel(ctx), AuditRecord{Action: "write", Target: "annotation." + string(e.record.Op),
		IDs: auditIDs(e), Detail: describeEdit(e)}); aerr != nil {
		s.logger.Error("write audit log", "target", "annotation."+string(e.record.Op), "err", aerr)
	}
	return e.state, nil
}

// claimVersion raises the document's version in the set from version to
// version+1, or refuses (conflict) if it is no longer version: someone else
// wrote the document since the editor read it. The conditional update (or
// the unique insert of a first edit) is the test, so two writers racing
// for the same version cannot both win, on either database.
func (s *Store) claimVersion(ctx context.Context, tx *ent.Tx, set *ent.AnnotationSet, docID, version int) (AnnotationState, error) {
	st := AnnotationState{SetID: set.ID, DocumentID: docID, Version: version + 1}
	n, err := tx.DocumentProgress.Update().
		Where(documentprogress.AnnotationSetID(set.ID), documentprogress.DocumentID(docID), documentprogress.Version(version)).
		AddVersion(1).Save(ctx)
	if err != nil {
		return st, err
	}
	if n == 1 {
		p, err := tx.DocumentProgress.Query().
			Where(documentprogress.AnnotationSetID(set.ID), documentprogress.DocumentID(docID)).Only(ctx)
		if err != nil {
			return st, err
		}
		st.Status = p.Status
		return st, nil
	}
	cur, err := tx.DocumentProgress.Query().
		Where(documentprogress.AnnotationSetID(set.ID), documentprogress.DocumentID(docID)).Only(ctx)
	switch {
	case err == nil:
		return st, staleVersion(set, docID, version, cur.Version, cur.UpdatedBy)
	case !ent.IsNotFound(err):
		return st, err
	case version != 0:
		return st, staleVersion(set, docID, version, 0, "")
	}
	err = tx.DocumentProgress.Create().SetCorpusID(set.CorpusID).SetAnnotationSetID(set.ID).SetDocumentID(docID).
		SetVersion(1).Exec(ctx)
	if ent.IsConstraintError(err) { // a first edit by someone else, meanwhile
		return st, staleVersion(set, docID, 0, 1, "")
	}
	st.Status = documentprogress.StatusTodo
	return st, err
}

func staleVersion(set *ent.AnnotationSet, docID, had, now int, by string) error {
	who := ""
	if by != "" {
		who = " by " + by
	}
	return apperr.New(apperr.Conflict, "document %d in annotation set %q was changed%s since you read it (it is at version %d, "+
		"your edit was made against version %d): nothing was written; reload the document and make your edit again", docID, set.Name, who, now, had)
}

// mayEdit refuses an edit of a set the viewer may not change: an annotator
// changes only the sets assigned to it, researchers nothing, and nobody a
// set a job is still writing. (The operation's rule has already let the
// viewer see the set.)
func mayEdit(ctx context.Context, c *ent.Corpus, set *ent.AnnotationSet) error {
	if err := refuseWriting(c, set); err != nil {
		return err
	}
	v := auth.FromContext(ctx)
	switch {
	case v == nil || v.SeesAllCorpora():
		return nil
	case v.Role == auth.Annotator && set.Annotator == v.Name:
		return nil
	case v.Role == auth.Annotator:
		return apperr.New(apperr.Forbidden, "annotation set %q of corpus %q is not assigned to you (%s): annotators edit only their own sets", set.Name, c.Name, v.Name)
	}
	return apperr.New(apperr.Forbidden, "editing annotations needs the admin, curator or annotator role (you are %s)", v.Name)
}

// check validates a span's offsets against the note and its label against
// the corpus's tag set, and returns the label with its category filled in.
func (e *editing) check(c SpanChange) (category, typ string, err error) {
	if c.Start < 0 || c.End <= c.Start || c.End > len(e.runes) {
		return "", "", apperr.New(apperr.Invalid, "span offsets %d-%d do not fit document %d: a span needs 0 <= start < end <= %d (the note's length in code points)",
			c.Start, c.End, e.doc.ID, len(e.runes))
	}
	ts, _ := phi.Lookup(e.corpus.Tagset)
	category, typ, err = phi.Normalize(ts, c.Category, c.Type)
	if err != nil {
		return "", "", apperr.New(apperr.Invalid, "span label in corpus %q: %v", e.corpus.Name, err)
	}
	return category, typ, nil
}

func notFoundSpan(err error, id int) error { return notFound(err, "no span with id %d", id) }

// notFound reports a row the viewer cannot see as missing.
func notFound(err error, format string, args ...any) error {
	if err == nil || ent.IsNotFound(err) {
		return apperr.New(apperr.NotFound, format, args...)
	}
	return err
}

func label(category, typ string) string { return category + "/" + typ }

func unlabel(l string) (category, typ string) {
	for i := len(l) - 1; i >= 0; i-- {
		if l[i] == '/' {
			return l[:i], l[i+1:]
		}
	}
	return l, l
}

func auditIDs(e *editing) []string {
	ids := []string{"document:" + strconv.Itoa(e.doc.ID), "set:" + strconv.Itoa(e.set.ID)}
	if e.record.SpanID != 0 {
		ids = append(ids, "span:"+strconv.Itoa(e.record.SpanID))
	}
	return ids
}

// describeEdit says what an edit changed, PHI-free: offsets and labels.
func describeEdit(e *editing) string {
	r := e.record
	side := func(start, end *int, label string) string {
		if start == nil {
			if label == "" {
				return "none"
			}
			return label
		}
		return fmt.Sprintf("%d-%d %s", *start, *end, label)
	}
	d := fmt.Sprintf("corpus %q set %q document %d version %d: before %s; after %s", e.corpus.Name, e.set.Name, e.doc.ID,
		e.state.Version, side(r.BeforeStart, r.BeforeEnd, r.BeforeLabel), side(r.AfterStart, r.AfterEnd, r.AfterLabel))
	if r.Undoes != 0 {
		d += fmt.Sprintf(" (undoes version %d)", e.undone)
	}
	return d
}
