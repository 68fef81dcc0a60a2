package server_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/ent/annotationset"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

type editResult struct {
	State struct {
		Version int
		Status  string
	}
	Span *struct {
		ID, Text, Category, Type string
		Start, End               int
	}
}

// An annotator edits a note in its set through GraphQL from two tabs: the
// second tab's write, made against the version it read, is refused with a
// message that says so and loses nothing of the first's; undo reverses the
// last edit; the admin's audit log holds each edit with its offsets and
// labels before and after.
func TestAnnotateThroughGraphQL(t *testing.T) {
	st, ts, admin := newServer(t, storetest.SQLite)
	ctx := context.Background()
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014", Split: "train"}, files)
	require.NoError(t, err)
	c, err := st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	set, err := st.Client.AnnotationSet.Create().SetCorpusID(c.ID).SetName("ann-a").
		SetKind(annotationset.KindAnnotator).SetAnnotator("ann").Save(ctx)
	require.NoError(t, err)
	token := storetest.Token(t, st, "ann", auth.Annotator)
	_, err = st.AssignCorpus(ctx, "ann", "notes", true)
	require.NoError(t, err)
	tab := func() *client.Client {
		return client.New(ts.Config.Handler, client.Path("/graphql"), client.AddHeader("Authorization", "Bearer "+token))
	}
	tab1, tab2 := tab(), tab()
	setID := strconv.Itoa(set.ID)

	var doc struct {
		CorpusByName struct {
			Documents struct {
				Edges []struct {
					Node struct {
						ID, Text        string
						AnnotationState struct{ Version int }
					}
				}
			}
		}
	}
	read := `query($set: ID!) { corpusByName(name: "notes") { documents(first: 1) { edges { node { id text annotationState(set: $set) { version } } } } } }`
	tab1.MustPost(read, &doc, client.Var("set", setID))
	note := doc.CorpusByName.Documents.Edges[0].Node
	require.Zero(t, note.AnnotationState.Version)
	runes := []rune(note.Text)

	add := `mutation($set: ID!, $doc: ID!, $v: Int!, $s: Int!, $e: Int!, $t: String!) {
		addSpan(input: {set: $set, document: $doc, version: $v, start: $s, end: $e, type: $t}) { state { version status } span { id text category type start end } } }`
	var first struct{ AddSpan editResult }
	tab1.MustPost(add, &first, client.Var("set", setID), client.Var("doc", note.ID), client.Var("v", 0),
		client.Var("s", 0), client.Var("e", 5), client.Var("t", "DOCTOR"))
	assert.Equal(t, 1, first.AddSpan.State.Version)
	assert.Equal(t, "in_progress", first.AddSpan.State.Status)
	assert.Equal(t, string(runes[0:5]), first.AddSpan.Span.Text)
	assert.Equal(t, "NAME", first.AddSpan.Span.Category)

	// The second tab read version 0 before the first wrote.
	var second struct{ AddSpan editResult }
	err = tab2.Post(add, &second, client.Var("set", setID), client.Var("doc", note.ID), client.Var("v", 0),
		client.Var("s", 7), client.Var("e", 9), client.Var("t", "AGE"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was changed by ann since you read it (it is at version 1, your edit was made against version 0): nothing was written")
	assert.Contains(t, err.Error(), `"code":"conflict"`)

	var spans struct {
		Node struct{ Annotations []struct{ Start, End int } }
	}
	annotations := `query($id: ID!) { node(id: $id) { ... on Document { annotations(set: "ann-a") { start end } } } }`
	tab2.MustPost(annotations, &spans, client.Var("id", note.ID))
	assert.Equal(t, []struct{ Start, End int }{{0, 5}}, spans.Node.Annotations, "the first tab's span stands, the second's is not written")

	var change struct{ ChangeSpan editResult }
	tab2.MustPost(`mutation($id: ID!) { changeSpan(input: {span: $id, version: 1, start: 1, end: 6, type: "PATIENT"}) { state { version } span { text type } } }`,
		&change, client.Var("id", first.AddSpan.Span.ID))
	assert.Equal(t, string(runes[1:6]), change.ChangeSpan.Span.Text)
	err = tab1.Post(`mutation($id: ID!) { removeSpan(span: $id, version: 1) { state { version } } }`, &map[string]any{},
		client.Var("id", first.AddSpan.Span.ID))
	assert.ErrorContains(t, err, "at version 2, your edit was made against version 1")

	var undo struct{ UndoEdit editResult }
	tab1.MustPost(`mutation($set: ID!, $doc: ID!) { undoEdit(set: $set, document: $doc, version: 2) { state { version } span { start end type } } }`,
		&undo, client.Var("set", setID), client.Var("doc", note.ID))
	assert.Equal(t, 3, undo.UndoEdit.State.Version)
	assert.Equal(t, 0, undo.UndoEdit.Span.Start)
	assert.Equal(t, "DOCTOR", undo.UndoEdit.Span.Type)

	var status struct{ SetDocumentStatus struct{ Status string } }
	tab1.MustPost(`mutation($set: ID!, $doc: ID!) { setDocumentStatus(set: $set, document: $doc, status: done, version: 3) { status } }`,
		&status, client.Var("set", setID), client.Var("doc", note.ID))
	assert.Equal(t, "done", status.SetDocumentStatus.Status)

	var log struct {
		AuditEntries struct {
			Edges []struct {
				Node struct{ Actor, Target, Detail string }
			}
		}
	}
	admin.MustPost(`{ auditEntries(first: 100) { edges { node { actor target detail } } } }`, &log)
	var edits []string
	generic := 0
	for _, e := range log.AuditEntries.Edges {
		if e.Node.Actor == "ann" && strings.HasPrefix(e.Node.Target, "Mutation.") && !strings.Contains(e.Node.Detail, "refused") {
			generic++
		}
		if strings.HasPrefix(e.Node.Target, "annotation.") {
			assert.Equal(t, "ann", e.Node.Actor)
			assert.NotContains(t, e.Node.Detail, string(runes[0:5]))
			edits = append(edits, e.Node.Detail[strings.Index(e.Node.Detail, "version"):])
		}
	}
	assert.Equal(t, []string{
		"version 1: before none; after 0-5 NAME/DOCTOR",
		"version 2: before 0-5 NAME/DOCTOR; after 1-6 NAME/PATIENT",
		"version 3: before 1-6 NAME/PATIENT; after 0-5 NAME/DOCTOR (undoes version 2)",
		"version 4: before in_progress; after done",
	}, edits, "every edit, and nothing refused")
	assert.Zero(t, generic, "one entry per edit: no generic Mutation.* entry beside the edit's own (issue 64)")
}
