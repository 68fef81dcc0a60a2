package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/chunk"
	"deidcorpus/ent/schema"
	"deidcorpus/internal/keys"
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

			// The same content gives the same root hash. Creating and
			// exporting tell their progress, in documents, to the end.
			var created, exported [][2]int
			r1b, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "demo-copy", Version: "1.0.0",
				Sets: []string{"gold", "gold"}, Progress: func(done, total int) { created = append(created, [2]int{done, total}) }})
			require.NoError(t, err)
			assert.Equal(t, r1.RootHash, r1b.RootHash)
			assert.Equal(t, []string{"gold"}, r1b.Sets, "a set named twice is frozen once")
			require.NotEmpty(t, created)
			assert.Equal(t, [2]int{3, 3}, created[len(created)-1])
			var c formats.Collector
			require.NoError(t, st.ExportReleaseTo(ctx, "demo-copy@1.0.0", "brat", c.Create,
				func(done, total int) { exported = append(exported, [2]int{done, total}) }))
			require.NotEmpty(t, exported)
			assert.Equal(t, [2]int{3, 3}, exported[len(exported)-1])

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

			// The archive verifies, and re-imports, its format and tag set
			// read from its release.json, to the same statistics.
			for _, format := range []string{"i2b2", "brat", "jsonl"} {
				arch, err := st.ExportRelease(ctx, "demo@1.1.0", format)
				require.NoError(t, err)
				v, err := release.Verify(arch)
				require.NoError(t, err, format)
				assert.Equal(t, r2.RootHash, v.Root)
				res, err := st.ImportFrom(ctx, store.ImportOptions{Corpus: "re-" + format}, formats.Files(arch))
				require.NoError(t, err, format)
				assert.Equal(t, format, res.Format)
				assert.Equal(t, "i2b2-2014", res.Corpus.Tagset, format)
				assert.Equal(t, release.MetaFile, res.FromRelease, format)
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

// A release may name its documents and patients by keyed hashes: no source
// id is in its archive, every version of its line names a document alike,
// another line names it otherwise, and the archive verifies.
func TestReleaseWithPseudonymousIDs(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	_, err = st.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014", Split: "train"}, files)
	require.NoError(t, err)
	c, err := st.CorpusByName(ctx, "c")
	require.NoError(t, err)
	src, err := st.LoadDocuments(ctx, c, "gold")
	require.NoError(t, err)

	r1, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "p", Version: "1.0.0", PseudonymousIDs: true})
	require.NoError(t, err)
	assert.Contains(t, r1.Datasheet, "| document and patient ids | pseudonymous")
	assert.Equal(t, "pseudonymous", r1.Provenance["ids"])
	plain, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "plain", Version: "1.0.0"})
	require.NoError(t, err)
	assert.Contains(t, plain.Datasheet, "| document and patient ids | the corpus's own |")
	assert.NotEqual(t, plain.RootHash, r1.RootHash, "the content hashes cover the ids")

	ids := func(ref string) map[string]string { // document id -> patient id, from the archive
		pn, err := st.ExportRelease(ctx, ref, "physionet") // which numbers its patients
		require.NoError(t, err)
		_, err = release.Verify(pn)
		require.NoError(t, err, ref)
		arch, err := st.ExportRelease(ctx, ref, "jsonl")
		require.NoError(t, err)
		v, err := release.Verify(arch)
		require.NoError(t, err, ref)
		rel, err := st.ReleaseByRef(ctx, ref)
		require.NoError(t, err)
		assert.Equal(t, rel.RootHash, v.Root)
		out := map[string]string{}
		for _, f := range arch {
			if name, ok := strings.CutPrefix(f.Name, "gold/"); ok {
				docs, err := formats.ReadJSONL([]formats.File{{Name: name, Data: f.Data}}, formats.ReadOptions{})
				require.NoError(t, err)
				for _, d := range docs {
					out[d.ID] = d.Patient
				}
			}
			for _, d := range src {
				assert.NotContains(t, string(f.Data), `"`+d.ID+`"`, "%s: %s names source document %s", ref, f.Name, d.ID)
			}
		}
		return out
	}
	first := ids("p@1.0.0")
	require.Len(t, first, len(src))
	patients, srcPatients := map[string]bool{}, map[string]bool{}
	for id, p := range first {
		assert.Regexp(t, `^[1-9][0-9]{17}$`, id)
		patients[p] = true
	}
	for _, d := range src {
		srcPatients[d.Patient] = true
		assert.NotContains(t, patients, d.Patient)
	}
	assert.Len(t, patients, len(srcPatients), "each source patient is one release patient")

	// The next version of the line, made without asking, names them alike.
	r2, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "p", Version: "1.1.0", Parent: "p@1.0.0"})
	require.NoError(t, err)
	assert.Equal(t, r1.RootHash, r2.RootHash)
	assert.Equal(t, first, ids("p@1.1.0"))
	d, err := st.DiffReleases(ctx, "p@1.0.0", "p@1.1.0")
	require.NoError(t, err)
	assert.Empty(t, d.DocumentsAdded)
	assert.Empty(t, d.DocumentsChanged)

	// Another line's ids are unrelated; a line with the corpus's ids cannot
	// turn pseudonymous.
	other, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "q", Version: "1.0.0", PseudonymousIDs: true})
	require.NoError(t, err)
	assert.NotEqual(t, r1.RootHash, other.RootHash)
	for id := range ids("q@1.0.0") {
		assert.NotContains(t, first, id)
	}
	_, err = st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "plain", Version: "1.1.0", Parent: "plain@1.0.0", PseudonymousIDs: true})
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.ErrorContains(t, err, "keeps the corpus's own ids")
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

