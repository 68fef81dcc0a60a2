package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent/schema"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/release"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

func TestReleases(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b)
			files, err := formats.ReadPaths("../testdata/i2b2")
			require.NoError(t, err)
			_, err = st.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014", Split: "train"}, files)
			require.NoError(t, err)

			r1, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "demo", Version: "1.0.0"})
			require.NoError(t, err)
			assert.Equal(t, 3, r1.Documents)
			assert.Equal(t, 13, r1.Spans)
			assert.Contains(t, r1.Datasheet, "# demo@1.0.0")
			assert.Contains(t, r1.Datasheet, "| NAME | DOCTOR | 2 | 2 |")

			// The same content gives the same root hash.
			r1b, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "demo-copy", Version: "1.0.0"})
			require.NoError(t, err)
			assert.Equal(t, r1.RootHash, r1b.RootHash)

			// Releases cannot be altered or deleted.
			err = st.Client.Release.UpdateOneID(r1.ID).Exec(ctx) // every field is immutable: no setters exist
			assert.ErrorIs(t, err, schema.ErrReleaseImmutable)
			err = st.Client.Release.DeleteOneID(r1.ID).Exec(ctx)
			assert.ErrorIs(t, err, schema.ErrReleaseImmutable)
			_, err = st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "demo", Version: "1.0.0"})
			assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))

			// A relabel and a new document: a new root hash and an exact diff.
			changed := append([]formats.File(nil), files...)
			changed[0].Data = []byte(strings.Replace(string(changed[0].Data), `TYPE="HOSPITAL"`, `TYPE="ORGANIZATION"`, 1))
			_, err = st.Import(ctx, store.ImportOptions{Corpus: "c", Split: "train", Replace: true}, changed[:1])
			require.NoError(t, err)
			extra := formats.File{Name: "103-01.xml", Data: []byte(strings.Replace(string(files[2].Data), "Fecha", "Fechas", 1))}
			extra.Data = []byte(strings.NewReplacer(`start="7" end="17"`, `start="8" end="18"`, `start="29" end="39"`, `start="30" end="40"`,
				`start="41" end="48"`, `start="42" end="49"`, `start="50" end="68"`, `start="51" end="69"`).Replace(string(extra.Data)))
			_, err = st.Import(ctx, store.ImportOptions{Corpus: "c", Split: "train"}, []formats.File{extra})
			require.NoError(t, err)
			_, err = st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "demo", Version: "0.9.0", Parent: "demo@1.0.0"})
			assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "a child's version must come after its parent's")
			r2, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "demo", Version: "1.1.0", Parent: "demo@1.0.0"})
			require.NoError(t, err)
			assert.NotEqual(t, r1.RootHash, r2.RootHash)
			d, err := st.DiffReleases(ctx, "demo@1.0.0", "demo@1.1.0")
			require.NoError(t, err)
			assert.Equal(t, []string{"103-01"}, d.DocumentsAdded)
			assert.Empty(t, d.DocumentsRemoved)
			assert.Empty(t, d.DocumentsChanged)
			require.Len(t, d.SpansRelabelled, 1)
			assert.Equal(t, release.SpanChange{Set: "gold", Document: "101-01", Start: 62, End: 77, Text: "Fairview Clinic", Type: "ORGANIZATION", WasType: "HOSPITAL"}, d.SpansRelabelled[0])
			assert.Len(t, d.SpansAdded, 4)
			assert.Empty(t, d.SpansRemoved)

			// The archive verifies, and re-imports to the same statistics.
			for _, format := range []string{"i2b2", "brat", "jsonl"} {
				arch, err := st.ExportRelease(ctx, "demo@1.1.0", format)
				require.NoError(t, err)
				v, err := release.Verify(arch)
				require.NoError(t, err, format)
				assert.Equal(t, r2.RootHash, v.Root)
				var gold []formats.File
				for _, f := range arch {
					if name, ok := strings.CutPrefix(f.Name, "gold/"); ok {
						gold = append(gold, formats.File{Name: name, Data: f.Data})
					}
				}
				_, err = st.Import(ctx, store.ImportOptions{Corpus: "re-" + format, Format: format, TagSet: "i2b2-2014", Split: "train"}, gold)
				require.NoError(t, err, format)
				by := []store.Dimension{store.ByType}
				want, _ := st.Statistics(ctx, "c", "gold", by)
				got, err := st.Statistics(ctx, "re-"+format, "gold", by)
				require.NoError(t, err)
				assert.Equal(t, want.Groups, got.Groups, format)
				assert.Equal(t, want.Spans, got.Spans, format)
			}

			// Original text is never released for outside sharing.
			_, err = st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "public", Version: "1.0.0", Share: true})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "original text")
		})
	}
}

func TestLineageOfATaggedEvaluation(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, files)
	require.NoError(t, err)
	c, _ := st.CorpusByName(ctx, "c")
	docs, err := st.LoadDocuments(ctx, c, "gold")
	require.NoError(t, err)
	m, err := st.RegisterExternalModel(ctx, "ext", "http://127.0.0.1:1/tag", nil, "")
	require.NoError(t, err)
	_, err = st.SaveAnnotations(ctx, c, "system-ext", "system", map[string]any{"model": "ext"}, 0, docs)
	require.NoError(t, err)
	report, err := evaluate.Evaluate(docs, docs, evaluate.Options{})
	require.NoError(t, err)
	ev, err := st.SaveEvaluation(ctx, store.EvaluationInput{CorpusID: c.ID, Gold: "gold", System: "system-ext", Report: report})
	require.NoError(t, err)
	steps, err := st.Lineage(ctx, ev.ID)
	require.NoError(t, err)
	var got []string
	for _, s := range steps {
		got = append(got, s.Kind+":"+s.Name)
	}
	assert.Equal(t, []string{"Evaluation:system-ext vs gold", "AnnotationSet:system-ext", "Model:ext", "Corpus:c", "AnnotationSet:gold"}, got)
	assert.Equal(t, m.Name, steps[2].Name)
}
