package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/document"
	"deidcorpus/ent/span"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/tagger"
	"deidcorpus/resolvers"
	"deidcorpus/server"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// authzFixture is a server with an original corpus, its surrogate twin, a
// corpus assigned to the annotator, releases of both, an evaluation and an
// export of each kind, and one account and token per role.
type authzFixture struct {
	st     *store.Store
	ts     *testServer
	tokens map[auth.Role]string
	// Ids and names the cases refer to.
	origID, surrID, origDoc, surrDoc, origEval, surrEval, adminJob, origArtifact, auditEntry string
	ownJob, ownToken                                                                         map[auth.Role]string
	uploads                                                                                  []string
	// Hand annotation: the original gold set and one of its spans; in the
	// assigned corpus a document, the annotator's own set and another
	// annotator's.
	origGold, origSpan, assignedDoc, assignedSpan, ownSet, othersSet string
}

func newAuthzFixture(t *testing.T, b storetest.Backend) *authzFixture {
	return newAuthzFixtureConfig(t, b, server.DefaultConfig)
}

func newAuthzFixtureConfig(t *testing.T, b storetest.Backend, cfg server.Config) *authzFixture {
	st, ts, admin := newServerConfig(t, b, cfg)
	ctx := context.Background()
	f := &authzFixture{st: st, ts: ts, tokens: map[auth.Role]string{auth.Admin: ts.Token},
		ownJob: map[auth.Role]string{}, ownToken: map[auth.Role]string{}}
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	for _, name := range []string{"orig", "assigned"} {
		_, err = st.Import(ctx, store.ImportOptions{Corpus: name, TagSet: "i2b2-2014", Split: "train"}, files)
		require.NoError(t, err)
	}
	for _, fl := range files {
		p := t.TempDir() + "/" + fl.Name
		require.NoError(t, os.WriteFile(p, fl.Data, 0o644))
		f.uploads = append(f.uploads, p)
	}
	for _, r := range []auth.Role{auth.Curator, auth.Annotator, auth.Researcher} {
		f.tokens[r] = storetest.Token(t, st, string(r), r)
	}
	_, err = st.AssignCorpus(ctx, string(auth.Annotator), "assigned", true)
	require.NoError(t, err)
	_, err = st.CreateUser(ctx, "victim", auth.Researcher)
	require.NoError(t, err)
	_, err = st.CreateUser(ctx, "ann2", auth.Annotator)
	require.NoError(t, err)

	// The surrogate twin, made by resynthesis; evaluations; an export.
	run := func(mutation string) jobState {
		var out map[string]struct{ ID string }
		admin.MustPost(mutation, &out)
		for _, j := range out {
			states := follow(t, ts.Config.Handler, ts.Token, j.ID)
			last := states[len(states)-1]
			require.Equal(t, "succeeded", last.Status, last.Error)
			return last
		}
		panic("no job")
	}
	run(`mutation { startResynthesis(input: {corpus: "orig", out: "surr", seed: 3}) { id } }`)
	f.origEval = formatID(run(`mutation { startEvaluation(input: {corpus: "orig", system: "gold"}) { id } }`).Result["evaluation"])
	f.surrEval = formatID(run(`mutation { startEvaluation(input: {corpus: "surr", system: "gold"}) { id } }`).Result["evaluation"])
	exp := run(`mutation { startExport(corpus: "orig") { id } }`)
	f.adminJob, f.origArtifact = exp.ID, formatID(exp.Result["artifact"])
	for _, rel := range []string{`{corpus: "orig", name: "orig-rel", version: "1.0.0"}`, `{corpus: "surr", name: "surr-rel", version: "1.0.0"}`} {
		admin.MustPost(`mutation { createRelease(input: `+rel+`) { ref } }`, &map[string]any{})
	}
	admin.MustPost(`mutation { registerExternalModel(name: "ext", endpoint: "http://127.0.0.1:9/tag") { id } }`, &map[string]any{})
	var ids struct {
		O, S struct {
			ID        string
			Documents struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	admin.MustPost(`{ o: corpusByName(name: "orig") { id documents(first: 1) { edges { node { id } } } }
		s: corpusByName(name: "surr") { id documents(first: 1) { edges { node { id } } } } }`, &ids)
	f.origID, f.surrID = ids.O.ID, ids.S.ID
	f.origDoc, f.surrDoc = ids.O.Documents.Edges[0].Node.ID, ids.S.Documents.Edges[0].Node.ID
	f.annotationFixture(t)
	var audit struct {
		AuditEntries struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	admin.MustPost(`{ auditEntries(first: 1) { edges { node { id } } } }`, &audit)
	f.auditEntry = audit.AuditEntries.Edges[0].Node.ID

	// Each account's own job and spare token.
	for r, token := range f.tokens {
		c := f.client(r)
		var j struct{ StartEvaluation struct{ ID string } }
		corpus := map[auth.Role]string{auth.Annotator: "assigned", auth.Researcher: "surr"}[r]
		if corpus == "" {
			corpus = "orig"
		}
		c.MustPost(`mutation($c: String!) { startEvaluation(input: {corpus: $c, system: "gold"}) { id } }`, &j, client.Var("c", corpus))
		f.ownJob[r] = j.StartEvaluation.ID
		var tk struct {
			CreateToken struct{ Info struct{ ID string } }
		}
		c.MustPost(`mutation { createToken(name: "spare") { info { id } } }`, &tk)
		f.ownToken[r] = tk.CreateToken.Info.ID
		require.NotEmpty(t, token)
	}
	return f
}

// annotationFixture makes the sets the annotation cases edit.
func (f *authzFixture) annotationFixture(t *testing.T) {
	ctx := context.Background()
	orig, err := f.st.CorpusByName(ctx, "orig")
	require.NoError(t, err)
	gold, err := f.st.AnnotationSet(ctx, orig, "gold")
	require.NoError(t, err)
	sp, err := f.st.Client.Span.Query().Where(span.AnnotationSetID(gold.ID)).First(ctx)
	require.NoError(t, err)
	assigned, err := f.st.CorpusByName(ctx, "assigned")
	require.NoError(t, err)
	doc, err := f.st.Client.Document.Query().Where(document.CorpusID(assigned.ID)).First(ctx)
	require.NoError(t, err)
	assignedGold, err := f.st.AnnotationSet(ctx, assigned, "gold")
	require.NoError(t, err)
	goldSpan, err := f.st.Client.Span.Query().Where(span.AnnotationSetID(assignedGold.ID)).First(ctx)
	require.NoError(t, err)
	f.assignedSpan = strconv.Itoa(goldSpan.ID)
	sets := map[string]string{}
	for _, annotator := range []string{string(auth.Annotator), "ann2"} {
		// The annotator annotates openly here: it reads the gold the cases
		// name (blind annotators: TestAnnotatorsAreBlind).
		set, err := f.st.Client.AnnotationSet.Create().SetCorpusID(assigned.ID).SetName("by-" + annotator).
			SetKind(annotationset.KindAnnotator).SetAnnotator(annotator).SetOpen(annotator == string(auth.Annotator)).Save(ctx)
		require.NoError(t, err)
		sets[annotator] = strconv.Itoa(set.ID)
	}
	// A built-in model of the assigned corpus, for the annotation queue:
	// tiny, since only who may ask is tested here.
	tm, err := tagger.Train(ctx, []pipeline.Document{{ID: "a", Text: "Seen by Dr Smith.", Spans: []pipeline.Span{{Start: 11, End: 16, Type: "DOCTOR", Category: "NAME"}}}},
		tagger.Config{Features: tagger.DefaultConfig().Features, Training: tagger.TrainOptions{L2: 1, MaxIterations: 2, Period: 1, Memory: 1, Workers: 1, MinFreq: 1}}, nil)
	require.NoError(t, err)
	var artifact bytes.Buffer
	require.NoError(t, tm.Save(&artifact))
	require.NoError(t, f.st.Client.Model.Create().SetName("crf-tiny").SetArtifact(artifact.Bytes()).
		SetTrainingCorpus(assigned.Name).SetTrainingCorpusID(assigned.ID).Exec(ctx))
	f.origGold, f.origSpan, f.assignedDoc = strconv.Itoa(gold.ID), strconv.Itoa(sp.ID), strconv.Itoa(doc.ID)
	f.ownSet, f.othersSet = sets[string(auth.Annotator)], sets["ann2"]
}

func (f *authzFixture) client(r auth.Role) *client.Client {
	return client.New(f.ts.Config.Handler, client.Path("/graphql"), client.AddHeader("Authorization", "Bearer "+f.tokens[r]))
}

// authzCase is one operation tried by every role. allowed is written here by
// hand (A admin, C curator, N annotator, R researcher), independently of the
// rules in package auth, so that a rule changed by mistake fails the test.
type authzCase struct {
	op      string // the operation of package auth it exercises
	name    string
	allowed string
	// query and vars for GraphQL; vars may depend on the role (names that
	// must be fresh for each one).
	query string
	vars  func(f *authzFixture, r auth.Role) map[string]any
	// upload sends the fixture's files as $files.
	upload bool
	// null: the root field answers null to a role that may not see it.
	null string
	// path: a download.
	path func(f *authzFixture) string
}

func authzCases() []authzCase {
	return []authzCase{
		{op: "Query.node", name: "original document", allowed: "AC", query: `query($id: ID!) { node(id: $id) { id } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.origDoc} }},
		{op: "Query.node", name: "surrogate document", allowed: "ACR", query: `query($id: ID!) { node(id: $id) { ... on Document { text } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.surrDoc} }},
		{op: "Query.nodes", name: "original document", allowed: "AC", query: `query($id: ID!) { nodes(ids: [$id]) { id } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.origDoc} }},
		{op: "Query.me", allowed: "ACNR", query: `{ me { name role } }`},
		{op: "Query.corpora", allowed: "ACNR", query: `{ corpora { totalCount } }`},
		{op: "Query.corpusByName", name: "original", allowed: "AC", null: "corpusByName", query: `{ corpusByName(name: "orig") { id } }`},
		{op: "Query.corpusByName", name: "surrogate", allowed: "ACR", null: "corpusByName", query: `{ corpusByName(name: "surr") { id } }`},
		{op: "Query.corpusByName", name: "assigned", allowed: "ACN", null: "corpusByName", query: `{ corpusByName(name: "assigned") { id } }`},
		{op: "Query.documents", allowed: "ACNR", query: `{ documents { totalCount } }`},
		{op: "Query.patients", allowed: "ACNR", query: `{ patients { totalCount } }`},
		{op: "Query.spans", allowed: "ACNR", query: `{ spans { totalCount } }`},
		{op: "Query.evaluations", allowed: "ACNR", query: `{ evaluations { totalCount } }`},
		{op: "Query.jobs", allowed: "ACNR", query: `{ jobs { totalCount } }`},
		{op: "Query.models", allowed: "ACNR", query: `{ models { totalCount } }`},
		{op: "Query.releases", allowed: "ACNR", query: `{ releases { totalCount } }`},
		{op: "Query.release", name: "of original", allowed: "AC", null: "release", query: `{ release(ref: "orig-rel@1.0.0") { ref } }`},
		{op: "Query.release", name: "of surrogate", allowed: "ACR", null: "release", query: `{ release(ref: "surr-rel@1.0.0") { ref } }`},
		{op: "Query.tagSets", allowed: "ACNR", query: `{ tagSets { name } }`},
		{op: "Query.mappings", allowed: "ACNR", query: `{ mappings }`},
		{op: "Query.formats", allowed: "ACNR", query: `{ formats { name } }`},
		{op: "Query.jobKinds", allowed: "ACNR", query: `{ jobKinds }`},
		{op: "Query.tokens", allowed: "ACNR", query: `{ tokens { id } }`},
		{op: "Query.corpusStatistics", name: "original", allowed: "AC", query: `query($id: ID!) { corpusStatistics(corpus: $id) { spans } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.origID} }},
		{op: "Query.corpusStatistics", name: "surrogate", allowed: "ACR", query: `query($id: ID!) { corpusStatistics(corpus: $id) { spans } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.surrID} }},
		{op: "Query.corpusStatistics", name: "original by name", allowed: "AC", query: `{ corpusStatistics(name: "orig") { spans } }`},
		{op: "Query.corpusStatistics", name: "surrogate by name", allowed: "ACR", query: `{ corpusStatistics(name: "surr") { spans } }`},
		{op: "Query.corpusStatistics", name: "assigned by name", allowed: "ACN", query: `{ corpusStatistics(name: "assigned") { spans } }`},
		{op: "Query.compareCorpora", name: "original with surrogate", allowed: "AC", query: `{ compareCorpora(a: "orig", b: "surr") { chiSquare { p } } }`},
		{op: "Query.compareCorpora", name: "surrogate with itself", allowed: "ACR", query: `{ compareCorpora(a: "surr", b: "surr") { oov { tokenRate } } }`},
		{op: "Query.compareCorpora", name: "assigned with itself", allowed: "ACN", query: `{ compareCorpora(a: "assigned", b: "assigned", by: CATEGORY) { namePatterns { a } } }`},
		{op: "Query.lineage", name: "original", allowed: "AC", query: `query($id: ID!) { lineage(id: $id) { kind } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.origID} }},
		{op: "Query.lineage", name: "surrogate", allowed: "ACR", query: `query($id: ID!) { lineage(id: $id) { kind } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.surrID} }},
		{op: "Query.compareEvaluations", name: "original", allowed: "AC", query: `query($a: ID!) { compareEvaluations(a: $a, b: $a, shuffles: 9, bootstrap: 9) }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"a": f.origEval} }},
		{op: "Query.compareEvaluations", name: "surrogate", allowed: "ACR", query: `query($a: ID!) { compareEvaluations(a: $a, b: $a, shuffles: 9, bootstrap: 9) }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"a": f.surrEval} }},
		{op: "Query.releaseDiff", name: "original", allowed: "AC", query: `{ releaseDiff(a: "orig-rel@1.0.0", b: "orig-rel@1.0.0") }`},
		{op: "Query.releaseDiff", name: "surrogate", allowed: "ACR", query: `{ releaseDiff(a: "surr-rel@1.0.0", b: "surr-rel@1.0.0") }`},
		{op: "Query.checkReport", allowed: "AC", query: `{ checkReport(corpus: "surr") }`},
		{op: "Query.surrogateMappings", allowed: "AC", query: `{ surrogateMappings(corpus: "orig", first: 3) { original } }`},
		{op: "Query.surrogateIDs", allowed: "AC", query: `{ surrogateIDs(corpus: "surr") { kind source surrogate } }`},
		{op: "Query.users", allowed: "A", query: `{ users { totalCount } }`},
		{op: "Query.auditEntries", allowed: "A", query: `{ auditEntries { totalCount } }`},
		{op: "Query.auditEntries", name: "in an inline fragment", allowed: "A", query: `{ me { name } ... on Query { log: auditEntries { totalCount } } }`},
		{op: "Query.auditEntries", name: "in a named fragment", allowed: "A", query: `query { ...F } fragment F on Query { auditEntries { totalCount } }`},
		{op: "Query.node", name: "an audit entry", allowed: "A", query: `query($id: ID!) { node(id: $id) { ... on AuditEntry { actor } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.auditEntry} }},

		{op: "Mutation.createCorpus", allowed: "AC", query: `mutation($n: String!) { createCorpus(name: $n) { id } }`,
			vars: func(_ *authzFixture, r auth.Role) map[string]any { return map[string]any{"n": "new-" + string(r)} }},
		{op: "Mutation.importDocuments", name: "into assigned", allowed: "ACN", upload: true,
			query: `mutation($files: [Upload!]!, $s: String!) { importDocuments(input: {corpus: "assigned", set: $s}, files: $files) { documents } }`,
			vars:  func(_ *authzFixture, r auth.Role) map[string]any { return map[string]any{"s": "import-" + string(r)} }},
		{op: "Mutation.importDocuments", name: "into original", allowed: "AC", upload: true,
			query: `mutation($files: [Upload!]!, $s: String!) { importDocuments(input: {corpus: "orig", set: $s}, files: $files) { documents } }`,
			vars:  func(_ *authzFixture, r auth.Role) map[string]any { return map[string]any{"s": "import-" + string(r)} }},
		{op: "Mutation.startImport", allowed: "ACN", upload: true,
			query: `mutation($files: [Upload!]!, $s: String!) { startImport(input: {corpus: "assigned", set: $s}, files: $files) { id } }`,
			vars: func(_ *authzFixture, r auth.Role) map[string]any {
				return map[string]any{"s": "job-import-" + string(r)}
			}},
		{op: "Mutation.exportCorpus", name: "original", allowed: "AC", query: `mutation { exportCorpus(corpus: "orig") { url } }`},
		{op: "Mutation.exportCorpus", name: "surrogate", allowed: "ACR", query: `mutation { exportCorpus(corpus: "surr") { url } }`},
		{op: "Mutation.startExport", name: "original", allowed: "AC", query: `mutation { startExport(corpus: "orig") { id } }`},
		{op: "Mutation.startExport", name: "assigned", allowed: "ACN", query: `mutation { startExport(corpus: "assigned") { id } }`},
		{op: "Mutation.deriveCorpus", allowed: "AC", query: `mutation($o: String!) { deriveCorpus(corpus: "orig", out: $o, mapping: "i2b2-hipaa") { documents } }`,
			vars: func(_ *authzFixture, r auth.Role) map[string]any { return map[string]any{"o": "derived-" + string(r)} }},
		{op: "Mutation.startDerive", allowed: "AC", query: `mutation($o: String!) { startDerive(corpus: "orig", out: $o, mapping: "i2b2-hipaa") { id } }`,
			vars: func(_ *authzFixture, r auth.Role) map[string]any {
				return map[string]any{"o": "job-derived-" + string(r)}
			}},
		{op: "Mutation.deleteCorpus", allowed: "AC", query: `mutation($n: String!) { deleteCorpus(name: $n) }`,
			vars: func(f *authzFixture, r auth.Role) map[string]any {
				// Made by the admin for each role, so that a refusal is not a
				// mere "not found".
				name := "scratch-" + string(r)
				f.st.CreateCorpus(context.Background(), name, "open", "", "original")
				return map[string]any{"n": name}
			}},
		{op: "Mutation.startResynthesis", allowed: "AC", query: `mutation($o: String!) { startResynthesis(input: {corpus: "orig", out: $o}) { id } }`,
			vars: func(_ *authzFixture, r auth.Role) map[string]any { return map[string]any{"o": "resynth-" + string(r)} }},
		// A conflict for those allowed: the surrogate corpus exists.
		{op: "Mutation.deidentify", allowed: "AC", query: `mutation { deidentify(input: {corpus: "orig", model: "ext", out: "surr"}) { id } }`},
		// A conflict for those allowed: the corpus passed its check.
		{op: "Mutation.resolveCheckFindings", allowed: "AC", query: `mutation { resolveCheckFindings(corpus: "surr", reason: "reviewed") { name } }`},
		{op: "Mutation.createRelease", allowed: "AC", query: `mutation($n: String!) { createRelease(input: {corpus: "surr", name: $n, version: "1.0.0"}) { ref } }`,
			vars: func(_ *authzFixture, r auth.Role) map[string]any { return map[string]any{"n": "rel-" + string(r)} }},
		{op: "Mutation.startEvaluation", name: "original", allowed: "AC", query: `mutation { startEvaluation(input: {corpus: "orig", system: "gold"}) { id } }`},
		{op: "Mutation.startEvaluation", name: "surrogate", allowed: "ACR", query: `mutation { startEvaluation(input: {corpus: "surr", system: "gold"}) { id } }`},
		{op: "Mutation.startTraining", name: "original", allowed: "AC", query: `mutation($m: String!) { startTraining(input: {corpus: "orig", model: $m}) { id } }`,
			vars: func(_ *authzFixture, r auth.Role) map[string]any { return map[string]any{"m": ownModel(r, "model")} }},
		{op: "Mutation.startTraining", name: "assigned", allowed: "ACN", query: `mutation($m: String!) { startTraining(input: {corpus: "assigned", model: $m}) { id } }`,
			vars: func(_ *authzFixture, r auth.Role) map[string]any {
				return map[string]any{"m": ownModel(r, "model-assigned")}
			}},
		{op: "Mutation.startTagging", name: "surrogate", allowed: "ACR", query: `mutation { startTagging(input: {model: "ext", corpus: "surr"}) { id } }`},
		{op: "Mutation.startExperiment", name: "original", allowed: "AC", query: `mutation { startExperiment(input: {kind: "cv", corpus: "orig", k: 2}) { id } }`},
		{op: "Mutation.startExperiment", name: "surrogate", allowed: "ACR", query: `mutation { startExperiment(input: {kind: "cv", corpus: "surr", k: 2}) { id } }`},
		{op: "Mutation.cancelJob", name: "the admin's job", allowed: "AC", query: `mutation($id: ID!) { cancelJob(id: $id) { status } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.adminJob} }},
		{op: "Mutation.cancelJob", name: "own job", allowed: "ACNR", query: `mutation($id: ID!) { cancelJob(id: $id) { status } }`,
			vars: func(f *authzFixture, r auth.Role) map[string]any { return map[string]any{"id": f.ownJob[r]} }},
		{op: "Mutation.retryJob", name: "the admin's job", allowed: "AC", query: `mutation($id: ID!) { retryJob(id: $id) { status } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.adminJob} }},
		{op: "Mutation.registerExternalModel", allowed: "AC", query: `mutation($n: String!) { registerExternalModel(name: $n, endpoint: "http://127.0.0.1:9/") { id } }`,
			vars: func(_ *authzFixture, r auth.Role) map[string]any { return map[string]any{"n": "ext-" + string(r)} }},
		{op: "Mutation.createUser", allowed: "A", query: `mutation($n: String!) { createUser(name: $n, role: researcher) { id } }`,
			vars: func(_ *authzFixture, r auth.Role) map[string]any { return map[string]any{"n": "user-" + string(r)} }},
		{op: "Mutation.updateUser", allowed: "A", query: `mutation { updateUser(name: "victim", role: curator) { role } }`},
		{op: "Mutation.assignCorpus", allowed: "A", query: `mutation { assignCorpus(user: "ann2", corpus: "orig") { name } }`},
		{op: "Mutation.unassignCorpus", allowed: "A", query: `mutation { unassignCorpus(user: "ann2", corpus: "orig") { name } }`},
		{op: "Mutation.createToken", name: "own", allowed: "ACNR", query: `mutation { createToken(name: "more") { token } }`},
		{op: "Mutation.createToken", name: "for another account", allowed: "A", query: `mutation { createToken(user: "victim") { token } }`},
		{op: "Mutation.revokeToken", name: "own", allowed: "ACNR", query: `mutation($id: ID!) { revokeToken(id: $id) { revokedAt } }`,
			vars: func(f *authzFixture, r auth.Role) map[string]any { return map[string]any{"id": f.ownToken[r]} }},
		{op: "Mutation.revokeToken", name: "the admin's", allowed: "A", query: `mutation($id: ID!) { revokeToken(id: $id) { revokedAt } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.ownToken[auth.Admin]} }},
		{op: "Mutation.revokeToken", name: "the curator's", allowed: "AC", query: `mutation($id: ID!) { revokeToken(id: $id) { revokedAt } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any {
				return map[string]any{"id": f.ownToken[auth.Curator]}
			}},

		// Hand annotation, each against a version that is not the
		// document's: whoever may edit gets a conflict (allowed), and
		// nothing changes from one role to the next.
		{op: "Mutation.addSpan", name: "original gold", allowed: "AC",
			query: `mutation($s: ID!, $d: ID!) { addSpan(input: {set: $s, document: $d, version: 999, start: 0, end: 2, type: "AGE"}) { span { text } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any {
				return map[string]any{"s": f.origGold, "d": f.origDoc}
			}},
		{op: "Mutation.addSpan", name: "own set", allowed: "ACN",
			query: `mutation($s: ID!, $d: ID!) { addSpan(input: {set: $s, document: $d, version: 999, start: 0, end: 2, type: "AGE"}) { span { text } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any {
				return map[string]any{"s": f.ownSet, "d": f.assignedDoc}
			}},
		{op: "Mutation.addSpan", name: "another annotator's set", allowed: "AC",
			query: `mutation($s: ID!, $d: ID!) { addSpan(input: {set: $s, document: $d, version: 999, start: 0, end: 2, type: "AGE"}) { span { text } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any {
				return map[string]any{"s": f.othersSet, "d": f.assignedDoc}
			}},
		{op: "Mutation.addSpan", name: "a document of another corpus", allowed: "",
			query: `mutation($s: ID!, $d: ID!) { addSpan(input: {set: $s, document: $d, version: 999, start: 0, end: 2, type: "AGE"}) { span { text } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any {
				return map[string]any{"s": f.ownSet, "d": f.origDoc}
			}},
		{op: "Mutation.changeSpan", allowed: "AC", query: `mutation($id: ID!) { changeSpan(input: {span: $id, version: 999, type: "AGE"}) { span { text } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.origSpan} }},
		{op: "Mutation.removeSpan", allowed: "AC", query: `mutation($id: ID!) { removeSpan(span: $id, version: 999) { state { version } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.origSpan} }},
		{op: "Mutation.setDocumentStatus", name: "own set", allowed: "ACN",
			query: `mutation($s: ID!, $d: ID!) { setDocumentStatus(set: $s, document: $d, status: done, version: 999) { version } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any {
				return map[string]any{"s": f.ownSet, "d": f.assignedDoc}
			}},
		{op: "Mutation.undoEdit", name: "original gold", allowed: "AC",
			query: `mutation($s: ID!, $d: ID!) { undoEdit(set: $s, document: $d, version: 999) { span { text } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any {
				return map[string]any{"s": f.origGold, "d": f.origDoc}
			}},
		{op: "Mutation.undoEdit", name: "another annotator's set", allowed: "AC",
			query: `mutation($s: ID!, $d: ID!) { undoEdit(set: $s, document: $d, version: 999) { span { text } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any {
				return map[string]any{"s": f.othersSet, "d": f.assignedDoc}
			}},
		{op: "Mutation.acceptSpan", name: "into own set", allowed: "ACN", query: `mutation($sp: ID!, $s: ID!) { acceptSpan(span: $sp, into: $s, version: 999) { span { text } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any {
				return map[string]any{"sp": f.assignedSpan, "s": f.ownSet}
			}},
		{op: "Mutation.acceptSpan", name: "into another annotator's set", allowed: "AC", query: `mutation($sp: ID!, $s: ID!) { acceptSpan(span: $sp, into: $s, version: 999) { span { text } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any {
				return map[string]any{"sp": f.assignedSpan, "s": f.othersSet}
			}},
		{op: "Query.disagreements", allowed: "AC", query: `query($d: ID!) { disagreements(corpus: "assigned", sets: ["gold", "by-annotator"], document: $d) { kind sets { spans { text } } } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"d": f.assignedDoc} }},
		{op: "Query.agreement", name: "assigned", allowed: "ACN", query: `{ agreement(corpus: "assigned", sets: ["gold", "by-annotator"]) { f1 byType { type f1 } } }`},
		{op: "Query.agreement", name: "original", allowed: "AC", query: `{ agreement(corpus: "orig", sets: ["gold", "gold"]) { f1 } }`},
		{op: "Query.annotationQueue", name: "assigned", allowed: "ACN", query: `{ annotationQueue(corpus: "assigned", set: "by-annotator", model: "crf-tiny") { uncertainty } }`},
		{op: "Query.annotationQueue", name: "original", allowed: "AC", query: `{ annotationQueue(corpus: "orig", set: "gold", model: "crf-tiny") { document { text } uncertainty } }`},
		{op: "Mutation.assignDocuments", allowed: "AC",
			query: `mutation { assignDocuments(input: {corpus: "assigned", set: "batch", annotators: ["annotator"], split: train}) { name progress { version } } }`},

		{op: "Subscription.job", name: "the admin's job", allowed: "AC", query: `subscription($id: ID!) { job(id: $id) { status } }`,
			vars: func(f *authzFixture, _ auth.Role) map[string]any { return map[string]any{"id": f.adminJob} }},
		{op: "Subscription.job", name: "own job", allowed: "ACNR", query: `subscription($id: ID!) { job(id: $id) { status } }`,
			vars: func(f *authzFixture, r auth.Role) map[string]any { return map[string]any{"id": f.ownJob[r]} }},

		{op: "download.corpus", name: "original", allowed: "AC", path: func(*authzFixture) string { return "/download/corpora/orig" }},
		{op: "download.corpus", name: "surrogate", allowed: "ACR", path: func(*authzFixture) string { return "/download/corpora/surr" }},
		{op: "download.corpus", name: "assigned", allowed: "ACN", path: func(*authzFixture) string { return "/download/corpora/assigned" }},
		{op: "download.release", name: "of original", allowed: "AC", path: func(*authzFixture) string { return "/download/releases/orig-rel@1.0.0" }},
		{op: "download.release", name: "of surrogate", allowed: "ACR", path: func(*authzFixture) string { return "/download/releases/surr-rel@1.0.0" }},
		{op: "download.artifact", name: "the admin's export", allowed: "AC", path: func(f *authzFixture) string { return "/download/artifacts/" + f.origArtifact }},
	}
}

// ownModel is a name the account of role r (named as its role) may give a
// model it makes: under its own account unless it sees every corpus.
func ownModel(r auth.Role, name string) string {
	if r == auth.Admin || r == auth.Curator {
		return name + "-" + string(r)
	}
	return string(r) + ":" + name
}

var roleLetters = map[auth.Role]string{auth.Admin: "A", auth.Curator: "C", auth.Annotator: "N", auth.Researcher: "R"}

// TestEveryRoleAgainstEveryOperation runs every role against every query,
// mutation, subscription and download, and checks that it is allowed or
// refused as the table says; refusals are forbidden (may not run it) or
// not_found/null (may not see the object named).
func TestEveryRoleAgainstEveryOperation(t *testing.T) {
	f := newAuthzFixture(t, storetest.SQLite)
	cases := authzCases()
	for _, c := range cases {
		for _, r := range auth.Roles {
			name := fmt.Sprintf("%s %s/%s", c.op, c.name, r)
			want := strings.Contains(c.allowed, roleLetters[r])
			got, detail := f.try(t, c, r)
			assert.Equal(t, want, got, "%s: %s", name, detail)

		}
	}

	// Every operation is covered: a new query, mutation, subscription or
	// download without a rule in package auth, or without a case here,
	// fails this test.
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.op] = true
	}
	schema := resolvers.NewSchema(f.st, nil).Schema()
	for _, root := range []string{"Query", "Mutation", "Subscription"} {
		for _, field := range schema.Types[root].Fields {
			if strings.HasPrefix(field.Name, "__") {
				continue
			}
			op := root + "." + field.Name
			_, ok := auth.RuleFor(op)
			assert.True(t, ok, "%s has no rule in package auth", op)
			assert.True(t, covered[op], "%s has no case in this test", op)
		}
	}
	for _, op := range auth.Operations() {
		if strings.HasPrefix(op, "download.") {
			assert.True(t, covered[op], "%s has no case in this test", op)
		}
	}
}

// try runs one case as one role: allowed, or refused with a reason.
func (f *authzFixture) try(t *testing.T, c authzCase, r auth.Role) (bool, string) {
	t.Helper()
	if c.path != nil {
		req, _ := http.NewRequest("GET", f.ts.URL+c.path(f), nil)
		req.Header.Set("Authorization", "Bearer "+f.tokens[r])
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return true, "200"
		case http.StatusForbidden, http.StatusNotFound:
			return false, string(body)
		}
		t.Fatalf("%s as %s: unexpected status %d: %s", c.path(f), r, resp.StatusCode, body)
	}
	var opts []client.Option
	if c.vars != nil {
		for k, v := range c.vars(f, r) {
			opts = append(opts, client.Var(k, v))
		}
	}
	if c.upload {
		var files []*os.File
		for _, p := range f.uploads {
			fl, err := os.Open(p)
			require.NoError(t, err)
			defer fl.Close()
			files = append(files, fl)
		}
		opts = append(opts, client.Var("files", files), client.WithFiles())
	}
	cl := f.client(r)
	var data map[string]any
	var errs []struct {
		Message    string
		Extensions struct{ Code string }
	}
	if strings.HasPrefix(c.query, "subscription") {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sse := cl.SSE(ctx, c.query, opts...)
		defer sse.Close()
		var resp map[string]any
		if err := sse.Next(&resp); err != nil {
			// The client returns the response's errors as the error.
			require.NoError(t, json.Unmarshal([]byte(err.Error()), &errs), err.Error())
		}
		data, _ = resp["data"].(map[string]any)
	} else {
		resp, err := cl.RawPost(c.query, opts...)
		require.NoError(t, err)
		data, _ = resp.Data.(map[string]any)
		if len(resp.Errors) > 0 {
			require.NoError(t, json.Unmarshal(resp.Errors, &errs))
		}
	}
	for _, e := range errs {
		switch e.Extensions.Code {
		case "forbidden", "not_found", "unauthorized":
			return false, e.Extensions.Code + ": " + e.Message
		case "conflict":
			// Allowed, and refused for the object's state (a finished job
			// cannot be cancelled).
		default:
			t.Errorf("%s %s as %s: the case itself fails: %s: %s", c.op, c.name, r, e.Extensions.Code, e.Message)
		}
	}
	if c.null != "" && data[c.null] == nil {
		return false, c.null + " is null"
	}
	return true, "allowed"
}

// TestRolesSeeOnlyTheirRows checks the row filters behind the lists: a
// researcher's queries, however they traverse, reach surrogate rows only;
// an annotator's its assigned corpus only.
func TestRolesSeeOnlyTheirRows(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) { rolesSeeOnlyTheirRows(t, newAuthzFixture(t, b)) })
	}
}