// TestReleaseSnapshotInChunks: a release's snapshot is stored in chunks,
// written before its release row and read back a chunk at a time; a creation
// that fails leaves none behind, a creation removes those abandoned long ago,
// and the snapshots of a database from before chunks are moved into them
// when the store opens it.
func TestReleaseSnapshotInChunks(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, b)
			st, err := store.Open(ctx, dsn, store.WithKeyRing(keys.New()))
			require.NoError(t, err)
			defer func() { st.Close() }()
			st.SetChunkSize(64)
			files, err := formats.ReadPaths("../testdata/i2b2")
			require.NoError(t, err)
			_, err = st.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014", Split: "train"}, files)
			require.NoError(t, err)
			r, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "demo", Version: "1.0.0"})
			require.NoError(t, err)
			chunks, err := st.Client.Chunk.Query().Where(chunk.ContentKey(r.ContentKey)).Count(ctx)
			require.NoError(t, err)
			assert.Greater(t, chunks, 3, "a snapshot of 3 notes in chunks of 64 bytes")
			verifies := func(st *store.Store) {
				t.Helper()
				arch, err := st.ExportRelease(ctx, "demo@1.0.0", "i2b2")
				require.NoError(t, err)
				v, err := release.Verify(arch)
				require.NoError(t, err)
				assert.Equal(t, r.RootHash, v.Root)
				assert.Equal(t, 3, v.Documents)
				d, err := st.DiffReleases(ctx, "demo@1.0.0", "demo@1.0.0")
				require.NoError(t, err)
				assert.True(t, d.Empty())
			}
			verifies(st)
			all := func() int {
				n, err := st.Client.Chunk.Query().Count(ctx)
				require.NoError(t, err)
				return n
			}

			// A creation that fails (the version exists) removes its chunks.
			_, err = st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "demo", Version: "1.0.0"})
			assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
			assert.Equal(t, chunks, all())

			// Chunks no release names are removed once they are old: those of
			// a creation that was killed; a recent one may be a creation in
			// progress.
			require.NoError(t, st.Client.Chunk.Create().SetContentKey("killed").SetSeq(0).SetData([]byte("x")).
				SetCreatedAt(time.Now().Add(-48*time.Hour)).Exec(ctx))
			require.NoError(t, st.Client.Chunk.Create().SetContentKey("writing").SetSeq(0).SetData([]byte("x")).Exec(ctx))
			// A creation writing for more than a day: its first chunk is old,
			// its last recent.
			require.NoError(t, st.Client.Chunk.Create().SetContentKey("long").SetSeq(0).SetData([]byte("x")).
				SetCreatedAt(time.Now().Add(-30*time.Hour)).Exec(ctx))
			require.NoError(t, st.Client.Chunk.Create().SetContentKey("long").SetSeq(1).SetData([]byte("x")).Exec(ctx))
			r2, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "c", Name: "demo", Version: "1.0.1"})
			require.NoError(t, err)
			assert.Equal(t, r.RootHash, r2.RootHash)
			killed, err := st.Client.Chunk.Query().Where(chunk.ContentKey("killed")).Exist(ctx)
			require.NoError(t, err)
			assert.False(t, killed)
			writing, err := st.Client.Chunk.Query().Where(chunk.ContentKey("writing")).Exist(ctx)
			require.NoError(t, err)
			assert.True(t, writing)
			long, err := st.Client.Chunk.Query().Where(chunk.ContentKey("long")).Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, 2, long, "a creation still writing keeps its first chunk")

			// A database from before chunks: the snapshot whole in a column of
			// the release row, and no content key (the migration adds it, and on
			// SQLite rebuilds the table without the column it does not know).
			var snapshot []byte
			rows, err := st.Client.Chunk.Query().Where(chunk.ContentKey(r.ContentKey)).
				Order(ent.Asc(chunk.FieldSeq)).All(ctx)
			require.NoError(t, err)
			for _, c := range rows {
				snapshot = append(snapshot, c.Data...)
			}
			blob, set := "BLOB", `UPDATE releases SET content = ? WHERE id = ?`
			if st.Dialect == dialect.Postgres {
				blob, set = "bytea", `UPDATE releases SET content = $1 WHERE id = $2`
			}
			_, err = st.DB.ExecContext(ctx, `ALTER TABLE releases ADD COLUMN content `+blob)
			require.NoError(t, err)
			_, err = st.DB.ExecContext(ctx, set, snapshot, r.ID)
			require.NoError(t, err)
			_, err = st.DB.ExecContext(ctx, `ALTER TABLE releases DROP COLUMN content_key`)
			require.NoError(t, err)
			_, err = st.DB.ExecContext(ctx, `DROP TABLE schema_steps`)
			require.NoError(t, err)
			_, err = st.Client.Chunk.Delete().Where(chunk.ContentKey(r.ContentKey)).Exec(ctx)
			require.NoError(t, err)
			require.NoError(t, st.Close())

			st, err = store.Open(ctx, dsn, store.WithKeyRing(keys.New()))
			require.NoError(t, err)
			verifies(st)
			_, err = st.DB.ExecContext(ctx, `SELECT content FROM releases`)
			assert.Error(t, err, "the content column is dropped once its snapshots are moved")
			_, err = st.DB.ExecContext(ctx, `SELECT id FROM release_content_legacy`)
			assert.Error(t, err, "and the table that held them meanwhile")
		})
	}
}

// A release follows only a release of its own corpus: its diff, datasheet
// and ids would otherwise compare unrelated notes.
func TestReleaseParentOfAnotherCorpus(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	for _, name := range []string{"a", "b"} {
		_, err = st.Import(ctx, store.ImportOptions{Corpus: name, TagSet: "i2b2-2014", Split: "train"}, files)
		require.NoError(t, err)
	}
	_, err = st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "a", Name: "v1", Version: "1.0.0"})
	require.NoError(t, err)

	_, err = st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "b", Name: "v2", Version: "1.0.0", Parent: "v1@1.0.0"})
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.EqualError(t, err, `parent: release "v1@1.0.0" is of corpus "a", not "b"`)
	_, err = st.ReleaseByRef(ctx, "v2@1.0.0")
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "nothing was released")

	_, err = st.CreateRelease(ctx, store.ReleaseOptions{Corpus: "a", Name: "v2", Version: "1.0.0", Parent: "v1@1.0.0"})
	require.NoError(t, err)
}
