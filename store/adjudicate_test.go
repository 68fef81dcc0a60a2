package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/ent/user"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// The loop: two annotators annotate the same notes in their own sets; the
// disagreements are listed span by span; agreement is the scorer's F1 of one
// set against the other; the adjudicator accepts spans into gold, and the
// gold set then agrees with the accepted side.
func TestAdjudicate(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 2, Seed: 5}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	truth := docs[0].Spans
	require.GreaterOrEqual(t, len(truth), 3)
	bare := make([]pipeline.Document, len(docs))
	for i, d := range docs {
		bare[i] = d
		bare[i].Spans = nil
	}
	_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014", Split: "dev"}, bare)
	require.NoError(t, err)
	c, err := st.CorpusByName(ctx, "c")
	require.NoError(t, err)
	for _, name := range []string{"ann", "bob"} {
		require.NoError(t, st.Client.User.Create().SetName(name).SetRole(user.RoleAnnotator).AddAssignedCorporaIDs(c.ID).Exec(ctx))
	}
	curator := auth.NewContext(ctx, auth.NewViewer(0, "carl", auth.Curator))
	sets, err := st.AssignDocuments(curator, store.Assignment{Corpus: "c", Set: "b", Annotators: []string{"ann", "bob"}, Patients: []string{docs[0].Patient}})
	require.NoError(t, err)
	progress, err := st.SetProgress(ctx, sets[0])
	require.NoError(t, err)
	docID := progress[0].DocumentID
	doc, err := st.Client.Document.Get(ctx, docID)
	require.NoError(t, err)
	require.Equal(t, docs[0].ID, doc.ExternalID)

	// ann marks the first three spans as they are; bob the first alike, the
	// second one character short, the third with another type.
	add := func(setIdx int, version int, sp pipeline.Span) {
		t.Helper()
		_, err := st.AddSpan(ctx, sets[setIdx].ID, docID, version, store.SpanChange{Start: sp.Start, End: sp.End, Category: sp.Category, Type: sp.Type})
		require.NoError(t, err)
	}
	for i, sp := range truth[:3] {
		add(0, i, sp)
	}
	short := truth[1]
	short.End--
	other := truth[2]
	other.Category, other.Type = "ID", "IDNUM"
	if truth[2].Type == "IDNUM" {
		other.Category, other.Type = "AGE", "AGE"
	}
	for i, sp := range []pipeline.Span{truth[0], short, other} {
		add(1, i, sp)
	}

	groups, err := st.Disagreements(curator, "c", []string{"b:ann", "b:bob"}, docID, false)
	require.NoError(t, err)
	var kinds []string
	for _, g := range groups {
		kinds = append(kinds, g.Kind)
		assert.Equal(t, "b:ann", g.Sets[0].Set)
		assert.Equal(t, "b:bob", g.Sets[1].Set)
	}
	assert.Equal(t, []string{"boundary", "type"}, kinds)
	all, err := st.Disagreements(curator, "c", []string{"b:ann", "b:bob"}, docID, true)
	require.NoError(t, err)
	assert.Len(t, all, 3, "the agreement too")

	agreement, err := st.Agreement(curator, "c", []string{"b:ann", "b:bob"})
	require.NoError(t, err)
	require.Len(t, agreement, 1)
	a, err := st.LoadDocuments(ctx, c, "b:ann")
	require.NoError(t, err)
	b, err := st.LoadDocuments(ctx, c, "b:bob")
	require.NoError(t, err)
	first := func(ds []pipeline.Document) (out []pipeline.Document) {
		for _, d := range ds {
			if d.Patient == docs[0].Patient {
				out = append(out, d)
			}
		}
		return out
	}
	want, err := evaluate.Agreement(first(a), first(b), false)
	require.NoError(t, err)
	assert.Equal(t, len(progress), agreement[0].Documents, "the documents both hold")
	for _, m := range want.Measures {
		if m.Label == "Strict" {
			assert.InDelta(t, m.MicroF1, agreement[0].F1, 1e-12, "the scorer's strict F1")
		}
	}
	assert.InDelta(t, 1.0/3, agreement[0].F1, 1e-12)

	// The adjudicator takes ann's side of both groups into gold.
	c2, err := st.CorpusByName(ctx, "c")
	require.NoError(t, err)
	gold, err := st.AnnotationSet(ctx, c2, "gold")
	require.NoError(t, err)
	version := 0
	for _, g := range all {
		edit, err := st.AcceptSpan(curator, g.Sets[0].Spans[0].ID, gold.ID, version)
		require.NoError(t, err)
		version = edit.State.Version
	}
	agreement, err = st.Agreement(curator, "c", []string{"gold", "b:ann"})
	require.NoError(t, err)
	assert.Equal(t, 1.0, agreement[0].F1, "gold now agrees with the accepted side")
	for _, ta := range agreement[0].ByType {
		assert.Equal(t, 1.0, ta.F1, ta.Type)
	}
}
