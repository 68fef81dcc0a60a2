package store_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent/document"
	"deidcorpus/ent/documentprogress"
	"deidcorpus/ent/model"
	"deidcorpus/ent/user"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
	"deidcorpus/pipeline/tagger"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// The queue holds the set's notes not yet done, the model's most doubtful
// first: a note whose name and date slots hold words no note has comes
// before the notes the model was trained on, and the scores are the
// tagger's own. Researchers get nothing; an external model and a bad page
// size are refused with what to do.
func TestAnnotationQueue(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) { testAnnotationQueue(t, b) })
	}
}

func testAnnotationQueue(t *testing.T, b storetest.Backend) {
	ctx := context.Background()
	st := storetest.Open(t, b)
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 4, Seed: 5}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	cfg := tagger.DefaultConfig()
	cfg.Training.MaxIterations = 20
	tm, err := tagger.Train(ctx, docs, cfg, nil)
	require.NoError(t, err)
	var artifact bytes.Buffer
	require.NoError(t, tm.Save(&artifact))
	hard := pipeline.Document{ID: "hard", Patient: "zz", Text: "Name: Qzwvx Blorftk\nMRN: QX-77Z\nSeen by Drqelm Vxuak on Zorbu 7 2391.\n"}
	all := append(slices.Clone(docs), hard)
	_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014", Split: "train"}, all)
	require.NoError(t, err)
	c, err := st.CorpusByName(ctx, "c")
	require.NoError(t, err)
	_, err = st.Client.Model.Create().SetName("crf").SetKind(model.KindCrf).SetArtifact(artifact.Bytes()).SetHash(tm.Hash()).
		SetTrainingCorpus(c.Name).SetTrainingCorpusID(c.ID).Save(ctx)
	require.NoError(t, err)
	_, err = st.Client.Model.Create().SetName("ext").SetKind(model.KindExternal).SetEndpoint("http://127.0.0.1:9/").Save(ctx)
	require.NoError(t, err)
	ann, err := st.Client.User.Create().SetName("ann").SetRole(user.RoleAnnotator).AddAssignedCorporaIDs(c.ID).Save(ctx)
	require.NoError(t, err)
	curator := auth.NewContext(ctx, auth.NewViewer(0, "carl", auth.Curator))
	sets, err := st.AssignDocuments(curator, store.Assignment{Corpus: "c", Set: "b", Annotators: []string{"ann"}, Split: "train"})
	require.NoError(t, err)
	set := sets[0]
	done := st.Client.Document.Query().Where(document.ExternalID(docs[0].ID)).OnlyIDX(ctx)
	_, err = st.SetDocumentStatus(curator, set.ID, done, 0, documentprogress.StatusDone)
	require.NoError(t, err)

	queue, err := st.AnnotationQueue(curator, "c", set.Name, "crf", 1000)
	require.NoError(t, err)
	require.Len(t, queue, len(all)-1, "every note but the one done")
	// The gold set, which nobody was assigned notes of: every note is open.
	gold, err := st.AnnotationQueue(curator, "c", "gold", "crf", 1000)
	require.NoError(t, err)
	require.Len(t, gold, len(all), "every note of a set without assignments")
	assert.Equal(t, "hard", gold[0].Document.ExternalID)
	assert.Equal(t, "hard", queue[0].Document.ExternalID, "the unfamiliar note first")
	want, err := tm.Uncertainty(ctx, all, 1)
	require.NoError(t, err)
	byID := map[string]tagger.Uncertainty{}
	for i, d := range all {
		byID[d.ID] = want[i]
	}
	for i, q := range queue {
		assert.NotEqual(t, done, q.Document.ID, "a note marked done is not queued")
		assert.Equal(t, documentprogress.StatusTodo, q.Status)
		assert.InDelta(t, byID[q.Document.ExternalID].Entropy, q.Entropy, 1e-9, q.Document.ExternalID)
		assert.Equal(t, byID[q.Document.ExternalID].Tokens, q.Tokens)
		assert.NotEmpty(t, q.Document.Text)
		if i > 0 {
			assert.GreaterOrEqual(t, queue[i-1].Entropy, q.Entropy, "most uncertain first")
		}
	}
	t.Logf("hard %.3f nats over %d tokens; next %s %.3f over %d", queue[0].Entropy, queue[0].Tokens,
		queue[1].Document.ExternalID, queue[1].Entropy, queue[1].Tokens)
	top, err := st.AnnotationQueue(curator, "c", set.Name, "crf", 2)
	require.NoError(t, err)
	assert.Equal(t, []int{queue[0].Document.ID, queue[1].Document.ID}, []int{top[0].Document.ID, top[1].Document.ID})

	annotator := auth.NewContext(ctx, auth.NewViewer(ann.ID, "ann", auth.Annotator))
	_, err = st.AnnotationQueue(annotator, "c", set.Name, "crf", 5)
	assert.NoError(t, err, "an annotator of the corpus")
	researcher := auth.NewContext(ctx, auth.NewViewer(0, "rita", auth.Researcher))
	_, err = st.AnnotationQueue(researcher, "c", set.Name, "crf", 5)
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "a researcher does not see an original corpus")
	_, err = st.AnnotationQueue(curator, "c", set.Name, "ext", 5)
	assert.ErrorContains(t, err, "model ext is external; uncertainty needs a built-in (crf) model's marginals")
	_, err = st.AnnotationQueue(curator, "c", set.Name, "crf", 0)
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
}
