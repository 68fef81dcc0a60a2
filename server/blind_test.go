package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/document"
	"deidcorpus/ent/span"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestAnnotatorsAreBlind: an annotator reads its own set and the note text;
// the gold and another annotator's set are refused as if absent (spans,
// acceptSpan from them, agreement against them, the corpus's set list),
// until a curator assigns the batch open; refused edits are audited as
// denied, not as writes (issue 60: 10, 11).
func TestAnnotatorsAreBlind(t *testing.T) {
	st, ts, admin := newServer(t, storetest.SQLite)
	ctx := context.Background()
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014", Split: "train"}, files)
	require.NoError(t, err)
	as := func(name string) *client.Client {
		token := storetest.Token(t, st, name, auth.Annotator)
		_, err := st.AssignCorpus(ctx, name, "notes", true)
		require.NoError(t, err)
		return client.New(ts.Config.Handler, client.Path("/graphql"), client.AddHeader("Authorization", "Bearer "+token))
	}
	ann, bob := as("ann"), as("bob")
	assign := func(open bool) {
		admin.MustPost(`mutation($open: Boolean!) { assignDocuments(input: {corpus: "notes", set: "batch", annotators: ["ann", "bob"],
			split: train, open: $open}) { id } }`, &map[string]any{}, client.Var("open", open))
	}
	assign(false)

	c, err := st.CorpusByName(ctx, "notes")
	require.NoError(t, err)
	doc, err := st.Client.Document.Query().Where(document.CorpusID(c.ID)).Order(document.ByID()).First(ctx)
	require.NoError(t, err)
	set := func(name string) int {
		s, err := st.Client.AnnotationSet.Query().Where(annotationset.CorpusID(c.ID), annotationset.Name(name)).Only(ctx)
		require.NoError(t, err)
		return s.ID
	}
	gold, annSet, bobSet := set("gold"), set("batch:ann"), set("batch:bob")
	goldSpan, err := st.Client.Span.Query().Where(span.AnnotationSetID(gold), span.DocumentID(doc.ID)).First(ctx)
	require.NoError(t, err)
	bob.MustPost(`mutation($set: ID!, $doc: ID!) { addSpan(input: {set: $set, document: $doc, version: 0, start: 0, end: 4, type: "DOCTOR"}) { span { id } } }`,
		&map[string]any{}, client.Var("set", bobSet), client.Var("doc", doc.ID))
	vars := []client.Option{client.Var("doc", doc.ID), client.Var("span", goldSpan.ID), client.Var("into", annSet), client.Var("bob", bobSet)}

	blind := []string{
		`query($doc: ID!) { node(id: $doc) { ... on Document { annotations(set: "gold") { text } } } }`,
		`query($doc: ID!) { node(id: $doc) { ... on Document { annotations(set: "batch:bob") { text } } } }`,
		`query($span: ID!) { node(id: $span) { id } }`,
		`mutation($span: ID!, $into: ID!) { acceptSpan(span: $span, into: $into, version: 0) { span { text } } }`,
		`{ agreement(corpus: "notes", sets: ["gold", "batch:ann"]) { a b } }`,
		`{ agreement(corpus: "notes", sets: ["batch:bob", "batch:ann"]) { a b } }`,
		`mutation($bob: ID!, $doc: ID!) { setDocumentStatus(set: $bob, document: $doc, status: done, version: 1) { version } }`,
	}
	for _, q := range blind {
		resp, err := ann.RawPost(q, vars...)
		require.NoError(t, err)
		require.NotEmpty(t, resp.Errors, "%s: a blind annotator is refused", q)
		assert.Regexp(t, `"code":"(forbidden|not_found)"`, string(resp.Errors), q)
	}
	var sets struct {
		CorpusByName struct{ AnnotationSets []struct{ Name string } }
	}
	ann.MustPost(`{ corpusByName(name: "notes") { annotationSets { name } } }`, &sets)
	assert.Equal(t, []struct{ Name string }{{"batch:ann"}}, sets.CorpusByName.AnnotationSets)
	var own struct {
		Node struct {
			Text        string
			Annotations []struct{ Text string }
		}
	}
	ann.MustPost(`query($doc: ID!) { node(id: $doc) { ... on Document { text annotations(set: "batch:ann") { text } } } }`, &own, client.Var("doc", doc.ID))
	assert.NotEmpty(t, own.Node.Text, "the note text is the annotator's to read")

	// The refused mutations were audited as denied, none as a write.
	entries, err := st.AuditEntries(ctx, 500)
	require.NoError(t, err)
	actions := map[string][]string{}
	for _, e := range entries {
		if e.Actor == "ann" {
			actions[e.Target] = append(actions[e.Target], e.Action)
		}
	}
	assert.Equal(t, []string{"denied"}, actions["Mutation.acceptSpan"])
	assert.Equal(t, []string{"denied"}, actions["Mutation.setDocumentStatus"])

	// Open annotation: the same annotator reads the gold and bob's set.
	assign(true)
	for _, q := range blind[:2] {
		var out map[string]any
		ann.MustPost(q, &out, vars...)
	}
	var agree map[string]any
	ann.MustPost(`{ agreement(corpus: "notes", sets: ["gold", "batch:ann"]) { a b } }`, &agree)
	var accepted map[string]any
	ann.MustPost(`mutation($span: ID!, $into: ID!) { acceptSpan(span: $span, into: $into, version: 0) { span { text } } }`, &accepted, vars...)
	// Seeing bob's set is not editing it: the store refuses, and the
	// refusal is audited as denied, not as a write.
	err = ann.Post(`mutation($bob: ID!, $doc: ID!) { addSpan(input: {set: $bob, document: $doc, version: 1, start: 5, end: 9, type: "DOCTOR"}) { span { id } } }`,
		&map[string]any{}, vars...)
	require.ErrorContains(t, err, "is not assigned to you")
	entries, err = st.AuditEntries(ctx, 500)
	require.NoError(t, err)
	var added []string
	for _, e := range entries {
		if e.Actor == "ann" && e.Target == "Mutation.addSpan" {
			added = append(added, e.Action+" "+e.Detail)
		}
	}
	assert.Equal(t, []string{"denied arguments: input (refused: forbidden)"}, added)

	var bobReads map[string]any
	bob.MustPost(`query($doc: ID!) { node(id: $doc) { ... on Document { annotations(set: "gold") { text } } } }`, &bobReads, vars[0])
}

