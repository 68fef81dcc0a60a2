package server_test

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// The deidentify mutation queues the one job, whose typed output states the
// model's held-out risk and the policy's ceiling as the job's result holds
// them.
func TestDeidentifyThroughGraphQL(t *testing.T) {
	st, ts, c := newServer(t, storetest.SQLite)
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 8, Seed: 5}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	_, err := st.ImportDocuments(context.Background(), store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014", Split: "train"}, docs)
	require.NoError(t, err)
	var train struct{ StartTraining struct{ ID string } }
	c.MustPost(`mutation { startTraining(input: {corpus: "notes", model: "m", config: {training: {max_iterations: 10}}}) { id } }`, &train)
	states := follow(t, ts.Config.Handler, ts.Token, train.StartTraining.ID)
	require.Equal(t, "succeeded", states[len(states)-1].Status, states[len(states)-1].Error)

	var start struct{ Deidentify struct{ ID string } }
	c.MustPost(`mutation { deidentify(input: {corpus: "notes", model: "m", out: "notes-deid", seed: 3, policy: {maxNoteLeakRate: 0.5}}) { id } }`, &start)
	states = follow(t, ts.Config.Handler, ts.Token, start.Deidentify.ID)
	last := states[len(states)-1]
	require.Contains(t, []string{"succeeded", "check_failed"}, last.Status, last.Error)
	var got struct {
		Jobs struct {
			Edges []struct {
				Node struct {
					Output struct {
						Typename        string `json:"__typename"`
						CorpusName      string
						Shareable       bool
						MaxNoteLeakRate *float64
						Tagging         struct{ SetName string }
						Risk            struct {
							Point          string
							NoteLeakRate   float64
							NoteLeakRateCI struct{ Low, High float64 }
						}
					}
				}
			}
		}
	}
	c.MustPost(`query($id: ID!) { jobs(where: {id: $id}) { edges { node { output { __typename
		... on DeidentifyOutput { corpusName shareable maxNoteLeakRate tagging { setName }
			risk { point noteLeakRate noteLeakRateCI { low high } } } } } } } }`, &got, client.Var("id", start.Deidentify.ID))
	require.Len(t, got.Jobs.Edges, 1)
	out := got.Jobs.Edges[0].Node.Output
	assert.Equal(t, "DeidentifyOutput", out.Typename)
	assert.Equal(t, "notes-deid", out.CorpusName)
	assert.Equal(t, "deidentify-"+start.Deidentify.ID, out.Tagging.SetName)
	assert.Equal(t, "privacy", out.Risk.Point)
	risk := last.Result["risk"].(map[string]any)
	assert.Equal(t, risk["noteLeakRate"], out.Risk.NoteLeakRate)
	assert.LessOrEqual(t, out.Risk.NoteLeakRateCI.Low, out.Risk.NoteLeakRate)
	require.NotNil(t, out.MaxNoteLeakRate)
	assert.Equal(t, 0.5, *out.MaxNoteLeakRate)
	assert.Equal(t, out.Risk.NoteLeakRate <= 0.5 && last.Status == "succeeded", out.Shareable)
}