func rolesSeeOnlyTheirRows(t *testing.T, f *authzFixture) {
	type seen struct {
		Corpora struct {
			Edges []struct {
				Node struct {
					Name, Kind string
					Documents  struct{ TotalCount int }
				}
			}
		}
		Documents, Spans, Patients, Evaluations, Releases, Jobs struct{ TotalCount int }
	}
	query := `{ corpora { edges { node { name kind documents { totalCount } } } }
		documents { totalCount } spans { totalCount } patients { totalCount }
		evaluations { totalCount } releases { totalCount } jobs { totalCount } }`
	names := func(s seen) []string {
		var out []string
		for _, e := range s.Corpora.Edges {
			out = append(out, e.Node.Name)
		}
		slices.Sort(out)
		return out
	}
	var admin, researcher, annotator seen
	f.client(auth.Admin).MustPost(query, &admin)
	f.client(auth.Researcher).MustPost(query, &researcher)
	f.client(auth.Annotator).MustPost(query, &annotator)
	assert.Equal(t, []string{"assigned", "orig", "surr"}, names(admin))
	assert.Equal(t, []string{"surr"}, names(researcher))
	assert.Equal(t, "surrogate", researcher.Corpora.Edges[0].Node.Kind)
	assert.Equal(t, []string{"assigned"}, names(annotator))
	// The counts of every list are the visible corpus's own.
	assert.Equal(t, 3, researcher.Documents.TotalCount)
	assert.Equal(t, 3, annotator.Documents.TotalCount)
	assert.Equal(t, 9, admin.Documents.TotalCount)
	assert.Less(t, researcher.Spans.TotalCount, admin.Spans.TotalCount)
	assert.Equal(t, 1, researcher.Releases.TotalCount, "the release of the surrogate corpus only")
	assert.Equal(t, 1, researcher.Jobs.TotalCount, "its own job only")

	// No span text a researcher can reach is an original value.
	originals := map[string]bool{}
	ms, err := f.st.SurrogateMappings(context.Background(), "orig", "", 1000, 0)
	require.NoError(t, err)
	for _, m := range ms {
		o, err := f.st.MappingOriginal(context.Background(), m)
		require.NoError(t, err)
		if len(o) >= 4 {
			originals[o] = true
		}
	}
	require.NotEmpty(t, originals)
	var spans struct {
		Spans struct {
			Edges []struct{ Node struct{ Text string } }
		}
		Documents struct {
			Edges []struct {
				Node struct {
					Text  string
					Spans struct {
						Edges []struct{ Node struct{ Text string } }
					}
				}
			}
		}
	}
	f.client(auth.Researcher).MustPost(`{ spans(first: 1000) { edges { node { text } } }
		documents { edges { node { text spans { edges { node { text } } } } } } }`, &spans)
	require.NotEmpty(t, spans.Spans.Edges)
	for _, e := range spans.Spans.Edges {
		assert.False(t, originals[e.Node.Text], "a researcher read the original %q", e.Node.Text)
	}
	for _, d := range spans.Documents.Edges {
		for o := range originals {
			assert.NotContains(t, d.Node.Text, o, "a researcher read an original note")
		}
	}
}