// TestDemotedAccountReadsNoJobOfItsFormerRole: a curator's derivation job
// names its source corpus in its parameters; once the curator is made a
// researcher, the job is gone from its jobs and not found by id, while a job
// of a kind researchers start stays its own (issue 60: 11).
func TestDemotedAccountReadsNoJobOfItsFormerRole(t *testing.T) {
	st, ts, admin := newServer(t, storetest.SQLite)
	ctx := context.Background()
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014", Split: "train"}, files)
	require.NoError(t, err)
	cara := client.New(ts.Config.Handler, client.Path("/graphql"),
		client.AddHeader("Authorization", "Bearer "+storetest.Token(t, st, "cara", auth.Curator)))
	var started struct{ StartDerive struct{ ID string } }
	cara.MustPost(`mutation { startDerive(corpus: "c", out: "c-hipaa", mapping: "i2b2-hipaa") { id } }`, &started)
	states := follow(t, ts.Config.Handler, ts.Token, started.StartDerive.ID)
	require.Equal(t, "succeeded", states[len(states)-1].Status, states[len(states)-1].Error)
	var eval struct{ StartEvaluation struct{ ID string } }
	cara.MustPost(`mutation { startEvaluation(input: {corpus: "c", system: "gold"}) { id } }`, &eval)

	type jobList struct {
		Jobs struct {
			Edges []struct{ Node struct{ ID, Kind string } }
		}
	}
	var before jobList
	cara.MustPost(`{ jobs(first: 10) { edges { node { id kind } } } }`, &before)
	require.Len(t, before.Jobs.Edges, 2)

	admin.MustPost(`mutation { updateUser(name: "cara", role: researcher) { name } }`, &map[string]any{})
	var after jobList
	cara.MustPost(`{ jobs(first: 10) { edges { node { id kind } } } }`, &after)
	require.Len(t, after.Jobs.Edges, 1)
	assert.Equal(t, "evaluate", after.Jobs.Edges[0].Node.Kind)
	resp, err := cara.RawPost(`query($id: ID!) { node(id: $id) { ... on Job { params } } }`, client.Var("id", started.StartDerive.ID))
	require.NoError(t, err)
	data := fmt.Sprint(resp.Data) + string(resp.Errors)
	assert.NotContains(t, data, "c-hipaa", "the derivation's parameters are not read")
	assert.NotContains(t, data, "i2b2-hipaa")
}
