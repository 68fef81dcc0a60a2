package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestStatisticsGroupings checks every grouping of the statistics against
// counts made here from the generated documents, for a set imported with the
// documents and for a layer added later over some of them by an import that
// names another split (the documents keep theirs). Then it drops the spans'
// copies of their document's split and note type, as a database from before
// them, and checks that reopening the store restores the same figures.
func TestStatisticsGroupings(t *testing.T) {
	var docs []pipeline.Document
	splits := []string{"train", "dev", "test", ""}
	require.NoError(t, synth.Generate(synth.Options{Patients: 40, Seed: 11}, func(p synth.Patient) error {
		for _, d := range p.Docs {
			d.Split = splits[len(docs)%len(splits)]
			docs = append(docs, d)
		}
		return nil
	}))
	// The later layer: every other document's spans, a few dropped.
	var layer []pipeline.Document
	for i, d := range docs {
		if i%2 == 0 {
			d.Spans = d.Spans[:len(d.Spans)/2]
			layer = append(layer, d)
		}
	}
	groupings := [][]store.Dimension{
		{store.BySplit}, {store.ByNoteType}, {store.BySplit, store.ByNoteType}, {store.ByNoteType, store.BySplit},
		{store.ByCategory, store.ByType}, {store.ByType, store.ByCategory}, {store.ByCategory, store.ByType, store.BySplit},
		{store.ByType, store.ByNoteType},
	}
	check := func(t *testing.T, s *store.Store, set string, docs []pipeline.Document) {
		t.Helper()
		texts := map[string]bool{}
		for _, d := range docs {
			for _, sp := range d.Spans {
				texts[sp.Text] = true
			}
		}
		for _, by := range groupings {
			st, err := s.Statistics(context.Background(), "c", set, by)
			require.NoError(t, err)
			want := expectedGroups(docs, by)
			require.NotEmpty(t, want)
			assert.Equal(t, want, st.Groups, "%s by %v", set, by)
			assert.Equal(t, len(texts), st.UniqueSpans, "%s: distinct texts", set)
		}
		// Counted again with runs of a few spans, each scan's pairs merged
		// back from many runs of its temporary file: the same figures.
		defer store.SetSpanRun(7)()
		for _, by := range groupings[:3] {
			st, err := s.CountStatistics(context.Background(), "c", set, by)
			require.NoError(t, err)
			assert.Equal(t, expectedGroups(docs, by), st.Groups, "%s by %v, in runs of 7", set, by)
			assert.Equal(t, len(texts), st.UniqueSpans, "%s: distinct texts, in runs of 7", set)
		}
	}
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, b)
			s, err := store.Open(ctx, dsn, storetest.SharedKey())
			require.NoError(t, err)
			_, err = s.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, docs)
			require.NoError(t, err)
			_, err = s.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", Set: "system", Split: "test"}, layer)
			require.NoError(t, err)
			check(t, s, "gold", docs)
			check(t, s, "system", layer)
			// A set without spans.
			bare := slices.Clone(docs[:3])
			for i := range bare {
				bare[i].Spans = nil
			}
			_, err = s.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", Set: "empty"}, bare)
			require.NoError(t, err)
			st, err := s.Statistics(ctx, "c", "empty", []store.Dimension{store.ByCategory, store.ByType})
			require.NoError(t, err)
			assert.Equal(t, []store.Group{}, st.Groups)
			assert.Zero(t, st.UniqueSpans)
			assert.Equal(t, len(docs), st.Documents)
			assert.Empty(t, st.Split)

			// A tagging run's output of one split counts that split's
			// documents and patients only: the others were never tagged.
			// Its provenance names the split as the user wrote it.
			c, err := s.CorpusByName(ctx, "c")
			require.NoError(t, err)
			tagged, err := s.BeginAnnotations(ctx, c, "tagged", "system", map[string]any{"source": "tagging", "split": "Dev"}, 0)
			require.NoError(t, err)
			var dev []pipeline.Document
			patients, spans := map[string]bool{}, 0
			for _, d := range docs {
				if d.Split == "dev" {
					dev = append(dev, d)
					patients[d.Patient] = true
					spans += len(d.Spans)
				}
			}
			require.NoError(t, s.AppendAnnotations(ctx, c, tagged, "", dev))
			_, err = s.FinishAnnotations(ctx, tagged)
			require.NoError(t, err)
			st, err = s.Statistics(ctx, "c", "tagged", []store.Dimension{store.BySplit})
			require.NoError(t, err)
			assert.Equal(t, "dev", st.Split)
			assert.Equal(t, len(dev), st.Documents)
			assert.Equal(t, len(patients), st.Patients)
			assert.Less(t, len(patients), 40)
			assert.Equal(t, spans, st.Spans)
			assert.Equal(t, 1.0, st.ShareWithPHI(), "every dev note holds PHI")
			require.Len(t, st.Splits, 1)
			assert.Equal(t, "dev", st.Splits[0].Name)
			// So does a comparison with it: its documents and tokens.
			cmp, err := s.CompareCorpora(ctx, store.CompareOptions{A: "c", SetA: "gold", B: "c", SetB: "tagged", By: store.ByType})
			require.NoError(t, err)
			tokens := 0
			for _, d := range dev {
				tokens += len(strings.Fields(d.Text))
			}
			assert.Equal(t, len(docs), cmp.A.Documents)
			assert.Equal(t, len(dev), cmp.B.Documents)
			assert.Equal(t, tokens, cmp.B.Tokens)
			assert.Equal(t, spans, cmp.B.Spans)

			for _, q := range []string{ // as an earlier version left it: no data upgrade recorded
				`ALTER TABLE spans DROP COLUMN split`,
				`ALTER TABLE spans DROP COLUMN note_type`,
				`DROP TABLE schema_steps`,
			} {
				_, err := s.DB.ExecContext(ctx, q)
				require.NoError(t, err, q)
			}
			require.NoError(t, s.Close())
			s, err = store.Open(ctx, dsn, storetest.SharedKey())
			require.NoError(t, err)
			defer s.Close()
			check(t, s, "gold", docs)
			check(t, s, "system", layer)
		})
	}
}

// expectedGroups counts the spans of docs per group of the dimensions, in
// the order Statistics gives them; a document's split, unless given, is
// unassigned.
func expectedGroups(docs []pipeline.Document, by []store.Dimension) []store.Group {
	type acc struct {
		total int
		texts map[string]bool
	}
	groups := map[string]*acc{}
	for _, d := range docs {
		split := d.Split
		if split == "" {
			split = "unassigned"
		}
		for _, sp := range d.Spans {
			keys := make([]string, len(by))
			for i, dim := range by {
				keys[i] = map[store.Dimension]string{store.ByCategory: sp.Category, store.ByType: sp.Type,
					store.BySplit: split, store.ByNoteType: d.NoteType}[dim]
			}
			k := strings.Join(keys, "\x00")
			if groups[k] == nil {
				groups[k] = &acc{texts: map[string]bool{}}
			}
			groups[k].total++
			groups[k].texts[sp.Text] = true
		}
	}
	out := []store.Group{}
	for k, a := range groups {
		out = append(out, store.Group{Keys: strings.Split(k, "\x00"), Total: a.total, Unique: len(a.texts)})
	}
	slices.SortFunc(out, func(a, b store.Group) int { return slices.Compare(a.Keys, b.Keys) })
	return out
}