// TestWebsocketAuthenticatesInConnectionInit: browsers cannot send headers
// on a websocket, so the token comes in connection_init.
func TestWebsocketAuthenticatesInConnectionInit(t *testing.T) {
	f := newAuthzFixture(t, storetest.SQLite)
	bare := client.New(f.ts.Config.Handler, client.Path("/graphql"))
	q := `subscription($id: ID!) { job(id: $id) { status } }`
	var resp struct{ Job struct{ Status string } }
	sub := bare.WebsocketWithPayload(q, map[string]any{"Authorization": "Bearer " + f.tokens[auth.Researcher]},
		client.Var("id", f.ownJob[auth.Researcher]))
	require.NoError(t, sub.Next(&resp))
	assert.NotEmpty(t, resp.Job.Status)
	sub.Close()

	sub = bare.WebsocketWithPayload(q, map[string]any{"Authorization": "Bearer " + f.tokens[auth.Researcher]},
		client.Var("id", f.adminJob))
	err := sub.Next(&resp)
	assert.ErrorContains(t, err, "not_found", "another account's job is not there")
	sub.Close()

	sub = bare.WebsocketWithPayload(q, map[string]any{}, client.Var("id", f.adminJob))
	assert.Error(t, sub.Next(&resp), "no token, no subscription")
	sub.Close()
}

