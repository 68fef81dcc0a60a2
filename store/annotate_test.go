package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/document"
	"deidcorpus/ent/documentprogress"
	"deidcorpus/ent/span"
	"deidcorpus/ent/user"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// annotating is a corpus of synthetic notes with an empty set to edit.
type annotating struct {
	st  *store.Store
	c   *ent.Corpus
	set *ent.AnnotationSet
	doc *ent.Document
}

func newAnnotating(t *testing.T, b storetest.Backend) *annotating {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, b)
	importSynth(t, st, "c", 3)
	c, err := st.CorpusByName(ctx, "c")
	require.NoError(t, err)
	set, err := st.Client.AnnotationSet.Create().SetCorpusID(c.ID).SetName("ann-1").
		SetKind(annotationset.KindAnnotator).SetAnnotator("ann").Save(ctx)
	require.NoError(t, err)
	doc, err := st.Client.Document.Query().Where(document.CorpusID(c.ID)).Order(ent.Asc(document.FieldID)).First(ctx)
	require.NoError(t, err)
	return &annotating{st: st, c: c, set: set, doc: doc}
}

// spansOf lists a document's spans in the set as "start-end CATEGORY/TYPE text".
func (a *annotating) spansOf(t *testing.T) []string {
	t.Helper()
	rows, err := a.st.Client.Span.Query().Where(span.AnnotationSetID(a.set.ID), span.DocumentID(a.doc.ID)).
		Order(ent.Asc(span.FieldStart)).All(context.Background())
	require.NoError(t, err)
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%d-%d %s/%s %s", r.Start, r.End, r.Category, r.Type, r.Text)
	}
	return out
}

// A span added, changed and removed by hand: its text is always the note's
// at its offsets, its label the tag set's; each edit raises the document's
// version, is seen by the statistics at once, is audited with its offsets
// and labels before and after (never the text), and undoing walks back to
// where the document started, the removed span returning under its id.
func TestEditSpans(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			a := newAnnotating(t, b)
			runes := []rune(a.doc.Text)
			want := func(start, end int) string { return string(runes[start:end]) }

			state, err := a.st.AnnotationState(ctx, a.set.ID, a.doc.ID)
			require.NoError(t, err)
			assert.Equal(t, store.AnnotationState{SetID: a.set.ID, DocumentID: a.doc.ID, Status: documentprogress.StatusTodo}, state)

			added, err := a.st.AddSpan(ctx, a.set.ID, a.doc.ID, 0, store.SpanChange{Start: 2, End: 9, Type: "PATIENT"})
			require.NoError(t, err)
			assert.Equal(t, 1, added.State.Version)
			assert.Equal(t, documentprogress.StatusInProgress, added.State.Status, "the first edit starts the document")
			assert.Equal(t, "NAME", added.Span.Category, "the tag set fills in the category")
			assert.Equal(t, want(2, 9), added.Span.Text)
			stats, err := a.st.Statistics(ctx, "c", "ann-1", nil)
			require.NoError(t, err)
			assert.Equal(t, 1, stats.Spans, "the statistics see the edit")

			changed, err := a.st.ChangeSpan(ctx, added.Span.ID, 1, store.SpanChange{Start: 3, End: 12, Type: "DOCTOR"})
			require.NoError(t, err)
			assert.Equal(t, want(3, 12), changed.Span.Text, "the text follows the offsets")
			relabelled, err := a.st.ChangeSpan(ctx, added.Span.ID, 2, store.SpanChange{Type: "CITY"})
			require.NoError(t, err)
			assert.Equal(t, []string{"3-12 LOCATION/CITY " + want(3, 12)}, a.spansOf(t), "a change of label keeps the offsets")
			assert.Equal(t, 3, relabelled.State.Version)
			removed, err := a.st.RemoveSpan(ctx, added.Span.ID, 3)
			require.NoError(t, err)
			assert.Empty(t, a.spansOf(t))
			done, err := a.st.SetDocumentStatus(ctx, a.set.ID, a.doc.ID, removed.State.Version, documentprogress.StatusDone)
			require.NoError(t, err)
			assert.Equal(t, 5, done.Version)
			stats, err = a.st.Statistics(ctx, "c", "ann-1", nil)
			require.NoError(t, err)
			assert.Zero(t, stats.Spans)

			entries, err := a.st.AuditEntries(ctx, 100)
			require.NoError(t, err)
			var details []string
			for _, e := range entries {
				if strings.HasPrefix(e.Target, "annotation.") {
					details = append(details, e.Target+": "+e.Detail[strings.Index(e.Detail, "version"):])
					for _, phi := range []string{want(2, 9), want(3, 12)} {
						assert.NotContains(t, e.Detail, phi, "the audit log holds offsets, not text")
					}
				}
			}
			assert.ElementsMatch(t, []string{
				"annotation.add: version 1: before none; after 2-9 NAME/PATIENT",
				"annotation.change: version 2: before 2-9 NAME/PATIENT; after 3-12 NAME/DOCTOR",
				"annotation.change: version 3: before 3-12 NAME/DOCTOR; after 3-12 LOCATION/CITY",
				"annotation.remove: version 4: before 3-12 LOCATION/CITY; after none",
				"annotation.status: version 5: before in_progress; after done",
			}, details)

			// Undo, one edit at a time, back to the empty document.
			version := 5
			undo := func() *store.AnnotationEdit {
				t.Helper()
				u, err := a.st.UndoEdit(ctx, a.set.ID, a.doc.ID, version)
				require.NoError(t, err)
				version = u.State.Version
				return u
			}
			assert.Equal(t, documentprogress.StatusInProgress, undo().State.Status)
			back := undo()
			require.NotNil(t, back.Span)
			assert.Equal(t, added.Span.ID, back.Span.ID, "a removed span returns under its id")
			assert.Equal(t, []string{"3-12 LOCATION/CITY " + want(3, 12)}, a.spansOf(t))
			undo()
			assert.Equal(t, []string{"3-12 NAME/DOCTOR " + want(3, 12)}, a.spansOf(t))
			undo()
			undo()
			assert.Empty(t, a.spansOf(t))
			_, err = a.st.UndoEdit(ctx, a.set.ID, a.doc.ID, version)
			assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
			assert.ErrorContains(t, err, "no edit in set \"ann-1\" left to undo")
			assert.Equal(t, 10, version)
		})
	}
}

