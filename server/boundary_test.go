package server_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/pipeline"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// boundaryCorpus is six patients' notes whose every field beside the PHI
// spans holds something real: hospital record numbers as note and patient
// ids, a creation date, a note type naming its patient, span comments that
// restate the patient's name and record number, and span ids that do too.
// Then issue 60's crafted notes: patient A's first note annotates "Harlan
// Valdez", a doctor and a clinic, A's second writes the surname alone,
// after a title and as a possessive, unannotated, and patient B's writes A's
// name, the doctor's surname and the clinic, unannotated; A, B and three
// more patients share the note type "Okafor clinic", which names the doctor.
func boundaryCorpus() []pipeline.Document {
	names := []string{"Rigoberto Zamacola", "Amparo Ybarrondo", "Mendieta Espinosa", "Lucía Garmendia", "Tomás Irigoyen", "Elena Urquijo"}
	var docs []pipeline.Document
	for i, name := range names {
		text := "Paciente " + name + " ingresa el 12/03/2021 por disnea."
		start := len([]rune("Paciente "))
		at := strings.Index(text, "12/03")
		docs = append(docs, pipeline.Document{
			ID: fmt.Sprintf("MRN-4471%d-ACC-9%d", i, i), Patient: fmt.Sprintf("MRN-4471%d", i), RecordOrder: 1,
			NoteType: "Informe de alta", Created: time.Date(2021, 3, 12, 9, 15, 0, 0, time.UTC), Text: text,
			Spans: []pipeline.Span{
				{ID: name + " MRN 99887766", Start: start, End: start + len([]rune(name)), Category: "NAME", Type: "PATIENT",
					Comment: "real name " + name + ", MRN 99887766"},
				{ID: "P1", Start: at, End: at + 10, Category: "DATE", Type: "DATE"},
			}})
	}
	docs[1].NoteType = "Alta de Amparo Ybarrondo"
	a1 := "Patient Harlan Valdez was admitted by Dr. Ines Okafor at Fairview Clinic."
	a2 := "Mr. Valdez is stable. Valdez's wife Rosalind Valdez visited."
	b1 := "Patient Tobias Brennan. Roommate Harlan Valdez was discharged. Seen by Dr. Okafor at Fairview Clinic."
	spanAt := func(text, value, category, typ string) pipeline.Span {
		start := len([]rune(text[:strings.Index(text, value)]))
		return pipeline.Span{ID: "Harlan Valdez MRN 4471123", Start: start, End: start + len([]rune(value)), Category: category, Type: typ}
	}
	docs = append(docs,
		pipeline.Document{ID: "A-1", Patient: "A", RecordOrder: 1, NoteType: "Okafor clinic", Text: a1, Spans: []pipeline.Span{
			spanAt(a1, "Harlan Valdez", "NAME", "PATIENT"), spanAt(a1, "Ines Okafor", "NAME", "DOCTOR"),
			spanAt(a1, "Fairview Clinic", "LOCATION", "HOSPITAL")}},
		pipeline.Document{ID: "A-2", Patient: "A", RecordOrder: 2, NoteType: "Okafor clinic", Text: a2},
		pipeline.Document{ID: "B-1", Patient: "B", RecordOrder: 1, NoteType: "Okafor clinic", Text: b1, Spans: []pipeline.Span{
			spanAt(b1, "Tobias Brennan", "NAME", "PATIENT")}})
	for i := range 3 {
		docs = append(docs, pipeline.Document{ID: fmt.Sprintf("MRN-4471%d-ACC-8", i), Patient: fmt.Sprintf("MRN-4471%d", i), RecordOrder: 2,
			NoteType: "Okafor clinic", Text: "Sin cambios."})
	}
	for i := range docs {
		docs[i].FillText()
	}
	return docs
}