// TestTokensExpireAndRevoke: a token stops working when revoked, when it
// expires and when its account is disabled, each with its reason.
func TestTokensExpireAndRevoke(t *testing.T) {
	clock := storetest.NewClock()
	st := storetest.Open(t, storetest.SQLite, store.WithClock(clock))
	ctx := context.Background()
	_, err := st.CreateUser(ctx, "ann", auth.Annotator)
	require.NoError(t, err)
	tok, row, err := st.CreateToken(ctx, "ann", "laptop", time.Hour)
	require.NoError(t, err)
	v, err := st.Authenticate(ctx, tok)
	require.NoError(t, err)
	assert.Equal(t, "ann", v.Name)
	assert.Equal(t, auth.Annotator, v.Role)
	stored, err := st.Client.Token.Get(ctx, row.ID)
	require.NoError(t, err)
	assert.NotContains(t, stored.Hash, tok[len(auth.TokenPrefix):], "only a hash is stored")
	assert.Equal(t, auth.HashToken(tok), stored.Hash)

	_, err = st.RevokeToken(ctx, row.ID)
	require.NoError(t, err)
	_, err = st.Authenticate(ctx, tok)
	assert.ErrorContains(t, err, "revoked")

	short, _, err := st.CreateToken(ctx, "ann", "", time.Hour)
	require.NoError(t, err)
	_, err = st.Authenticate(ctx, short)
	require.NoError(t, err, "alive within its hour")
	clock.Advance(time.Hour + time.Second)
	_, err = st.Authenticate(ctx, short)
	assert.ErrorContains(t, err, "expired")

	fresh, _, err := st.CreateToken(ctx, "ann", "", 0)
	require.NoError(t, err)
	disabled := true
	_, err = st.UpdateUser(ctx, "ann", nil, &disabled)
	require.NoError(t, err)
	_, err = st.Authenticate(ctx, fresh)
	assert.ErrorContains(t, err, "disabled")

	_, err = st.Authenticate(ctx, auth.NewToken())
	assert.ErrorContains(t, err, "unknown")

	// The last admin cannot be demoted or disabled.
	_, err = st.CreateUser(ctx, "root", auth.Admin)
	require.NoError(t, err)
	researcher := auth.Researcher
	_, err = st.UpdateUser(ctx, "root", &researcher, nil)
	assert.ErrorContains(t, err, "last enabled admin")
	u, err := st.UserByName(ctx, "root")
	require.NoError(t, err)
	assert.Equal(t, "admin", string(u.Role), "the refused change left nothing behind")
}

