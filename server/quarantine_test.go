package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// leakingNote is a patient's note whose surname is also in a date no pattern
// reads ("Garfunkel Day 2001"), whose words resynthesis keeps for review: the
// surname stays in the surrogate text, and the check reports it as a leak.
func leakingNote(patient string) pipeline.Document {
	text := "Mr. Garfunkel was seen on Garfunkel Day 2001."
	return pipeline.Document{ID: patient + "-01", Patient: patient, RecordOrder: 1, Split: "train", Text: text,
		Spans: []pipeline.Span{
			{Start: 4, End: 13, Text: "Garfunkel", Category: "NAME", Type: "PATIENT"},
			{Start: 26, End: 44, Text: "Garfunkel Day 2001", Category: "DATE", Type: "DATE"},
		}}
}

// TestQuarantine: a surrogate corpus whose resynthesis check found a leak is
// quarantined. A researcher (or an annotator assigned to it) sees no trace
// of it: not in lists, not by name, id or document, not its evaluations, not
// as a download, not through a release frozen from it, shared or not; a
// curator can neither release it nor derive a copy of it. A curator's resolution, or a rerun whose check passes, lifts it.
func TestQuarantine(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			st, ts, admin := newServer(t, b)
			ctx := context.Background()
			var docs []pipeline.Document
			require.NoError(t, synth.Generate(synth.Options{Patients: 5, Seed: 4}, func(p synth.Patient) error {
				docs = append(docs, p.Docs...)
				return nil
			}))
			opt := store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"}
			_, err := st.ImportDocuments(ctx, opt, docs)
			require.NoError(t, err)
			tokens := map[auth.Role]string{}
			for _, r := range []auth.Role{auth.Curator, auth.Annotator, auth.Researcher} {
				tokens[r] = storetest.Token(t, st, string(r), r)
			}
			as := func(r auth.Role) *client.Client {
				return client.New(ts.Config.Handler, client.Path("/graphql"), client.AddHeader("Authorization", "Bearer "+tokens[r]))
			}
			curator := as(auth.Curator)
			resynth := func(policy string) jobState {
				var start struct{ StartResynthesis struct{ ID string } }
				curator.MustPost(`mutation { startResynthesis(input: {corpus: "notes", out: "notes-r", seed: 2`+policy+`}) { id } }`, &start)
				states := follow(t, ts.Config.Handler, tokens[auth.Curator], start.StartResynthesis.ID)
				return states[len(states)-1]
			}

			// A clean run, and a release of it shared outside.
			first := resynth("")
			require.Equal(t, "succeeded", first.Status, first.Error)
			curator.MustPost(`mutation { createRelease(input: {corpus: "notes-r", name: "pub", version: "1.0.0", share: true}) { ref } }`, &map[string]any{})
			var ids struct {
				CorpusByName struct {
					ID        string
					Documents struct {
						Edges []struct{ Node struct{ ID string } }
					}
				}
			}
			admin.MustPost(`{ corpusByName(name: "notes-r") { id documents(first: 1) { edges { node { id } } } } }`, &ids)
			var ev struct{ StartEvaluation struct{ ID string } }
			curator.MustPost(`mutation { startEvaluation(input: {corpus: "notes-r", system: "gold"}) { id } }`, &ev)
			evaluated := follow(t, ts.Config.Handler, tokens[auth.Curator], ev.StartEvaluation.ID)
			require.Equal(t, "succeeded", evaluated[len(evaluated)-1].Status)
			_, err = st.AssignCorpus(ctx, string(auth.Annotator), "notes-r", true)
			require.NoError(t, err)

			// What a viewer can find of the corpus, by every path.
			traces := func(r auth.Role) []string {
				t.Helper()
				c := as(r)
				var found []string
				var list struct {
					Corpora struct {
						Edges []struct{ Node struct{ Name string } }
					}
				}
				c.MustPost(`{ corpora(first: 100) { edges { node { name } } } }`, &list)
				for _, e := range list.Corpora.Edges {
					if e.Node.Name == "notes-r" {
						found = append(found, "corpora")
					}
				}
				var byName struct{ CorpusByName *struct{ ID string } }
				if c.Post(`{ corpusByName(name: "notes-r") { id } }`, &byName) == nil && byName.CorpusByName != nil {
					found = append(found, "corpusByName")
				}
				for _, id := range []string{ids.CorpusByName.ID, ids.CorpusByName.Documents.Edges[0].Node.ID} {
					var node struct{ Node *struct{ ID string } }
					if c.Post(`query($id: ID!) { node(id: $id) { id } }`, &node, client.Var("id", id)) == nil && node.Node != nil {
						found = append(found, "node "+id)
					}
				}
				var docs struct{ Documents struct{ TotalCount int } }
				c.MustPost(`query($id: String!) { documents(where: {externalID: $id}) { totalCount } }`, &docs,
					client.Var("id", surrogateID(t, st, "notes", "notes-r", "900-01")))
				if docs.Documents.TotalCount > 0 {
					found = append(found, "documents")
				}
				var evs struct{ Evaluations struct{ TotalCount int } }
				c.MustPost(`{ evaluations { totalCount } }`, &evs)
				if evs.Evaluations.TotalCount > 0 {
					found = append(found, "evaluations")
				}
				var rels struct {
					Releases struct {
						Edges []struct{ Node struct{ Ref string } }
					}
				}
				c.MustPost(`{ releases(first: 100) { edges { node { ref } } } }`, &rels)
				for _, e := range rels.Releases.Edges {
					if e.Node.Ref == "pub@1.0.0" {
						found = append(found, "releases")
					}
				}
				var rel struct{ Release *struct{ Ref string } }
				if c.Post(`{ release(ref: "pub@1.0.0") { ref } }`, &rel) == nil && rel.Release != nil {
					found = append(found, "release")
				}
				for _, path := range []string{"/download/corpora/notes-r", "/download/releases/pub@1.0.0?format=jsonl"} {
					req, _ := http.NewRequest("GET", ts.URL+path, nil)
					req.Header.Set("Authorization", "Bearer "+tokens[r])
					resp, err := http.DefaultClient.Do(req)
					require.NoError(t, err)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						found = append(found, path)
					}
				}
				return found
			}
			everything := func(documents ...string) []string {
				return append(append([]string{"corpora", "corpusByName", "node " + ids.CorpusByName.ID, "node " + ids.CorpusByName.Documents.Edges[0].Node.ID},
					documents...), "evaluations", "releases", "release", "/download/corpora/notes-r", "/download/releases/pub@1.0.0?format=jsonl")
			}
			require.Equal(t, everything(), traces(auth.Researcher), "a clean surrogate corpus is the researchers'")

			// New notes arrive, one of them leaking: the run writes them and
			// ends check_failed, and the corpus is quarantined.
			_, err = st.ImportDocuments(ctx, opt, []pipeline.Document{leakingNote("900")})
			require.NoError(t, err)
			leak := resynth("")
			require.Equal(t, "check_failed", leak.Status)
			assert.Contains(t, leak.Error, `corpus "notes-r" is quarantined`)
			check := leak.Result["check"].(map[string]any)
			require.Greater(t, check["leaks"], float64(0))
			findings := leak.Result["checkFindings"].(float64)
			assert.Equal(t, "failed", leak.Result["checkStatus"])
			for _, r := range []auth.Role{auth.Researcher, auth.Annotator} {
				assert.Empty(t, traces(r), "%s sees the quarantined corpus", r)
			}
			var cs struct{ CorpusByName struct{ CheckStatus string } }
			curator.MustPost(`{ corpusByName(name: "notes-r") { checkStatus } }`, &cs)
			assert.Equal(t, "failed", cs.CorpusByName.CheckStatus)
			err = curator.Post(`mutation { createRelease(input: {corpus: "notes-r", name: "pub", version: "1.1.0"}) { ref } }`, &map[string]any{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "quarantined")
			assert.Contains(t, err.Error(), formatID(findings)+" unresolved findings")
			assert.Contains(t, err.Error(), `"code":"conflict"`)
			err = curator.Post(`mutation { deriveCorpus(corpus: "notes-r", out: "notes-r-hipaa", mapping: "i2b2-hipaa") { documents } }`, &map[string]any{})
			assert.ErrorContains(t, err, "quarantined", "a derived copy would be outside the quarantine")
			err = curator.Post(`mutation { startDerive(corpus: "notes-r", out: "notes-r-hipaa", mapping: "i2b2-hipaa") { id } }`, &map[string]any{})
			assert.ErrorContains(t, err, "quarantined", "refused as it is queued, not by a failed job")

			// Researchers cannot lift it; a curator resolves every finding
			// with a reason, which the corpus keeps.
			err = as(auth.Researcher).Post(`mutation { resolveCheckFindings(corpus: "notes-r", reason: "fine") { name } }`, &map[string]any{})
			assert.ErrorContains(t, err, "forbidden")
			err = curator.Post(`mutation { resolveCheckFindings(corpus: "notes-r", reason: " ") { name } }`, &map[string]any{})
			assert.ErrorContains(t, err, "needs a reason")
			var resolved struct {
				ResolveCheckFindings struct {
					CheckStatus   string
					CheckFindings int
				}
			}
			curator.MustPost(`mutation { resolveCheckFindings(corpus: "notes-r", reason: "the name in the date is an eponym") {
				checkStatus checkFindings } }`, &resolved)
			assert.Equal(t, "resolved", resolved.ResolveCheckFindings.CheckStatus)
			assert.Equal(t, 0, resolved.ResolveCheckFindings.CheckFindings)
			var report struct{ CheckReport map[string]any }
			curator.MustPost(`{ checkReport(corpus: "notes-r") }`, &report)
			resolution := report.CheckReport["resolution"].(map[string]any)
			assert.Equal(t, "curator", resolution["by"])
			assert.Equal(t, "the name in the date is an eponym", resolution["reason"])
			assert.Equal(t, findings, resolution["findings"])
			assert.Equal(t, everything("documents"), traces(auth.Researcher))
			var audit struct {
				AuditEntries struct {
					Edges []struct{ Node struct{ Actor string } }
				}
			}
			admin.MustPost(`{ auditEntries(first: 10, where: {target: "Mutation.resolveCheckFindings", action: "write"}) { edges { node { actor } } } }`, &audit)
			require.NotEmpty(t, audit.AuditEntries.Edges)
			for _, e := range audit.AuditEntries.Edges {
				assert.Equal(t, "curator", e.Node.Actor)
			}

			// Another leaking note quarantines it again; a rerun with a
			// policy that keeps dates whole (and so replaces the names they
			// hold) rewrites and rechecks every note, passes, and lifts the
			// quarantine.
			_, err = st.ImportDocuments(ctx, opt, []pipeline.Document{leakingNote("901")})
			require.NoError(t, err)
			require.Equal(t, "check_failed", resynth("").Status)
			assert.Empty(t, traces(auth.Researcher))
			rerun := resynth(`, policy: {types: {DATE: {strategy: "keep", scope: "patient"}}}`)
			require.Equal(t, "succeeded", rerun.Status, rerun.Error)
			assert.Equal(t, true, rerun.Result["redo"])
			assert.Equal(t, float64(len(docs)+2), rerun.Result["documents"], "every note is rewritten")
			assert.Equal(t, "passed", rerun.Result["checkStatus"])
			// The rerun rewrote every note: the first note is a new node.
			admin.MustPost(`{ corpusByName(name: "notes-r") { id documents(first: 1) { edges { node { id } } } } }`, &ids)
			assert.Equal(t, everything("documents"), traces(auth.Researcher))
		})
	}
}

