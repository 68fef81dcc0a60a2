package store_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/document"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// importSynth imports a synthetic longitudinal corpus (patients with several
// notes each) and returns it.
func importSynth(t *testing.T, s *store.Store, corpus string, patients int) {
	t.Helper()
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: patients, Seed: 3}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	files, err := formats.WriteI2B2(docs)
	require.NoError(t, err)
	_, err = s.Import(context.Background(), store.ImportOptions{Corpus: corpus, TagSet: "i2b2-2014", Split: "train"}, files)
	require.NoError(t, err)
}

// Batches hold whole patients, and together they are LoadSplit's documents in
// its order, whatever the batch size.
func TestEachBatch(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, b)
			importSynth(t, s, "notes", 12)
			c, err := s.CorpusByName(ctx, "notes")
			require.NoError(t, err)
			all, err := s.LoadDocuments(ctx, c, "gold")
			require.NoError(t, err)
			require.Greater(t, len(all), 24, "patients with several notes")
			for i := 1; i < len(all); i++ {
				a, b := all[i-1], all[i]
				require.True(t, a.Patient < b.Patient || a.Patient == b.Patient && a.RecordOrder < b.RecordOrder,
					"%s before %s", a.ID, b.ID)
			}
			for _, n := range []int{1, 5, 1000} {
				var got []pipeline.Document
				seen := map[string]bool{}
				require.NoError(t, s.EachBatch(ctx, c, "gold", "", n, func(batch []pipeline.Document) error {
					require.NotEmpty(t, batch)
					require.False(t, seen[batch[0].Patient], "patient %s split across batches of %d", batch[0].Patient, n)
					for _, d := range batch {
						seen[d.Patient] = true
					}
					if len(batch) > n {
						assert.Equal(t, batch[n-1].Patient, batch[len(batch)-1].Patient, "a batch of %d runs past its size only to end a patient", n)
					}
					got = append(got, batch...)
					return nil
				}))
				assert.Equal(t, all, got, "batches of %d", n)
			}
			// A document deleted while the batches are read is left out.
			last := all[len(all)-1]
			var got []pipeline.Document
			require.NoError(t, s.EachBatch(ctx, c, "gold", "", 1, func(batch []pipeline.Document) error {
				if got == nil {
					require.NoError(t, s.Client.Document.DeleteOneID(documentRowID(t, s, c, last.ID)).Exec(ctx))
				}
				got = append(got, batch...)
				return nil
			}))
			assert.Equal(t, all[:len(all)-1], got)

			// fn's error ends the read: no batch is passed after it.
			stop, calls := errors.New("stop"), 0
			err = s.EachBatch(ctx, c, "gold", "", 1, func([]pipeline.Document) error {
				if calls++; calls == 2 {
					return stop
				}
				return nil
			})
			assert.ErrorIs(t, err, stop)
			assert.Equal(t, 2, calls)

			none, err := s.LoadSplit(ctx, c, "gold", "test")
			require.NoError(t, err)
			assert.Empty(t, none)
			err = s.EachBatch(ctx, c, "system", "", 10, func([]pipeline.Document) error { return nil })
			assert.ErrorContains(t, err, `no annotation set "system"`)
		})
	}
}

