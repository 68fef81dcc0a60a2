package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	entdocument "deidcorpus/ent/document"
	entspan "deidcorpus/ent/span"
	"deidcorpus/internal/keys"
	"deidcorpus/pipeline"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestUpgradeTypesCorpusState: a database made before corpora had an
// origin, a source and a state, which their provenance said by markers
// ("inProgress", "unfinishedImport", "demoJobs"), gets them when it is
// opened, once: the data upgrades are recorded, and run again on no later
// start. The markers leave the provenance; what people read stays.
func TestUpgradeTypesCorpusState(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, b)
			ring := keys.New()
			open := func() *store.Store {
				st, err := store.Open(ctx, dsn, store.WithKeyRing(ring))
				require.NoError(t, err)
				return st
			}
			st := open()
			steps := func() []string {
				rows, err := st.DB.QueryContext(ctx, `SELECT name FROM schema_steps ORDER BY name`)
				require.NoError(t, err)
				defer rows.Close()
				var out []string
				for rows.Next() {
					var n string
					require.NoError(t, rows.Scan(&n))
					out = append(out, n)
				}
				require.NoError(t, rows.Err())
				return out
			}
			recorded := steps()
			assert.Contains(t, recorded, "type-corpus-state", "a new database records every step")

			src, err := st.Client.Corpus.Create().SetName("src").SetProvenance(map[string]any{"source": "import", "format": "i2b2"}).Save(ctx)
			require.NoError(t, err)
			since := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			old := map[string]map[string]any{
				"src-r": {"source": "resynthesis", "from": "src", "fromID": src.ID, "seed": 7, "inProgress": map[string]any{
					"job": 5, "since": since.Format(time.RFC3339Nano), "redo": true, "redone": []string{"p1"}, "status": "passed",
					"findings": 0, "created": false}},
				"src-d":   {"source": "derived", "from": "src", "fromID": src.ID, "unfinishedImport": "2026-12-01T09:00:00Z"},
				"demo":    {"source": "synth", "note": "synthetic", "demoJobs": true},
				"synth":   {"source": "synth"},
				"created": {"source": "created"},
			}
			for name, prov := range old {
				_, err := st.Client.Corpus.Create().SetName(name).SetKind(corpus.KindSurrogate).SetProvenance(prov).Save(ctx)
				require.NoError(t, err)
			}
			// The columns as an earlier version left them: defaults, and no
			// data upgrade recorded.
			for _, q := range []string{`UPDATE corpora SET origin = 'import', state = 'ready', source_id = NULL, resynthesis = NULL`,
				`DROP TABLE schema_steps`} {
				_, err := st.DB.ExecContext(ctx, q)
				require.NoError(t, err)
			}
			require.NoError(t, st.Close())

			st = open()
			assert.Equal(t, recorded, steps(), "every step applied and recorded")
			get := func(name string) *ent.Corpus {
				c, err := st.CorpusByName(ctx, name)
				require.NoError(t, err)
				return c
			}
			r := get("src-r")
			assert.Equal(t, corpus.OriginResynthesis, r.Origin)
			assert.Equal(t, corpus.StateResynthesizing, r.State)
			require.NotNil(t, r.SourceID)
			assert.Equal(t, src.ID, *r.SourceID)
			run := store.InProgress(r)
			require.NotNil(t, run)
			assert.Equal(t, 5, run.Job)
			assert.True(t, run.Since.Equal(since))
			assert.Equal(t, []string{"p1"}, run.Redone)
			assert.True(t, run.Redo)
			assert.NotContains(t, r.Provenance, "inProgress")
			assert.Equal(t, "src", r.Provenance["from"], "what people read stays")

			d := get("src-d")
			assert.Equal(t, corpus.OriginDerived, d.Origin)
			assert.Equal(t, corpus.StateImporting, d.State)
			require.NotNil(t, d.SourceID)
			assert.Equal(t, src.ID, *d.SourceID)
			assert.NotContains(t, d.Provenance, "unfinishedImport")
			_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "src-d"},
				[]pipeline.Document{{ID: "n1", Patient: "p1", Text: "text"}})
			assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "the unfinished import is still refused: %v", err)

			demo := get("demo")
			assert.Equal(t, corpus.OriginDemo, demo.Origin)
			assert.Equal(t, map[string]any{"source": "synth", "note": "synthetic"}, demo.Provenance)
			assert.Equal(t, corpus.OriginSynth, get("synth").Origin)
			assert.Equal(t, corpus.OriginCreated, get("created").Origin)
			s := get("src")
			assert.Equal(t, corpus.OriginImport, s.Origin)
			assert.Equal(t, corpus.StateReady, s.State)
			assert.Nil(t, s.SourceID)

			// Applied once: a later start does not run the step again.
			_, err = st.DB.ExecContext(ctx, `UPDATE corpora SET origin = 'import' WHERE name = 'demo'`)
			require.NoError(t, err)
			require.NoError(t, st.Close())
			st = open()
			defer st.Close()
			assert.Equal(t, corpus.OriginImport, get("demo").Origin)
		})
	}
}

// TestUpgradeRenumbersSurrogateSpanIDs: a surrogate corpus written before
// resynthesis numbered its spans anew holds its source's span ids, free text
// that may name the patient; opening the database gives them the ids a run
// now gives (T1, T2, ... in text order), and leaves an original corpus's.
func TestUpgradeRenumbersSurrogateSpanIDs(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, b)
			ring := keys.New()
			open := func() *store.Store {
				st, err := store.Open(ctx, dsn, store.WithKeyRing(ring))
				require.NoError(t, err)
				return st
			}
			st := open()
			doc := func() []pipeline.Document {
				d := pipeline.Document{ID: "n1", Patient: "p1", Text: "Harlan Valdez seen 03/12/2021.", Spans: []pipeline.Span{
					{ID: "P9", Start: 19, End: 29, Category: "DATE", Type: "DATE"},
					{ID: "Harlan Valdez MRN 4471123", Start: 0, End: 13, Category: "NAME", Type: "PATIENT"},
				}}
				d.FillText()
				return []pipeline.Document{d}
			}
			for _, name := range []string{"orig", "old-surrogate"} {
				_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: name, TagSet: "i2b2-2014"}, doc())
				require.NoError(t, err)
			}
			_, err := st.Client.Corpus.Update().Where(corpus.Name("old-surrogate")).SetKind(corpus.KindSurrogate).Save(ctx)
			require.NoError(t, err)
			_, err = st.DB.ExecContext(ctx, `DELETE FROM schema_steps WHERE name = 'renumber-surrogate-span-ids'`)
			require.NoError(t, err)
			require.NoError(t, st.Close())

			st = open()
			defer st.Close()
			ids := func(name string) map[string]string { // span text -> id
				out := map[string]string{}
				c, err := st.CorpusByName(ctx, name)
				require.NoError(t, err)
				spans, err := st.Client.Span.Query().Where(entspan.HasDocumentWith(entdocument.CorpusID(c.ID))).All(ctx)
				require.NoError(t, err)
				for _, s := range spans {
					out[s.Text] = s.SourceID
				}
				return out
			}
			assert.Equal(t, map[string]string{"Harlan Valdez": "T1", "03/12/2021": "T2"}, ids("old-surrogate"))
			assert.Equal(t, map[string]string{"Harlan Valdez": "Harlan Valdez MRN 4471123", "03/12/2021": "P9"}, ids("orig"))
		})
	}
}