// TestTokenFields: the server says which token a request came with and
// each token's status; lifetimes are bounded.
func TestTokenFields(t *testing.T) {
	st, ts, _ := newServer(t, storetest.SQLite)
	token := storetest.Token(t, st, "rita", auth.Researcher)
	c := client.New(ts.Config.Handler, client.Path("/graphql"), client.AddHeader("Authorization", "Bearer "+token))
	var made struct {
		CreateToken struct {
			Info struct {
				ID        string
				ExpiresAt *string
			}
		}
	}
	err := c.Post(`mutation { createToken(name: "forever", expiresInDays: 0) { token } }`, &made)
	assert.ErrorContains(t, err, "only admins make tokens that never expire")
	c.MustPost(`mutation { createToken(name: "month", expiresInDays: 30) { info { id expiresAt } } }`, &made)
	require.NotNil(t, made.CreateToken.Info.ExpiresAt)

	// A token made with a token expires no later than it: a leaked token
	// cannot renew itself.
	short, _, err := st.CreateToken(context.Background(), "rita", "short", 48*time.Hour)
	require.NoError(t, err)
	var renewed struct {
		CreateToken struct{ Info struct{ ExpiresAt string } }
	}
	client.New(ts.Config.Handler, client.Path("/graphql"), client.AddHeader("Authorization", "Bearer "+short)).
		MustPost(`mutation { createToken(name: "renewed", expiresInDays: 365) { info { expiresAt } } }`, &renewed)
	expires, err := time.Parse(time.RFC3339, renewed.CreateToken.Info.ExpiresAt)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(48*time.Hour), expires, time.Minute)
	c.MustPost(`mutation($id: ID!) { revokeToken(id: $id) { id } }`, &map[string]any{}, client.Var("id", made.CreateToken.Info.ID))

	var list struct {
		Tokens []struct {
			ID, Name, Status string
			Current          bool
		}
	}
	c.MustPost(`{ tokens { id name status current } }`, &list)
	require.Len(t, list.Tokens, 4) // test, month, short, renewed
	for _, tk := range list.Tokens {
		if tk.Name == "short" || tk.Name == "renewed" {
			continue
		}
		if tk.ID == made.CreateToken.Info.ID {
			assert.Equal(t, "revoked", tk.Status)
			assert.False(t, tk.Current)
		} else {
			assert.Equal(t, "active", tk.Status)
			assert.True(t, tk.Current, "the token of this request")
		}
	}

	admin := client.New(ts.Config.Handler, client.Path("/graphql"), client.AddHeader("Authorization", "Bearer "+ts.Token))
	for _, days := range []int{-1, auth.MaxOwnTokenDays + 1, 300000, 2147483647} {
		err := c.Post(`mutation($d: Int!) { createToken(expiresInDays: $d) { token } }`, &map[string]any{}, client.Var("d", days))
		assert.ErrorContains(t, err, "a token you make lasts 1 to 365 days", "%d days", days)
	}
	for _, days := range []int{-1, auth.MaxTokenDays + 1, 2147483647} {
		err := admin.Post(`mutation($d: Int!) { createToken(expiresInDays: $d) { token } }`, &map[string]any{}, client.Var("d", days))
		assert.ErrorContains(t, err, "a token lasts 1 to 36500 days", "%d days", days)
	}
	admin.MustPost(`mutation { createToken(user: "rita", expiresInDays: 0) { info { id expiresAt } } }`, &made)
	assert.Nil(t, made.CreateToken.Info.ExpiresAt, "an admin may make a token that never expires")
}