// Bad edits are refused with what was wrong, and write nothing.
func TestEditSpanRefusals(t *testing.T) {
	ctx := context.Background()
	a := newAnnotating(t, storetest.SQLite)
	n := len([]rune(a.doc.Text))
	for _, tc := range []struct {
		change store.SpanChange
		code   apperr.Code
		msg    string
	}{
		{store.SpanChange{Start: 0, End: 3, Type: "PATEINT"}, apperr.Invalid, `unknown type "PATEINT" in tag set i2b2-2014; did you mean PATIENT?`},
		{store.SpanChange{Start: 0, End: 3, Category: "DATE", Type: "PATIENT"}, apperr.Invalid, "type PATIENT belongs to category NAME, not DATE"},
		{store.SpanChange{Start: 5, End: 5, Type: "PATIENT"}, apperr.Invalid, "a span needs 0 <= start < end"},
		{store.SpanChange{Start: n - 1, End: n + 1, Type: "PATIENT"}, apperr.Invalid, "(the note's length in code points)"},
		{store.SpanChange{Start: -1, End: 2, Type: "PATIENT"}, apperr.Invalid, "do not fit"},
	} {
		_, err := a.st.AddSpan(ctx, a.set.ID, a.doc.ID, 0, tc.change)
		assert.Equal(t, tc.code, apperr.CodeOf(err), "%+v", tc.change)
		assert.ErrorContains(t, err, tc.msg)
	}
	assert.Empty(t, a.spansOf(t))
	state, err := a.st.AnnotationState(ctx, a.set.ID, a.doc.ID)
	require.NoError(t, err)
	assert.Zero(t, state.Version, "a refused edit raises nothing")

	_, err = a.st.AddSpan(ctx, a.set.ID, 999999, 0, store.SpanChange{Start: 0, End: 2, Type: "AGE"})
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err))
	_, err = a.st.SetDocumentStatus(ctx, a.set.ID, a.doc.ID, 0, "finished")
	assert.ErrorContains(t, err, `unknown status "finished"`)
}

// Two editors of one document: whoever writes second, against the version
// both read, is refused with a message saying so, and the first's edit
// stands. Racing writers (both databases) never both win.
func TestEditSpanStaleVersion(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			a := newAnnotating(t, b)
			_, err := a.st.AddSpan(ctx, a.set.ID, a.doc.ID, 0, store.SpanChange{Start: 0, End: 4, Type: "DATE"})
			require.NoError(t, err)
			_, err = a.st.AddSpan(ctx, a.set.ID, a.doc.ID, 0, store.SpanChange{Start: 6, End: 9, Type: "AGE"})
			assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
			assert.ErrorContains(t, err, "was changed by system since you read it (it is at version 1, your edit was made against version 0): nothing was written")
			assert.Len(t, a.spansOf(t), 1)

			var wg sync.WaitGroup
			errs := make([]error, 6)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = a.st.AddSpan(ctx, a.set.ID, a.doc.ID, 1, store.SpanChange{Start: 10 + i, End: 12 + i, Type: "AGE"})
				}()
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				if err == nil {
					won++
				} else {
					assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "%v", err)
				}
			}
			assert.Equal(t, 1, won, "one writer of version 1 wins")
			assert.Len(t, a.spansOf(t), 2)
		})
	}
}

// An annotator edits the sets assigned to it and no other; a researcher
// edits nothing; a curator edits any set.
func TestEditSpanRoles(t *testing.T) {
	ctx := context.Background()
	a := newAnnotating(t, storetest.SQLite)
	other, err := a.st.Client.AnnotationSet.Create().SetCorpusID(a.c.ID).SetName("ann-2").
		SetKind(annotationset.KindAnnotator).SetAnnotator("bob").Save(ctx)
	require.NoError(t, err)
	ann, err := a.st.Client.User.Create().SetName("ann").SetRole(user.RoleAnnotator).AddAssignedCorporaIDs(a.c.ID).Save(ctx)
	require.NoError(t, err)
	as := func(id int, name string, role auth.Role) context.Context {
		return auth.NewContext(ctx, auth.NewViewer(id, name, role))
	}
	annCtx := as(ann.ID, "ann", auth.Annotator)
	_, err = a.st.AddSpan(annCtx, a.set.ID, a.doc.ID, 0, store.SpanChange{Start: 0, End: 2, Type: "AGE"})
	require.NoError(t, err, "an annotator edits its own set")
	_, err = a.st.AddSpan(annCtx, other.ID, a.doc.ID, 0, store.SpanChange{Start: 0, End: 2, Type: "AGE"})
	// Annotators are blind by default: another annotator's set is not
	// even there for it.
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "%v", err)
	_, err = a.st.AddSpan(as(0, "rita", auth.Researcher), a.set.ID, a.doc.ID, 1, store.SpanChange{Start: 0, End: 2, Type: "AGE"})
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "a researcher does not see the set at all")
	_, err = a.st.AddSpan(as(0, "carl", auth.Curator), other.ID, a.doc.ID, 0, store.SpanChange{Start: 0, End: 2, Type: "AGE"})
	require.NoError(t, err, "a curator edits any set")
}
