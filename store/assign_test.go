package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/document"
	"deidcorpus/ent/patient"
	"deidcorpus/ent/span"
	"deidcorpus/ent/user"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// A curator gives one patient's notes to two annotators, pre-annotated by a
// tagger's output: each gets a set of its own holding that output's spans
// for exactly those notes, its provenance naming the set and the model.
// Assigning more later adds the new notes and leaves edited ones as they are.
func TestAssignDocuments(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 4, Seed: 3}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014", Split: "train"}, docs)
	require.NoError(t, err)
	// A tagger's output: the gold spans but the last of each note.
	tagged := make([]pipeline.Document, len(docs))
	for i, d := range docs {
		tagged[i] = d
		tagged[i].Spans = d.Spans[:max(len(d.Spans)-1, 0)]
	}
	_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", Set: "crf-out", Kind: "system", Replace: true}, tagged)
	require.NoError(t, err)
	c, err := st.CorpusByName(ctx, "c")
	require.NoError(t, err)
	out, err := st.AnnotationSet(ctx, c, "crf-out")
	require.NoError(t, err)
	require.NoError(t, st.Client.AnnotationSet.UpdateOne(out).SetProvenance(map[string]any{"model": "crf-1"}).Exec(ctx))
	for _, name := range []string{"ann", "bob", "stranger"} {
		u := st.Client.User.Create().SetName(name).SetRole(user.RoleAnnotator)
		if name != "stranger" {
			u.AddAssignedCorporaIDs(c.ID)
		}
		require.NoError(t, u.Exec(ctx))
	}
	curator := auth.NewContext(ctx, auth.NewViewer(0, "carl", auth.Curator))

	_, err = st.AssignDocuments(curator, store.Assignment{Corpus: "c", Set: "b1", Annotators: []string{"ann", "stranger"}, Split: "train"})
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.ErrorContains(t, err, `stranger is not an annotator of corpus "c"`)
	_, err = st.AssignDocuments(curator, store.Assignment{Corpus: "c", Set: "b1", Annotators: []string{"ann"}})
	assert.ErrorContains(t, err, "choose the documents by patients, split, note type, ids or a count")
	_, err = st.AssignDocuments(curator, store.Assignment{Corpus: "c", Set: "b1", Annotators: []string{"ann"}, NoteType: "no such type"})
	assert.ErrorContains(t, err, `no document of corpus "c" matches`)

	first := docs[0].Patient
	var want []int
	require.NoError(t, st.Client.Document.Query().Where(document.HasPatientWith(patient.ExternalID(first))).
		Order(ent.Asc(document.FieldID)).Select(document.FieldID).Scan(ctx, &want))
	sets, err := st.AssignDocuments(curator, store.Assignment{Corpus: "c", Set: "b1", Annotators: []string{"ann", "bob"},
		Patients: []string{first}, PreannotateFrom: "crf-out"})
	require.NoError(t, err)
	require.Len(t, sets, 2)
	for i, name := range []string{"ann", "bob"} {
		set := sets[i]
		assert.Equal(t, "b1:"+name, set.Name)
		assert.Equal(t, name, set.Annotator)
		assert.Equal(t, annotationset.KindAnnotator, set.Kind)
		assert.Equal(t, map[string]any{"set": "crf-out", "kind": "system", "model": "crf-1"}, set.Provenance["preannotation"])
		progress, err := st.SetProgress(ctx, set)
		require.NoError(t, err)
		var got []int
		for _, p := range progress {
			got = append(got, p.DocumentID)
			assert.Zero(t, p.Version)
		}
		assert.Equal(t, want, got, "the patient's notes, and only they")
		assert.Equal(t, labelsOf(t, st, out.ID, want), labelsOf(t, st, set.ID, want), "the tagger's spans, copied")
		assert.Equal(t, labelsOf(t, st, set.ID, want), labelsOf(t, st, set.ID, nil), "no other note's")
	}

	// ann edits a note; a second, wider batch keeps it and adds the rest.
	ann := sets[0]
	edited, err := st.AddSpan(ctx, ann.ID, want[0], 0, store.SpanChange{Start: 0, End: 1, Type: "OTHER"})
	require.NoError(t, err)
	_, err = st.AssignDocuments(curator, store.Assignment{Corpus: "c", Set: "b1", Annotators: []string{"ann"}, Split: "train"})
	require.NoError(t, err)
	progress, err := st.SetProgress(ctx, ann)
	require.NoError(t, err)
	assert.Len(t, progress, len(docs))
	assert.Equal(t, 1, progress[0].Version, "an assigned note keeps its state")
	n, err := st.Client.Span.Query().Where(span.ID(edited.Span.ID)).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "and its edits")

	empty, err := st.AssignDocuments(curator, store.Assignment{Corpus: "c", Set: "b2", Annotators: []string{"bob"}, Documents: want[:1]})
	require.NoError(t, err)
	assert.Equal(t, "none", empty[0].Provenance["preannotation"])
	assert.Empty(t, labelsOf(t, st, empty[0].ID, nil), "a batch without pre-annotation starts empty")
}

// labelsOf lists a set's spans (of docs, or all) as document, offsets, label.
func labelsOf(t *testing.T, st *store.Store, setID int, docs []int) []string {
	t.Helper()
	q := st.Client.Span.Query().Where(span.AnnotationSetID(setID))
	if docs != nil {
		q.Where(span.DocumentIDIn(docs...))
	}
	rows, err := q.Order(ent.Asc(span.FieldDocumentID), ent.Asc(span.FieldStart), ent.Asc(span.FieldType)).All(context.Background())
	require.NoError(t, err)
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%d %d-%d %s", r.DocumentID, r.Start, r.End, r.Type))
	}
	return out
}