// TestWherePredicatesStayInside: a where predicate's subquery passes no row
// filter, so none may lead from rows a role sees to rows it may not, or
// search note or span text (which would read PHI without an audit record).
func TestWherePredicatesStayInside(t *testing.T) {
	st := storetest.Open(t, storetest.SQLite)
	schema := resolvers.NewSchema(st, nil).Schema()
	for input, fields := range map[string][]string{
		"CorpusWhereInput":   {"hasAnnotators", "hasAnnotatorsWith"},
		"UserWhereInput":     {"hasAssignedCorpora", "hasAssignedCorporaWith", "hasTokens", "hasTokensWith"},
		"TokenWhereInput":    {"hasUser", "hasUserWith"},
		"ReleaseWhereInput":  {"hasParent", "hasParentWith", "hasChildren", "hasChildrenWith"},
		"DocumentWhereInput": {"text", "textContains", "textHasPrefix", "textEqualFold"},
		"SpanWhereInput":     {"text", "textContains", "textHasPrefix", "textEqualFold"},
	} {
		def := schema.Types[input]
		if def == nil {
			continue // no where input at all
		}
		for _, f := range fields {
			assert.Nil(t, def.Fields.ForName(f), "%s.%s", input, f)
		}
	}
	require.NotNil(t, schema.Types["DocumentWhereInput"].Fields.ForName("hasCorpusWith"), "predicates inside a corpus stay")
}

