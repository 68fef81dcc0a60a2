package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/stats"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestStatisticsCacheFollowsWrites reads statistics through one store while
// another store on the same database (as another process would) writes to
// the corpus: every read gives what counting afresh gives.
func TestStatisticsCacheFollowsWrites(t *testing.T) {
	docs := synthDocs(t, 12, 5)
	half := len(docs) / 2
	by := []store.Dimension{store.ByCategory, store.ByType}
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, b)
			reader, err := store.Open(ctx, dsn, storetest.SharedKey())
			require.NoError(t, err)
			defer reader.Close()
			writer, err := store.Open(ctx, dsn, storetest.SharedKey())
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

// TestStatisticsKeptInTheDatabase counts statistics in one store and reads
// them from others on the same database, as later processes would: they
// find the first's result without counting, until the corpus changes. A
// count of an older version never replaces a newer one, and the kept
// results go with their corpus.
func TestStatisticsKeptInTheDatabase(t *testing.T) {
	docs := synthDocs(t, 8, 3)
	half := len(docs) / 2
	by := []store.Dimension{store.BySplit, store.ByNoteType}
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, b)
			open := func() *store.Store { return openStore(t, dsn) }
			var setID int
			kept := func(s *store.Store) (version int, st store.Statistics) {
				t.Helper()
				var result []byte
				require.NoError(t, s.DB.QueryRowContext(ctx, `SELECT annotation_set_id, content_version, result FROM statistics_results WHERE measure LIKE 'statistics%'`).
					Scan(&setID, &version, &result))
				require.NoError(t, json.Unmarshal(result, &st))
				return version, st
			}
			first := open()
			_, err := first.ImportDocuments(ctx, store.ImportOptions{Corpus: "c"}, docs[:half])
			require.NoError(t, err)
			counted, err := first.Statistics(ctx, "c", "gold", by)
			require.NoError(t, err)
			assert.Equal(t, half, counted.Documents)
			version, st := kept(first)
			assert.Equal(t, *counted, st)

			// Marked in the database, the result shows it was read, not counted.
			marked := *counted
			marked.Documents = 1_000_000
			result, err := json.Marshal(marked)
			require.NoError(t, err)
			_, err = first.DB.ExecContext(ctx, first.Rebind(`UPDATE statistics_results SET result = ? WHERE measure LIKE 'statistics%'`), result)
			require.NoError(t, err)
			second := open()
			got, err := second.Statistics(ctx, "c", "gold", by)
			require.NoError(t, err)
			assert.Equal(t, 1_000_000, got.Documents)

			// So are the name patterns.
			c, err := first.CorpusByName(ctx, "c")
			require.NoError(t, err)
			patterns, err := first.NamePatterns(ctx, c, "gold")
			require.NoError(t, err)
			require.NotEmpty(t, patterns)
			mark := []stats.PatternCount{{Pattern: "Mark", Tokens: 1, Count: 7}}
			result, err = json.Marshal(mark)
			require.NoError(t, err)
			_, err = first.DB.ExecContext(ctx, first.Rebind(`UPDATE statistics_results SET result = ? WHERE measure = 'name patterns'`), result)
			require.NoError(t, err)
			got2, err := open().NamePatterns(ctx, c, "gold")
			require.NoError(t, err)
			assert.Equal(t, mark, got2)

			// A write to the corpus makes them stale everywhere.
			_, err = first.ImportDocuments(ctx, store.ImportOptions{Corpus: "c"}, docs[half:])
			require.NoError(t, err)
			fresh, err := second.CountStatistics(ctx, "c", "gold", by)
			require.NoError(t, err)
			got, err = second.Statistics(ctx, "c", "gold", by)
			require.NoError(t, err)
			assert.Equal(t, len(docs), got.Documents)
			assert.Equal(t, fresh, got)
			newer, st := kept(second)
			assert.Greater(t, newer, version)
			assert.Equal(t, *fresh, st)

			c, err = second.CorpusByName(ctx, "c")
			require.NoError(t, err)
			got2, err = second.NamePatterns(ctx, c, "gold")
			require.NoError(t, err)
			assert.NotEqual(t, mark, got2)
			assert.Greater(t, countPatterns(got2), countPatterns(patterns)) // the second half's names too

			// A slow count of the older version, kept after, changes nothing.
			first.KeepStatistics(ctx, setID, version, by, &marked)
			again, st := kept(first)
			assert.Equal(t, newer, again)
			assert.Equal(t, *fresh, st)

			require.NoError(t, first.DeleteCorpus(ctx, "c"))
			var rows int
			require.NoError(t, first.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM statistics_results`).Scan(&rows))
			assert.Zero(t, rows)
		})
	}
}

func countPatterns(ps []stats.PatternCount) int {
	n := 0
	for _, p := range ps {
		n += p.Count
	}
	return n
}

// TestComparisonKeptInTheDatabase compares two corpora, then reads the
// comparison from another store as a later process would: it is the one
// kept, exactly, until either corpus changes; a comparison with an earlier
// version of B is dropped when a newer one is kept.
func TestComparisonKeptInTheDatabase(t *testing.T) {
	docsA, docsB := synthDocs(t, 6, 1), synthDocs(t, 6, 2)
	half := len(docsB) / 2
	opt := store.CompareOptions{A: "a", SetA: "gold", B: "b", SetB: "gold", By: store.ByType}
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, b)
			open := func() *store.Store { return openStore(t, dsn) }
			comparisons := func(s *store.Store) int {
				t.Helper()
				var n int
				require.NoError(t, s.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM statistics_results WHERE measure LIKE 'comparison%'`).Scan(&n))
				return n
			}
			first := open()
			_, err := first.ImportDocuments(ctx, store.ImportOptions{Corpus: "a"}, docsA)
			require.NoError(t, err)
			_, err = first.ImportDocuments(ctx, store.ImportOptions{Corpus: "b"}, docsB[:half])
			require.NoError(t, err)
			counted, err := first.CompareCorpora(ctx, opt)
			require.NoError(t, err)
			read, err := open().CompareCorpora(ctx, opt)
			require.NoError(t, err)
			assert.Equal(t, counted, read, "the kept comparison is the counted one, figure for figure")
			assert.Equal(t, 1, comparisons(first))

			// Marked in the database, the result shows it was read, not counted.
			marked := *counted
			marked.B.Documents = 1_000_000
			result, err := json.Marshal(marked)
			require.NoError(t, err)
			_, err = first.DB.ExecContext(ctx, first.Rebind(`UPDATE statistics_results SET result = ? WHERE measure LIKE 'comparison%'`), result)
			require.NoError(t, err)
			read, err = open().CompareCorpora(ctx, opt)
			require.NoError(t, err)
			assert.Equal(t, 1_000_000, read.B.Documents)

			// A write to B makes it stale, and the kept one is replaced.
			_, err = first.ImportDocuments(ctx, store.ImportOptions{Corpus: "b"}, docsB[half:])
			require.NoError(t, err)
			second := open()
			read, err = second.CompareCorpora(ctx, opt)
			require.NoError(t, err)
			fresh, err := second.CountComparison(ctx, opt)
			require.NoError(t, err)
			assert.Equal(t, fresh, read)
			assert.Equal(t, len(docsB), read.B.Documents)
			assert.Equal(t, 1, comparisons(first), "the comparison with B's earlier version is dropped")

			// So does a write to A.
			_, err = first.DB.ExecContext(ctx, first.Rebind(`UPDATE statistics_results SET result = ? WHERE measure LIKE 'comparison%'`), result)
			require.NoError(t, err)
			changed := docsA[0]
			changed.Text += " "
			changed.Spans = nil
			_, err = first.ImportDocuments(ctx, store.ImportOptions{Corpus: "a", Replace: true}, []pipeline.Document{changed})
			require.NoError(t, err)
			read, err = open().CompareCorpora(ctx, opt)
			require.NoError(t, err)
			fresh, err = second.CountComparison(ctx, opt)
			require.NoError(t, err)
			assert.Equal(t, fresh, read)
		})
	}
}

// synthDocs are the notes of a synthetic corpus.
func synthDocs(t *testing.T, patients int, seed uint64) []pipeline.Document {
	t.Helper()
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: patients, Seed: seed}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	return docs
}

// openStore opens another store on the database, as another process would.
func openStore(t *testing.T, dsn string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dsn, storetest.SharedKey())
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}
