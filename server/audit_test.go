package server_test

import (
	"context"
	"io"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/auditentry"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestEachPHIReadLeavesOneAuditRecord: a query reading the text of every
// document leaves one record naming them all; a query reading no PHI leaves
// none; a mutation and a download leave one each; the chain verifies.
func TestEachPHIReadLeavesOneAuditRecord(t *testing.T) {
	ctx := context.Background()
	st, ts, c := newServer(t, storetest.SQLite)
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, files)
	require.NoError(t, err)
	entries := func() []*ent.AuditEntry {
		es, err := st.Client.AuditEntry.Query().Order(ent.Asc(auditentry.FieldSeq)).All(ctx)
		require.NoError(t, err)
		return es
	}

	var ids struct {
		Documents struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	c.MustPost(`{ documents { edges { node { id } } } }`, &ids)
	assert.Empty(t, entries(), "no PHI read, no record")

	var texts map[string]any
	c.MustPost(`{ documents { edges { node { id text annotations(set: "gold") { start } } } } }`, &texts)
	es := entries()
	require.Len(t, es, 1)
	assert.Equal(t, "read", es[0].Action)
	assert.Equal(t, "Document.text", es[0].Target)
	var want []string
	for _, e := range ids.Documents.Edges {
		want = append(want, e.Node.ID)
	}
	assert.ElementsMatch(t, want, es[0].Ids)

	c.MustPost(`{ spans(first: 2) { edges { node { text } } } }`, &texts)
	es = entries()
	require.Len(t, es, 2)
	assert.Equal(t, "Span.text", es[1].Target)
	assert.Len(t, es[1].Ids, 2)

	// Spans read through a document's list name their ids too.
	var doc struct {
		Node struct{ Annotations []struct{ Text string } }
	}
	c.MustPost(`query($id: ID!) { node(id: $id) { ... on Document { annotations { text } } } }`, &doc,
		client.Var("id", ids.Documents.Edges[0].Node.ID))
	require.NotEmpty(t, doc.Node.Annotations)
	es = entries()
	require.Len(t, es, 3)
	assert.Equal(t, "Span.text", es[2].Target)
	assert.Len(t, es[2].Ids, len(doc.Node.Annotations))

	c.MustPost(`mutation { createCorpus(name: "new") { id } }`, &texts)
	es = entries()
	require.Len(t, es, 4)
	assert.Equal(t, "write", es[3].Action)
	assert.Equal(t, "Mutation.createCorpus", es[3].Target)

	resp, err := ts.get("/download/corpora/c")
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	es = entries()
	require.Len(t, es, 5)
	assert.Equal(t, "export", es[4].Action)
	assert.Equal(t, []string{"c/gold"}, es[4].Ids)

	for _, e := range es {
		assert.Equal(t, "admin", e.Actor, "each record names the account")
	}

	// A refused operation is recorded as such, with who tried.
	other := client.New(ts.Config.Handler, client.Path("/graphql"),
		client.AddHeader("Authorization", "Bearer "+storetest.Token(t, st, "rita", auth.Researcher)))
	assert.Error(t, other.Post(`mutation { deleteCorpus(name: "c") }`, &texts))
	es = entries()
	require.Len(t, es, 6)
	assert.Equal(t, "denied", es[5].Action)
	assert.Equal(t, "rita", es[5].Actor)
	assert.Equal(t, "Mutation.deleteCorpus", es[5].Target)

	n, err := st.VerifyAudit(ctx)
	require.NoError(t, err)
	assert.Equal(t, 6, n)
}

// TestReleaseDiffIsAudited: a diff names span texts, so reading one is a
// read of PHI.
func TestReleaseDiffIsAudited(t *testing.T) {
	ctx := context.Background()
	st, _, c := newServer(t, storetest.SQLite)
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, files)
	require.NoError(t, err)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		_, err = st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "r", Version: v})
		require.NoError(t, err)
	}
	before, err := st.Client.AuditEntry.Query().Count(ctx)
	require.NoError(t, err)
	c.MustPost(`{ releaseDiff(a: "r@1.0.0", b: "r@1.1.0") }`, &map[string]any{})
	es, err := st.Client.AuditEntry.Query().Order(ent.Asc(auditentry.FieldSeq)).All(ctx)
	require.NoError(t, err)
	require.Len(t, es, before+1)
	assert.Equal(t, "Query.releaseDiff", es[before].Target)
	assert.Equal(t, []string{"a=r@1.0.0 b=r@1.1.0"}, es[before].Ids)
}