// TestUnannotatedFindsQuarantine: a value the gold annotates once and misses
// once is replaced where it was missed when it is long enough
// ("Garfunkel"); a shorter one ("Ana") is left, an unannotated find, which
// keeps the corpus from researchers (GraphQL and downloads) as a failed
// check does, until a curator resolves it.
func TestUnannotatedFindsQuarantine(t *testing.T) {
	st, ts, admin := newServer(t, storetest.SQLite)
	ctx := context.Background()
	text := "Ana Garfunkel was seen today. Garfunkel and Ana left."
	doc := pipeline.Document{ID: "900-01", Patient: "900", RecordOrder: 1, Split: "train", Text: text,
		Spans: []pipeline.Span{
			{Start: 0, End: 3, Text: "Ana", Category: "NAME", Type: "PATIENT"},
			{Start: 4, End: 13, Text: "Garfunkel", Category: "NAME", Type: "PATIENT"},
		}}
	_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"}, []pipeline.Document{doc})
	require.NoError(t, err)
	as := func(r auth.Role) *client.Client {
		return client.New(ts.Config.Handler, client.Path("/graphql"), client.AddHeader("Authorization", "Bearer "+storetest.Token(t, st, string(r)+"-u", r)))
	}
	curator, researcher := as(auth.Curator), as(auth.Researcher)
	researcherToken := storetest.Token(t, st, "researcher-2", auth.Researcher)
	var start struct{ StartResynthesis struct{ ID string } }
	curator.MustPost(`mutation { startResynthesis(input: {corpus: "notes", out: "notes-r", seed: 2}) { id } }`, &start)
	states := follow(t, ts.Config.Handler, ts.Token, start.StartResynthesis.ID)
	done := states[len(states)-1]
	require.Equal(t, "check_failed", done.Status, done.Error)
	assert.Contains(t, done.Error, "1 unannotated originals")
	check := done.Result["check"].(map[string]any)
	assert.Equal(t, true, check["ok"], "no leak: the find is only listed")
	assert.Equal(t, float64(1), check["unannotated"])
	assert.Equal(t, float64(1), check["propagated"])

	var out struct {
		CorpusByName struct {
			Documents struct {
				Edges []struct{ Node struct{ Text string } }
			}
		}
	}
	admin.MustPost(`{ corpusByName(name: "notes-r") { documents(first: 1) { edges { node { text } } } } }`, &out)
	require.Len(t, out.CorpusByName.Documents.Edges, 1)
	assert.NotContains(t, out.CorpusByName.Documents.Edges[0].Node.Text, "Garfunkel")
	assert.Contains(t, out.CorpusByName.Documents.Edges[0].Node.Text, " and Ana left.")

	readable := func() (byName, download bool) {
		t.Helper()
		var c struct{ CorpusByName *struct{ Name string } }
		byName = researcher.Post(`{ corpusByName(name: "notes-r") { name } }`, &c) == nil && c.CorpusByName != nil
		req, _ := http.NewRequest("GET", ts.URL+"/download/corpora/notes-r", nil)
		req.Header.Set("Authorization", "Bearer "+researcherToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return byName, resp.StatusCode == http.StatusOK
	}
	byName, download := readable()
	assert.False(t, byName, "a researcher reads a corpus with an unresolved find")
	assert.False(t, download, "a researcher downloads a corpus with an unresolved find")

	var resolved struct{ ResolveCheckFindings struct{ CheckStatus string } }
	curator.MustPost(`mutation { resolveCheckFindings(corpus: "notes-r", reason: "Ana is too common a name to identify") { checkStatus } }`, &resolved)
	assert.Equal(t, "resolved", resolved.ResolveCheckFindings.CheckStatus)
	byName, download = readable()
	assert.True(t, byName)
	assert.True(t, download)
}

// surrogateID is a source note's id in a surrogate corpus made from it.
func surrogateID(t *testing.T, st *store.Store, source, surrogate, id string) string {
	t.Helper()
	ctx := context.Background()
	src, err := st.CorpusByName(ctx, source)
	require.NoError(t, err)
	out, err := st.CorpusByName(ctx, surrogate)
	require.NoError(t, err)
	names, err := st.SurrogateNames(out, src.ID)
	require.NoError(t, err)
	return names.Doc(id)
}