// The parts of a split job: PatientGroups cuts the patients into groups, and
// EachBatchOf over each group in turn reads what EachBatch reads. A group
// naming a patient of another corpus is refused.
func TestEachBatchOfPatientGroups(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, b)
			importSynth(t, s, "notes", 12)
			importSynth(t, s, "other", 2)
			c, err := s.CorpusByName(ctx, "notes")
			require.NoError(t, err)
			all, err := s.LoadDocuments(ctx, c, "gold")
			require.NoError(t, err)
			groups, sizes, err := s.PatientGroups(ctx, c, "", 10, nil)
			require.NoError(t, err)
			require.Greater(t, len(groups), 2)
			var got []pipeline.Document
			for i, g := range groups {
				n := 0
				require.NoError(t, s.EachBatchOf(ctx, c, "gold", "", g, 4, func(batch []pipeline.Document) error {
					got = append(got, batch...)
					n += len(batch)
					return nil
				}))
				assert.Equal(t, sizes[i], n, "group %d", i)
			}
			assert.Equal(t, all, got)
			// Every patient at once, asked for 5 at a time (a resynthesis
			// part's share can pass what one statement may bind).
			restore := store.SetIDsPerQuery(5)
			got = got[:0]
			require.NoError(t, s.EachBatchOf(ctx, c, "gold", "", slices.Concat(groups...), 4, func(batch []pipeline.Document) error {
				got = append(got, batch...)
				return nil
			}))
			restore()
			assert.Equal(t, all, got, "in chunks of 5 patients")
			require.NoError(t, s.EachBatchOf(ctx, c, "gold", "test", groups[0], 4, func([]pipeline.Document) error {
				t.Error("the corpus has no test split")
				return nil
			}))

			// Weighed by patient: only the last three patients weigh, so the
			// first group runs up to the first of them and each of the
			// other two is a group of its own.
			var names []string
			for i, d := range all {
				if i == 0 || d.Patient != all[i-1].Patient {
					names = append(names, d.Patient)
				}
			}
			heavy := map[string]bool{}
			for _, p := range names[len(names)-3:] {
				heavy[p] = true
			}
			weighed, _, err := s.PatientGroups(ctx, c, "", 1, func(p string) int {
				if heavy[p] {
					return 1
				}
				return 0
			})
			require.NoError(t, err)
			require.Len(t, weighed, 3)
			assert.Len(t, weighed[0], len(names)-2)
			assert.Equal(t, slices.Concat(groups...), slices.Concat(weighed...))

			other, err := s.CorpusByName(ctx, "other")
			require.NoError(t, err)
			foreign, _, err := s.PatientGroups(ctx, other, "", 10, nil)
			require.NoError(t, err)
			err = s.EachBatchOf(ctx, c, "gold", "", slices.Concat(groups[0], foreign[0][:1]), 4, func([]pipeline.Document) error { return nil })
			assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%v", err)
		})
	}
}

// documentRowID returns the row id of a corpus's document.
func documentRowID(t *testing.T, s *store.Store, c *ent.Corpus, id string) int {
	t.Helper()
	n, err := s.Client.Document.Query().Where(document.CorpusID(c.ID), document.ExternalID(id)).OnlyID(context.Background())
	require.NoError(t, err)
	return n
}

// An export streamed to a directory writes the files Export returns, byte
// for byte; a destination's error stops it with that error and code, and
// documents a format cannot hold fail it as invalid.
func TestExportTo(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, storetest.SQLite)
	importSynth(t, s, "notes", 12)
	for _, format := range []string{"i2b2", "jsonl", "physionet"} {
		want, err := s.Export(ctx, store.ExportOptions{Corpus: "notes", Set: "gold", Format: format})
		require.NoError(t, err)
		dir := t.TempDir()
		files := &formats.DirFiles{Dir: dir}
		require.NoError(t, s.ExportTo(ctx, store.ExportOptions{Corpus: "notes", Set: "gold", Format: format}, files.Create))
		require.NoError(t, files.Close())
		got, err := formats.ReadPaths(dir)
		require.NoError(t, err)
		require.Len(t, got, len(want), format)
		for _, f := range want {
			data, err := os.ReadFile(filepath.Join(dir, f.Name))
			require.NoError(t, err)
			assert.Equal(t, string(f.Data), string(data), "%s %s", format, f.Name)
		}
	}
	full := io.ErrShortWrite
	err := s.ExportTo(ctx, store.ExportOptions{Corpus: "notes", Set: "gold", Format: "i2b2"}, func(string) (io.Writer, error) { return nil, full })
	assert.ErrorIs(t, err, full)
	assert.Equal(t, apperr.Internal, apperr.CodeOf(err), "the destination's error is no fault of the documents")
	err = s.ExportTo(ctx, store.ExportOptions{Corpus: "notes", Set: "gold", Format: "mimic"}, func(string) (io.Writer, error) { return io.Discard, nil })
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "spans outside placeholders do not fit MIMIC's format: %v", err)
}