// TestWebsocketOperationsAuthenticateEach: a websocket carries many
// operations; each is authenticated anew, so a token revoked (or an account
// changed) while the connection is open takes effect at once.
func TestWebsocketOperationsAuthenticateEach(t *testing.T) {
	st, ts, _ := newServer(t, storetest.SQLite)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	token := storetest.Token(t, st, "ann", auth.Annotator)
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	require.NoError(t, err)
	defer conn.CloseNow()
	send := func(msg map[string]any) {
		require.NoError(t, wsjson.Write(ctx, conn, msg))
	}
	// receive returns the next message of an operation (next or error).
	receive := func(id string) map[string]any {
		for {
			var msg map[string]any
			require.NoError(t, wsjson.Read(ctx, conn, &msg))
			if msg["id"] == id && msg["type"] != "complete" {
				return msg
			}
		}
	}
	send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}})
	var ack map[string]any
	require.NoError(t, wsjson.Read(ctx, conn, &ack))
	require.Equal(t, "connection_ack", ack["type"])

	send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "{ me { name role } }"}})
	first := receive("1")
	require.Equal(t, "next", first["type"], "%v", first)
	assert.Contains(t, fmt.Sprint(first["payload"]), "annotator")

	// The admin makes the account a researcher: the next operation on the
	// same connection sees the new role.
	researcher := auth.Researcher
	_, err = st.UpdateUser(ctx, "ann", &researcher, nil)
	require.NoError(t, err)
	send(map[string]any{"id": "2", "type": "subscribe", "payload": map[string]any{"query": "{ me { role } }"}})
	assert.Contains(t, fmt.Sprint(receive("2")["payload"]), "researcher")

	// Revoked: refused on the open connection.
	toks, err := st.Tokens(ctx, "ann")
	require.NoError(t, err)
	for _, tk := range toks {
		_, err = st.RevokeToken(ctx, tk.ID)
		require.NoError(t, err)
	}
	send(map[string]any{"id": "3", "type": "subscribe", "payload": map[string]any{"query": "{ me { name } }"}})
	refused := fmt.Sprint(receive("3")["payload"])
	assert.Contains(t, refused, "revoked")
	assert.NotContains(t, refused, "data:map[me")
}
