package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestStatisticsCacheFollowsWrites reads statistics through one store while
// another store on the same database (as another process would) writes to
// the corpus: every read gives what counting afresh gives.
func TestStatisticsCacheFollowsWrites(t *testing.T) {
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 12, Seed: 5}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	half := len(docs) / 2
	by := []store.Dimension{store.ByCategory, store.ByType}
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, b)
			reader, err := store.Open(ctx, dsn)
			require.NoError(t, err)
			defer reader.Close()
			writer, err := store.Open(ctx, dsn)
			require.NoError(t, err)
			defer writer.Close()
			fresh := func() *store.Statistics {
				t.Helper()
				st, err := reader.CountStatistics(ctx, "c", "gold", by)
				require.NoError(t, err)
				return st
			}
			read := func() *store.Statistics {
				t.Helper()
				st, err := reader.Statistics(ctx, "c", "gold", by)
				require.NoError(t, err)
				return st
			}

			_, err = writer.ImportDocuments(ctx, store.ImportOptions{Corpus: "c"}, docs[:half])
			require.NoError(t, err)
			first := read()
			assert.Equal(t, half, first.Documents)
			// A caller changing its result changes nobody else's.
			first.Groups[0].Total = -1
			first.Groups[0].Keys[0] = "changed"
			assert.Equal(t, fresh(), read())

			_, err = writer.ImportDocuments(ctx, store.ImportOptions{Corpus: "c"}, docs[half:])
			require.NoError(t, err)
			second := read()
			assert.Equal(t, len(docs), second.Documents)
			assert.Equal(t, fresh(), second)

			// Replacing documents (a text changed, its spans gone) is a write too.
			changed := docs[0]
			changed.Text += " "
			changed.Spans = nil
			_, err = writer.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", Replace: true}, []pipeline.Document{changed})
			require.NoError(t, err)
			third := read()
			assert.Equal(t, second.Spans-len(docs[0].Spans), third.Spans)
			assert.Equal(t, fresh(), third)
		})
	}
}
