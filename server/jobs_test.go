package server_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/release"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

type jobState struct {
	ID, Status, Message, Error  string
	ProgressDone, ProgressTotal int
	Result                      map[string]any
}

// follow subscribes to a job over the websocket transport as the account
// of token and returns every state it was sent, the last one finished.
func follow(t *testing.T, h http.Handler, token, id string) []jobState {
	t.Helper()
	sub := client.New(h, client.Path("/graphql")).WebsocketWithPayload(
		`subscription($id: ID!) { job(id: $id) { id status message error progressDone progressTotal result } }`,
		map[string]any{"Authorization": "Bearer " + token}, client.Var("id", id))
	defer sub.Close()
	var states []jobState
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var resp struct{ Job jobState }
		require.NoError(t, sub.Next(&resp))
		states = append(states, resp.Job)
		switch resp.Job.Status {
		case "succeeded", "failed", "cancelled", "check_failed":
			return states
		}
	}
	t.Fatal("job did not finish")
	return nil
}

func TestJobsThroughGraphQL(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			st, ts, c := newServer(t, b)
			ctx := context.Background()
			var docs []pipeline.Document
			require.NoError(t, synth.Generate(synth.Options{Patients: 30, Seed: 5}, func(p synth.Patient) error {
				docs = append(docs, p.Docs...)
				return nil
			}))
			_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"}, docs)
			require.NoError(t, err)

			// Resynthesis, watched live over the websocket subscription.
			var start struct{ StartResynthesis struct{ ID, Status string } }
			c.MustPost(`mutation { startResynthesis(input: {corpus: "notes", out: "notes-surrogate", seed: 7}) { id status } }`, &start)
			assert.Equal(t, "queued", start.StartResynthesis.Status)
			states := follow(t, ts.Config.Handler, ts.Token, start.StartResynthesis.ID)
			last := states[len(states)-1]
			require.Equal(t, "succeeded", last.Status, last.Error)
			check := last.Result["check"].(map[string]any)
			assert.Equal(t, true, check["ok"])
			assert.Equal(t, float64(0), check["leaks"])
			assert.Equal(t, float64(0), check["misaligned"])
			assert.Equal(t, float64(len(docs)), last.Result["documents"])

			// A surrogate corpus that passed its check may be released for
			// outside sharing; its archive verifies.
			var rel struct {
				CreateRelease struct {
					Ref, RootHash, DownloadURL, Datasheet string
					Share                                 bool
				}
			}
			c.MustPost(`mutation { createRelease(input: {corpus: "notes-surrogate", name: "notes", version: "1.0.0", share: true}) {
				ref rootHash share datasheet downloadURL(format: "jsonl") } }`, &rel)
			assert.True(t, rel.CreateRelease.Share)
			assert.Contains(t, rel.CreateRelease.Datasheet, "A surrogate corpus")
			zipResp, err := ts.get(rel.CreateRelease.DownloadURL)
			require.NoError(t, err)
			zipped, _ := io.ReadAll(zipResp.Body)
			zipResp.Body.Close()
			archive, err := formats.Unzip("notes.zip", zipped)
			require.NoError(t, err)
			v, err := release.Verify(archive)
			require.NoError(t, err)
			assert.Equal(t, rel.CreateRelease.RootHash, v.Root)
			var refused map[string]any
			err = c.Post(`mutation { createRelease(input: {corpus: "notes", name: "notes-original", version: "1.0.0", share: true}) { ref } }`, &refused)
			assert.ErrorContains(t, err, "original text")
			// A shared release names its parent in its datasheet: the parent
			// must be shared too.
			c.MustPost(`mutation { createRelease(input: {corpus: "notes-surrogate", name: "inside", version: "1.0.0"}) { ref } }`, &refused)
			err = c.Post(`mutation { createRelease(input: {corpus: "notes-surrogate", name: "notes", version: "2.0.0", share: true, parent: "inside@1.0.0"}) { ref } }`, &refused)
			assert.ErrorContains(t, err, "a release for sharing must follow a shared release")

			// The release's lineage walks back to the imported notes through the
			// resynthesis job and its seed.
			var lin struct {
				Lineage []struct {
					Kind, Name  string
					Parameters  map[string]any
					CodeVersion *string
					Job         *struct{ Kind string }
				}
			}
			var relID struct{ Release struct{ ID string } }
			c.MustPost(`{ release(ref: "notes@1.0.0") { id } }`, &relID)
			c.MustPost(`query($id: ID!) { lineage(id: $id) { kind name parameters codeVersion job { kind } } }`, &lin, client.Var("id", relID.Release.ID))
			var kinds []string
			for _, l := range lin.Lineage {
				kinds = append(kinds, l.Kind+":"+l.Name)
			}
			assert.Equal(t, []string{"Release:notes@1.0.0", "Corpus:notes-surrogate", "Corpus:notes"}, kinds)
			assert.Equal(t, "resynthesize", lin.Lineage[1].Job.Kind)
			assert.Equal(t, float64(7), lin.Lineage[1].Parameters["seed"])
			require.NotNil(t, lin.Lineage[1].CodeVersion)

			var report struct{ CheckReport map[string]any }
			c.MustPost(`{ checkReport(corpus: "notes-surrogate") }`, &report)
			assert.NotEmpty(t, report.CheckReport["report"].(map[string]any)["namePatterns"])
			assert.Equal(t, []any{report.CheckReport["job"]}, report.CheckReport["runs"], "one run, the report's")
			var none struct{ CheckReport map[string]any }
			err = c.Post(`{ checkReport(corpus: "notes-surrogate", job: 99999) }`, &none)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "job 99999 did not resynthesize into corpus")

			var maps struct {
				SurrogateMappings []struct{ Scope, Type, Original, Surrogate string }
			}
			c.MustPost(`{ surrogateMappings(corpus: "notes", first: 500) { scope type original surrogate } }`, &maps)
			require.NotEmpty(t, maps.SurrogateMappings)
			for _, m := range maps.SurrogateMappings {
				assert.NotEqual(t, m.Original, m.Surrogate, "%s %s", m.Scope, m.Type)
			}
			// The surrogate corpus's name stands for its source: the same mappings.
			var bySurrogate struct {
				SurrogateMappings []struct{ Scope, Type, Original, Surrogate string }
			}
			c.MustPost(`{ surrogateMappings(corpus: "notes-surrogate", first: 500) { scope type original surrogate } }`, &bySurrogate)
			assert.Equal(t, maps.SurrogateMappings, bySurrogate.SurrogateMappings)
			var wrong struct{ SurrogateMappings []any }
			err = c.Post(`{ surrogateMappings(corpus: "notes-surogate") { scope } }`, &wrong)
			assert.ErrorContains(t, err, `did you mean notes-surrogate?`)

			// The surrogate corpus is a real corpus: its gold scores 1 against itself.
			var ev struct{ StartEvaluation struct{ ID string } }
			c.MustPost(`mutation { startEvaluation(input: {corpus: "notes-surrogate", gold: "gold", system: "gold"}) { id } }`, &ev)
			done := follow(t, ts.Config.Handler, ts.Token, ev.StartEvaluation.ID)
			require.Equal(t, "succeeded", done[len(done)-1].Status, done[len(done)-1].Error)
			var evals struct {
				Evaluations struct {
					Edges []struct {
						Node struct {
							ID        string
							F1        float64
							Precision float64
							Report    map[string]any
						}
					}
				}
			}
			c.MustPost(`{ evaluations { edges { node { id f1 precision report } } } }`, &evals)
			require.Len(t, evals.Evaluations.Edges, 1)
			e := evals.Evaluations.Edges[0].Node
			assert.Equal(t, 1.0, e.F1)
			assert.Equal(t, "i2b2", e.Report["metric"])

			var cmp struct{ CompareEvaluations map[string]any }
			c.MustPost(`query($a: ID!) { compareEvaluations(a: $a, b: $a, shuffles: 99, bootstrap: 50) }`, &cmp, client.Var("a", e.ID))
			for _, test := range cmp.CompareEvaluations["tests"].([]any) {
				assert.Equal(t, 1.0, test.(map[string]any)["p"], "a system against itself")
			}

			// Export as a job; the artifact downloads as a zip.
			var ex struct{ StartExport struct{ ID string } }
			c.MustPost(`mutation { startExport(corpus: "notes-surrogate") { id } }`, &ex)
			exDone := follow(t, ts.Config.Handler, ts.Token, ex.StartExport.ID)
			res := exDone[len(exDone)-1].Result
			resp, err := ts.get("/download/artifacts/" + formatID(res["artifact"]))
			require.NoError(t, err)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			members, err := formats.Unzip("x.zip", body)
			require.NoError(t, err)
			assert.Len(t, members, len(docs))
			assert.Equal(t, res["sha256"], strings.Trim(resp.Header.Get("ETag"), `"`))
			// HEAD: the headers, without reading the file.
			head, err := ts.request("HEAD", "/download/artifacts/"+formatID(res["artifact"]))
			require.NoError(t, err)
			head.Body.Close()
			assert.Equal(t, http.StatusOK, head.StatusCode)
			assert.Equal(t, int64(len(body)), head.ContentLength)

			// Each job's output is its kind's type, with the figures its
			// result holds.
			var typed struct {
				Jobs struct {
					Edges []struct {
						Node struct{ Output map[string]any }
					}
				}
			}
			c.MustPost(`{ jobs { edges { node { output { __typename
				... on ResynthesizeOutput { corpusName documents check { ok leaks } checkReport }
				... on EvaluateOutput { evaluation f1 }
				... on ExportOutput { artifact sha256 files } } } } } }`, &typed)
			outputs := map[string]map[string]any{}
			for _, e := range typed.Jobs.Edges {
				outputs[e.Node.Output["__typename"].(string)] = e.Node.Output
			}
			require.Len(t, outputs, 3, "%v", outputs)
			assert.Equal(t, "notes-surrogate", outputs["ResynthesizeOutput"]["corpusName"])
			assert.EqualValues(t, len(docs), outputs["ResynthesizeOutput"]["documents"])
			assert.Equal(t, map[string]any{"ok": true, "leaks": float64(0)}, outputs["ResynthesizeOutput"]["check"])
			assert.Equal(t, last.Result["checkReport"], outputs["ResynthesizeOutput"]["checkReport"])
			assert.Equal(t, 1.0, outputs["EvaluateOutput"]["f1"])
			assert.Equal(t, e.ID, formatID(outputs["EvaluateOutput"]["evaluation"]))
			assert.Equal(t, res["artifact"], outputs["ExportOutput"]["artifact"])
			assert.Equal(t, res["sha256"], outputs["ExportOutput"]["sha256"])
			assert.EqualValues(t, len(docs), outputs["ExportOutput"]["files"])

			// Jobs are listed and filtered.
			var list struct {
				Jobs struct{ TotalCount int }
			}
			c.MustPost(`{ jobs(where: {status: succeeded}) { totalCount } }`, &list)
			assert.Equal(t, 3, list.Jobs.TotalCount)

			// Finished jobs cannot be cancelled.
			var ignored map[string]any
			err = c.Post(`mutation($id: ID!) { cancelJob(id: $id) { id } }`, &ignored, client.Var("id", ex.StartExport.ID))
			assert.ErrorContains(t, err, "conflict")
		})
	}
}