// TestNothingRealReachesAResearcher: a corpus whose comments, note types,
// creation dates, ids and span ids hold real values, and whose gold misses
// names by their parts and in other patients' notes (issue 60), is
// resynthesized and released for sharing; a researcher reads the surrogate
// corpus, its provenance and lineage through GraphQL and downloads it and
// the release, and meets none of those values, nor the source corpus's name
// or the seed.
func TestNothingRealReachesAResearcher(t *testing.T) {
	st, ts, admin := newServer(t, storetest.SQLite)
	ctx := context.Background()
	docs := boundaryCorpus()
	_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "hospital-x-notes", TagSet: "i2b2-2014"}, docs)
	require.NoError(t, err)

	var started struct{ StartResynthesis struct{ ID string } }
	admin.MustPost(`mutation { startResynthesis(input: {corpus: "hospital-x-notes", out: "shared-notes", seed: 424242}) { id } }`, &started)
	states := follow(t, ts.Config.Handler, ts.Token, started.StartResynthesis.ID)
	require.Equal(t, "succeeded", states[len(states)-1].Status, states[len(states)-1].Error)
	admin.MustPost(`mutation { createRelease(input: {corpus: "shared-notes", name: "pub", version: "1.0.0", share: true}) { ref } }`, &map[string]any{})

	secrets := []string{"hospital-x-notes", "424242", "MRN-4471", "ACC-9", "ACC-8", "99887766", "Alta de Amparo", "2021-03-12",
		"Valdez", "Harlan", "Okafor", "Fairview", "Brennan"}
	for _, d := range docs {
		if len(d.Spans) > 0 {
			secrets = append(secrets, d.Spans[0].Text)
		}
	}
	assertClean := func(what, data string) {
		t.Helper()
		for _, s := range secrets {
			assert.NotContains(t, data, s, "%s shows %q to a researcher", what, s)
		}
	}

	researcher := client.New(ts.Config.Handler, client.Path("/graphql"),
		client.AddHeader("Authorization", "Bearer "+storetest.Token(t, st, "rita", auth.Researcher)))
	var read map[string]any
	researcher.MustPost(`{ corpusByName(name: "shared-notes") { id name provenance checkStatus
		documents(first: 100) { edges { node { externalID noteType created text patient { externalID }
			spans(first: 100) { edges { node { text comment type sourceID } } } } } }
		patients(first: 100) { edges { node { externalID } } } }
		releases(first: 10) { edges { node { name version provenance datasheet } } } }`, &read)
	asJSON := func(v any) string {
		data, err := json.Marshal(v)
		require.NoError(t, err)
		return string(data)
	}
	assertClean("GraphQL", asJSON(read))
	require.Contains(t, asJSON(read), `"noteType":"Informe de alta"`, "a note type five patients share is a category, kept")
	require.Contains(t, asJSON(read), `"noteType":"note"`)
	require.Contains(t, asJSON(read), "keyed hashes of its source's ids", "the datasheet says how the notes are named")

	var id struct{ CorpusByName struct{ ID string } }
	researcher.MustPost(`{ corpusByName(name: "shared-notes") { id } }`, &id)
	var lineage map[string]any
	researcher.MustPost(`query($id: ID!) { lineage(id: $id) { kind name provenance origin parameters job { id } } }`, &lineage, client.Var("id", id.CorpusByName.ID))
	assertClean("lineage", asJSON(lineage))
	// She is told how the corpus came, not from what or by which run.
	require.Contains(t, asJSON(lineage), `"origin":"resynthesis"`)
	require.Contains(t, asJSON(lineage), `"job":null`)

	// An annotator reads provenance and lineage as a researcher does: one
	// assigned the surrogate corpus, and one with no corpus reading the
	// shared release (issue 60: 7, 11).
	for _, assigned := range []bool{true, false} {
		name := map[bool]string{true: "anna", false: "nora"}[assigned]
		token := storetest.Token(t, st, name, auth.Annotator)
		if assigned {
			_, err := st.AssignCorpus(ctx, name, "shared-notes", true)
			require.NoError(t, err)
		}
		annotator := client.New(ts.Config.Handler, client.Path("/graphql"), client.AddHeader("Authorization", "Bearer "+token))
		var rels map[string]any
		annotator.MustPost(`{ releases(first: 10) { edges { node { provenance } } } }`, &rels)
		require.Contains(t, asJSON(rels), "provenance")
		assertClean(name+"'s releases", asJSON(rels))
		if assigned {
			var prov, lin map[string]any
			annotator.MustPost(`{ corpusByName(name: "shared-notes") { provenance } }`, &prov)
			assertClean(name+"'s provenance", asJSON(prov))
			annotator.MustPost(`query($id: ID!) { lineage(id: $id) { kind name provenance parameters } }`, &lin, client.Var("id", id.CorpusByName.ID))
			assertClean(name+"'s lineage", asJSON(lin))
			assert.NotContains(t, asJSON(lin), `"job"`, "no job id")
		}
	}

	// The annotation operations, tried as an attacker would: naming the
	// original corpus's gold set, one of its notes and spans by id (ids are
	// small numbers, easily guessed), and asking a surrogate note's state in
	// the original set. Every one is refused, and nothing real comes back.
	var orig struct {
		CorpusByName struct {
			AnnotationSets []struct{ ID string }
			Documents      struct {
				Edges []struct {
					Node struct {
						ID    string
						Spans struct {
							Edges []struct{ Node struct{ ID string } }
						}
					}
				}
			}
		}
	}
	admin.MustPost(`{ corpusByName(name: "hospital-x-notes") { annotationSets { id }
		documents(first: 1) { edges { node { id spans(first: 1) { edges { node { id } } } } } } } }`, &orig)
	origSet, origDoc := orig.CorpusByName.AnnotationSets[0].ID, orig.CorpusByName.Documents.Edges[0].Node
	var surrDoc struct {
		CorpusByName struct {
			Documents struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	researcher.MustPost(`{ corpusByName(name: "shared-notes") { documents(first: 1) { edges { node { id } } } } }`, &surrDoc)
	vars := []client.Option{client.Var("set", origSet), client.Var("doc", origDoc.ID), client.Var("span", origDoc.Spans.Edges[0].Node.ID),
		client.Var("surr", surrDoc.CorpusByName.Documents.Edges[0].Node.ID)}
	for _, q := range []string{
		`mutation($set: ID!, $doc: ID!) { addSpan(input: {set: $set, document: $doc, version: 0, start: 0, end: 20, type: "PATIENT"}) { span { text } } }`,
		`mutation($span: ID!) { changeSpan(input: {span: $span, version: 0, start: 0, end: 30}) { span { text } } }`,
		`mutation($span: ID!) { removeSpan(span: $span, version: 0) { state { version } } }`,
		`mutation($set: ID!, $doc: ID!) { undoEdit(set: $set, document: $doc, version: 0) { span { text } } }`,
		`mutation($set: ID!, $doc: ID!) { setDocumentStatus(set: $set, document: $doc, status: done, version: 0) { version } }`,
		`mutation($set: ID!, $span: ID!) { acceptSpan(span: $span, into: $set, version: 0) { span { text } } }`,
		`query($doc: ID!) { disagreements(corpus: "hospital-x-notes", sets: ["gold", "gold"], document: $doc, all: true) { sets { spans { text } } } }`,
		`{ agreement(corpus: "hospital-x-notes", sets: ["gold", "gold"]) { byType { type } } }`,
		`query($set: ID!, $surr: ID!) { node(id: $surr) { ... on Document { annotationState(set: $set) { version status } } } }`,
	} {
		resp, err := researcher.RawPost(q, vars...)
		require.NoError(t, err)
		require.NotEmpty(t, resp.Errors, "%s: a researcher is refused", q)
		assertClean(q, asJSON(resp.Data)+string(resp.Errors))
		assert.Regexp(t, `"code":"(forbidden|not_found)"`, string(resp.Errors), q)
	}

	token := storetest.Token(t, st, "rita2", auth.Researcher)
	for _, path := range []string{"/download/corpora/shared-notes?format=jsonl", "/download/corpora/shared-notes?format=i2b2",
		"/download/releases/pub@1.0.0?format=jsonl", "/download/releases/pub@1.0.0?format=brat"} {
		req, err := http.NewRequest("GET", ts.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
		z, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
		require.NoError(t, err)
		for _, f := range z.File {
			assertClean(path+" "+f.Name+" (name)", f.Name)
			r, err := f.Open()
			require.NoError(t, err)
			data, err := io.ReadAll(r)
			require.NoError(t, err)
			assertClean(path+" "+f.Name, string(data))
		}
	}

	// The curator still reads where the corpus came from.
	var full struct {
		CorpusByName struct{ Provenance map[string]any }
	}
	admin.MustPost(`{ corpusByName(name: "shared-notes") { provenance } }`, &full)
	assert.Equal(t, "hospital-x-notes", full.CorpusByName.Provenance["from"])
	assert.EqualValues(t, 424242, full.CorpusByName.Provenance["seed"])
}