func formatID(v any) string {
	return strconv.Itoa(int(v.(float64)))
}

// TestJobSubscriptionOverSSE follows a job with server-sent events, for
// clients without websockets.
func TestJobSubscriptionOverSSE(t *testing.T) {
	st, _, c := newServer(t, storetest.SQLite)
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(context.Background(), store.ImportOptions{Corpus: "c"}, files)
	require.NoError(t, err)
	var ex struct{ StartExport struct{ ID string } }
	c.MustPost(`mutation { startExport(corpus: "c") { id } }`, &ex)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sse := c.SSE(ctx, `subscription($id: ID!) { job(id: $id) { status progressDone progressTotal } }`, client.Var("id", ex.StartExport.ID))
	defer sse.Close()
	var statuses []string
	for {
		var resp map[string]any
		require.NoError(t, sse.Next(&resp))
		require.Nil(t, resp["errors"])
		status := resp["data"].(map[string]any)["job"].(map[string]any)["status"].(string)
		statuses = append(statuses, status)
		if status == "succeeded" {
			break
		}
	}
	assert.Equal(t, "succeeded", statuses[len(statuses)-1])
}

// deriveCorpus as a job: it makes the corpus the synchronous mutation
// makes, with progress; a taken name and a mapping that does not parse are
// the request's errors, not failed jobs.
func TestStartDerive(t *testing.T) {
	st, ts, c := newServer(t, storetest.SQLite)
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(context.Background(), store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, files)
	require.NoError(t, err)
	var sync struct {
		DeriveCorpus struct{ Documents, Spans int }
	}
	c.MustPost(`mutation { deriveCorpus(corpus: "c", out: "c-sync", mapping: "i2b2-hipaa") { documents spans } }`, &sync)

	var started struct{ StartDerive struct{ ID string } }
	c.MustPost(`mutation { startDerive(corpus: "c", out: "c-job", mapping: "i2b2-hipaa") { id } }`, &started)
	states := follow(t, ts.Config.Handler, ts.Token, started.StartDerive.ID)
	last := states[len(states)-1]
	require.Equal(t, "succeeded", last.Status, last.Error)
	assert.Equal(t, "c-job", last.Result["corpusName"])
	assert.EqualValues(t, sync.DeriveCorpus.Documents, last.Result["documents"])
	assert.EqualValues(t, sync.DeriveCorpus.Spans, last.Result["spans"])
	assert.Positive(t, last.Result["dropped"])
	got, err := st.Statistics(context.Background(), "c-job", "gold", nil)
	require.NoError(t, err)
	want, err := st.Statistics(context.Background(), "c-sync", "gold", nil)
	require.NoError(t, err)
	assert.Equal(t, want.Spans, got.Spans)

	var ignored map[string]any
	err = c.Post(`mutation { startDerive(corpus: "c", out: "c-job", mapping: "i2b2-hipaa") { id } }`, &ignored)
	assert.ErrorContains(t, err, `a corpus named \"c-job\" exists`)
	assert.ErrorContains(t, err, `"code":"conflict"`)
	err = c.Post(`mutation($m: String!) { startDerive(corpus: "c", out: "c-bad", mappingText: $m) { id } }`, &ignored,
		client.Var("m", "@default drop\nDATE\n"))
	assert.ErrorContains(t, err, "uploaded:2")
}
