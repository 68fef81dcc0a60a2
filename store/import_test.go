package store_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/phi"
	"deidcorpus/pipeline/release"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// synthFiles writes a synthetic corpus as i2b2 files: more documents than
// one import batch holds.
func synthFiles(t *testing.T, patients int) []formats.File {
	t.Helper()
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: patients, Seed: 5}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	files, err := formats.WriteI2B2(docs)
	require.NoError(t, err)
	require.Greater(t, len(files), 600, "more than one batch")
	return files
}

// imported is everything an import leaves in a corpus, row ids aside.
func imported(t *testing.T, s *store.Store, name string) []pipeline.Document {
	t.Helper()
	c, err := s.CorpusByName(context.Background(), name)
	require.NoError(t, err)
	docs, err := s.LoadDocuments(context.Background(), c, "gold")
	require.NoError(t, err)
	return docs
}

// crash stands for the worker's death: a panic unwinds the import at once,
// with none of its error handling.
type crash struct{}

// An import killed after a batch has committed and then resumed ends with
// what an uninterrupted import gives, and reports every document.
func TestImportResumesAfterCrash(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			files := synthFiles(t, 200)
			want := storetest.Open(t, b)
			full, err := want.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, files)
			require.NoError(t, err)

			s := storetest.Open(t, b)
			opt := store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}
			committed := 0
			opt.Progress = func(done, total int) {
				committed = done
				panic(crash{})
			}
			require.PanicsWithValue(t, crash{}, func() { s.Import(ctx, opt, files) })
			require.Greater(t, committed, 0)
			require.Less(t, committed, len(files))
			assert.Len(t, imported(t, s, "c"), committed, "the first batch stays committed")

			// Without resume, the committed batch is a conflict.
			_, err = s.Import(ctx, store.ImportOptions{Corpus: "c"}, files)
			assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))

			opt.Progress, opt.Resume = nil, true
			res, err := s.Import(ctx, opt, files)
			require.NoError(t, err)
			assert.Equal(t, full.Documents, res.Documents)
			assert.Equal(t, full.Spans, res.Spans)
			assert.Equal(t, imported(t, want, "c"), imported(t, s, "c"))
		})
	}
}

// A bad file anywhere fails the import before anything is written, naming
// the file and the line; so does a conflict with the corpus found late.
func TestImportAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, storetest.SQLite)
	files := synthFiles(t, 200)
	bad := append([]formats.File(nil), files...)
	last := &bad[len(bad)-1]
	last.Data = []byte(fmt.Sprintf("<r><TEXT><![CDATA[Seen %s]]></TEXT><TAGS><DATE id=\"P0\" start=\"0\" end=\"99\" TYPE=\"DATE\"/></TAGS></r>", "today"))
	_, err := s.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, bad)
	require.Error(t, err)
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.Contains(t, err.Error(), last.Name+":1: tag P0 (DATE)")
	_, err = s.CorpusByName(ctx, "c")
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "no corpus is left")

	// The last file already in the corpus: a conflict, and no other note is added.
	_, err = s.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, files[len(files)-1:])
	require.NoError(t, err)
	_, err = s.Import(ctx, store.ImportOptions{Corpus: "c"}, files)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
	assert.Len(t, imported(t, s, "c"), 1)

	// Adding the others to the existing corpus works, in batches.
	var checked, batches []int
	res, err := s.Import(ctx, store.ImportOptions{Corpus: "c", Progress: func(done, total int) {
		assert.Equal(t, len(files)-1, total)
		batches = append(batches, done)
	}, Checked: func(done int) { checked = append(checked, done) }}, files[:len(files)-1])
	require.NoError(t, err)
	assert.Equal(t, len(files)-1, res.Documents)
	assert.NotEmpty(t, checked, "progress while checking")
	assert.Greater(t, len(batches), 1, "progress per batch")
	assert.Equal(t, len(files)-1, batches[len(batches)-1])
	assert.Len(t, imported(t, s, "c"), len(files))
}

// A write that fails after a batch has committed (here, cancelled) removes
// the corpus the import created.
func TestImportCancelledRemovesNewCorpus(t *testing.T) {
	s := storetest.Open(t, storetest.SQLite)
	files := synthFiles(t, 200)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	committed := 0
	_, err := s.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014", Progress: func(done, total int) {
		committed = done
		cancel()
	}}, files)
	require.Error(t, err)
	require.Greater(t, committed, 0)
	_, err = s.CorpusByName(context.Background(), "c")
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err))
}

// TestReplaceMovesADocument: a replacing import that gives a document of
// unchanged text another split or note type moves it there, with the copies
// its spans of every layer carry (statistics by split count it there); one
// that gives none leaves it where it is, and a layer added without replace
// moves nothing.
func TestReplaceMovesADocument(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b)
			doc := pipeline.Document{ID: "100-01", Patient: "100", Text: "Seen by Dr. Lee on 3/4.", Split: "dev",
				Spans: []pipeline.Span{{Start: 12, End: 15, Text: "Lee", Category: "NAME", Type: "DOCTOR"}}}
			_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c"}, []pipeline.Document{doc})
			require.NoError(t, err)
			layer := doc
			layer.Split = "train"
			layer.Spans = []pipeline.Span{{Start: 19, End: 22, Text: "3/4", Category: "DATE", Type: "DATE"}}
			res, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", Set: "second", Kind: "annotator"}, []pipeline.Document{layer})
			require.NoError(t, err)
			assert.Zero(t, res.Moved, "a layer added without replace moves nothing")
			splits := func(set string) []string {
				t.Helper()
				stats, err := st.Statistics(ctx, "c", set, []store.Dimension{store.BySplit})
				require.NoError(t, err)
				var out []string
				for _, g := range stats.Groups {
					out = append(out, g.Keys[0])
				}
				for _, s := range stats.Splits {
					out = append(out, "document:"+s.Name)
				}
				return out
			}
			assert.Equal(t, []string{"dev", "document:dev"}, splits("gold"))

			unsplit := doc
			unsplit.Split = ""
			res, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", Replace: true}, []pipeline.Document{unsplit})
			require.NoError(t, err)
			assert.Zero(t, res.Moved, "no split given: the document stays")

			moved := doc
			moved.Split, moved.NoteType = "test", "discharge"
			res, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", Replace: true}, []pipeline.Document{moved})
			require.NoError(t, err)
			assert.Equal(t, 1, res.Moved)
			assert.Equal(t, []string{"test", "document:test"}, splits("gold"))
			assert.Equal(t, []string{"test", "document:test"}, splits("second"), "the other layer's spans moved too")
			stats, err := st.Statistics(ctx, "c", "second", []store.Dimension{store.ByNoteType})
			require.NoError(t, err)
			require.Len(t, stats.Groups, 1)
			assert.Equal(t, "discharge", stats.Groups[0].Keys[0])

			// A retried job (resume) counts a document written as done only
			// where it is also in the place this import gives it.
			back := doc
			back.NoteType = "discharge"
			res, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", Replace: true, Resume: true}, []pipeline.Document{back})
			require.NoError(t, err)
			assert.Equal(t, 1, res.Moved)
			assert.Equal(t, []string{"dev", "document:dev"}, splits("second"))
			res, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", Replace: true, Resume: true}, []pipeline.Document{back})
			require.NoError(t, err)
			assert.Zero(t, res.Moved, "in place already: done")

			// A note whose text changed is written anew where it was, unless
			// the import says where.
			edited := doc
			edited.Split, edited.NoteType = "", ""
			edited.Text = "Seen by Dr. Lee on 3/5."
			_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", Replace: true}, []pipeline.Document{edited})
			require.NoError(t, err)
			assert.Equal(t, []string{"dev", "document:dev"}, splits("gold"), "the edited note kept its split")
			stats, err = st.Statistics(ctx, "c", "gold", []store.Dimension{store.ByNoteType})
			require.NoError(t, err)
			require.Len(t, stats.Groups, 1)
			assert.Equal(t, "discharge", stats.Groups[0].Keys[0], "and its note type")
		})
	}
}

// A failed import into the corpus it made takes the corpus away, unless
// another writer wrote to it meanwhile (an import completing it with
// replace): then the corpus is left, and the error says so.
func TestFailedImportLeavesACorpusAnotherWroteTo(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			files := synthFiles(t, 400)
			dsn := storetest.DSN(t, b)
			s, err := store.Open(context.Background(), dsn, storetest.SharedKey())
			require.NoError(t, err)
			defer s.Close()
			other, err := store.Open(context.Background(), dsn, storetest.SharedKey())
			require.NoError(t, err)
			defer other.Close()

			for _, meddle := range []bool{false, true} {
				ctx, cancel := context.WithCancel(context.Background())
				opt := store.ImportOptions{Corpus: fmt.Sprint("c", meddle), TagSet: "i2b2-2014"}
				opt.Progress = func(done, total int) {
					if meddle {
						again := opt
						again.Progress, again.Replace = nil, true
						_, err := other.Import(context.Background(), again, files[:1])
						require.NoError(t, err)
					}
					cancel() // the import fails after its first batch
				}
				_, err := s.Import(ctx, opt, files)
				cancel()
				require.ErrorIs(t, err, context.Canceled)
				_, lookErr := s.CorpusByName(context.Background(), opt.Corpus)
				if meddle {
					assert.NoError(t, lookErr, "left for the other writer")
					assert.Contains(t, err.Error(), "is left as it is: another writer wrote to it meanwhile")
				} else {
					assert.Equal(t, apperr.NotFound, apperr.CodeOf(lookErr), "taken away whole")
				}
			}
		})
	}
}

// An archive of a release imports with the splits its release.json lists,
// by the id each file gives a document back (a note written as PATIENT-NN
// under its archive_id too); a split the import names wins, and a file
// named release.json that is no release's is left alone.
func TestImportReleaseArchiveSplits(t *testing.T) {
	docs := []pipeline.Document{
		{ID: "100-01", Patient: "100", RecordOrder: 1, Split: "train", Text: "Seen by Dr. Li."},
		{ID: "731902448217", Patient: "100", RecordOrder: 2, Split: "train", Text: "Back again."},
		{ID: "200-01", Patient: "200", RecordOrder: 1, Split: "dev", Text: "Another patient."},
		{ID: "300-01", Patient: "300", RecordOrder: 1, Text: "No split."},
	}
	f, err := formats.Lookup("i2b2")
	require.NoError(t, err)
	var c formats.Collector
	require.NoError(t, release.PackTo(release.Meta{Name: "r", Version: "1.0.0", Corpus: "c"},
		func(fn func(set string, docs []pipeline.Document) error) error { return fn("gold", docs) }, f, "# r\n", c.Create))
	var zipped bytes.Buffer
	require.NoError(t, formats.WriteZip(&zipped, c.Files()))
	stray := formats.Files([]formats.File{{Name: "release.json", Data: []byte(`{"note": "not a release"}`)}})

	splits := func(s *store.Store, corpus string) map[string]string {
		out := map[string]string{}
		for _, d := range imported(t, s, corpus) {
			out[d.ID] = d.Split
		}
		return out
	}
	ctx := context.Background()
	s := storetest.Open(t, storetest.SQLite)
	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "back"}, formats.Zip("r.zip", zipped.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"100-01": "train", "100-02": "train", "200-01": "dev", "300-01": ""}, splits(s, "back"),
		"the note of a pseudonymous id comes back as 100-02, its archive_id")

	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "named", Split: "test"}, formats.Zip("r.zip", zipped.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"100-01": "test", "100-02": "test", "200-01": "test", "300-01": "test"}, splits(s, "named"))

	var files []formats.File
	require.NoError(t, formats.Zip("r.zip", zipped.Bytes())(func(f formats.File) error {
		if !strings.HasSuffix(f.Name, release.MetaFile) {
			rc, err := f.Open()
			if err != nil {
				return err
			}
			defer rc.Close()
			data, err := io.ReadAll(rc)
			files = append(files, formats.File{Name: f.Name, Data: data})
			return err
		}
		return nil
	}))
	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "stray"}, func(yield func(formats.File) error) error {
		if err := formats.Files(files)(yield); err != nil {
			return err
		}
		return stray(yield)
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"100-01": "", "100-02": "", "200-01": "", "300-01": ""}, splits(s, "stray"))

	// A split no corpus has fails the import in its first pass, naming release.json.
	bad := formats.Files([]formats.File{{Name: "release.json", Data: []byte(
		`{"name": "r", "version": "1", "manifest": {"documents": [{"set": "gold", "id": "100-01", "sha256": "00", "split": "training"}]}}`)}})
	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "bad"}, func(yield func(formats.File) error) error {
		if err := formats.Files(files)(yield); err != nil {
			return err
		}
		return bad(yield)
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "release.json")
	assert.Contains(t, err.Error(), `unknown split "training"`)
	_, err = s.CorpusByName(ctx, "bad")
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "nothing written")
}

// An import that names no format reads a release archive in the format its
// release.json names, and a new corpus takes the release's tag set; what the
// import names wins, an existing corpus keeps its own, and two archives that
// disagree are refused before anything is written.
func TestImportReleaseArchiveFormatAndTagSet(t *testing.T) {
	archive := func(name, format, tagset, patient string) formats.Source {
		docs := []pipeline.Document{{ID: patient + "-01", Patient: patient, RecordOrder: 1, Text: "Seen by Dr. Li.",
			Spans: []pipeline.Span{{Start: 12, End: 14, Text: "Li", Category: "NAME", Type: "DOCTOR"}}}}
		f, err := formats.Lookup(format)
		require.NoError(t, err)
		var c formats.Collector
		require.NoError(t, release.PackTo(release.Meta{Name: "r", Version: "1.0.0", Corpus: "c", TagSet: tagset},
			func(fn func(set string, docs []pipeline.Document) error) error { return fn("gold", docs) }, f, "# r\n", c.Create))
		var zipped bytes.Buffer
		require.NoError(t, formats.WriteZip(&zipped, c.Files()))
		return formats.Zip(name, zipped.Bytes())
	}
	concat := func(srcs ...formats.Source) formats.Source {
		return func(yield func(formats.File) error) error {
			for _, src := range srcs {
				if err := src(yield); err != nil {
					return err
				}
			}
			return nil
		}
	}
	brat := archive("brat.zip", "brat", phi.I2B22014, "100")
	ctx := context.Background()
	s := storetest.Open(t, storetest.SQLite)

	res, err := s.ImportFrom(ctx, store.ImportOptions{Corpus: "back"}, brat)
	require.NoError(t, err)
	assert.Equal(t, "brat", res.Format)
	assert.Equal(t, "brat.zip:release.json", res.FromRelease)
	assert.Equal(t, phi.I2B22014, res.Corpus.Tagset)
	assert.Equal(t, "NAME", imported(t, s, "back")[0].Spans[0].Category, "the tag set's category, not the type")

	res, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "open", TagSet: phi.Open}, brat)
	require.NoError(t, err)
	assert.Equal(t, phi.Open, res.Corpus.Tagset, "the tag set named wins")
	assert.Equal(t, "brat", res.Format)

	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "open", Set: "second", Kind: "annotator"}, brat)
	require.NoError(t, err, "an existing corpus keeps its tag set, with no conflict")
	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "open", Set: "third", Kind: "annotator"}, archive("new.zip", "brat", "i2b2-2031", "100"))
	require.NoError(t, err, "nor is a tag set it does not take checked")

	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "xml", Format: "i2b2"}, brat)
	require.Error(t, err, "the format named wins: a brat archive holds no i2b2 XML")
	assert.Contains(t, err.Error(), "no i2b2 documents")

	// An archive made before release.json named the tag set agrees with
	// one that names it; so does anything, on what the import names.
	old := archive("old.zip", "brat", "", "200")
	res, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "mixed"}, concat(old, archive("new.zip", "brat", phi.I2B22014, "300")))
	require.NoError(t, err)
	assert.Equal(t, phi.I2B22014, res.Corpus.Tagset)
	assert.Equal(t, "old.zip:release.json", res.FromRelease, "the first to name the format")
	xml := archive("i2b2.zip", "i2b2", phi.Open, "400")
	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "both"}, concat(brat, xml))
	require.Error(t, err)
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.Contains(t, err.Error(), "brat.zip:release.json is a release in format brat and i2b2.zip:release.json one in format i2b2: "+
		"import them one at a time, or give the format")
	_, err = s.CorpusByName(ctx, "both")
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), "nothing written")
	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "both", Format: "brat"}, concat(brat, xml))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "in tag set i2b2-2014 and i2b2.zip:release.json one in tag set open: import them one at a time, or give the tag set")
	res, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "both", Format: "brat", TagSet: phi.I2B22014}, concat(brat, xml))
	require.NoError(t, err, "both named: the archives' own say nothing")
	assert.Empty(t, res.FromRelease)

	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "unknown"}, archive("brat.zip", "brat", "i2b2-2031", "100"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `brat.zip:release.json: tagset: unknown tag set "i2b2-2031"`)
	bad := formats.Files([]formats.File{{Name: "release.json", Data: []byte(`{"name": "r", "version": "1", "format": "brat-1.3"}`)}})
	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "unknown"}, concat(brat, bad))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "brat.zip:release.json is a release in format brat and release.json one in format brat-1.3")
	_, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "unknown"}, bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `release.json: format: unknown format "brat-1.3"`)

	// A release.json that is no release's says nothing of the format, and
	// is not read as one where the split is named.
	for _, stray := range []string{`{"format": "jsonl", "tagset": "open"}`, `[1, 2, 3]`} {
		notes := formats.Files([]formats.File{{Name: "release.json", Data: []byte(stray)},
			{Name: "500-01.xml", Data: []byte(`<deIdi2b2><TEXT><![CDATA[Seen by Dr. Li.]]></TEXT><TAGS><DOCTOR id="P0" start="12" end="14" text="Li" TYPE="DOCTOR"/></TAGS></deIdi2b2>`)}})
		res, err = s.ImportFrom(ctx, store.ImportOptions{Corpus: "stray", Split: "train", Replace: true}, notes)
		require.NoError(t, err, stray)
		assert.Equal(t, "i2b2", res.Format)
		assert.Equal(t, phi.Open, res.Corpus.Tagset)
	}
}

// A new corpus's name must survive paths and URLs: '/', '\', control
// characters and spaces at its ends are refused, by import, derivation and
// creation alike, and nothing is made.
func TestNewCorpusNames(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite)
	docs := []pipeline.Document{{ID: "1", Patient: "p", Text: "Ann Lee", Spans: []pipeline.Span{{Start: 0, End: 7, Type: "PATIENT"}}}}
	for _, name := range []string{"a/b", `a\b`, "a\nb", " a", "a ", ""} {
		_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: name, TagSet: "open"}, docs)
		assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%q: %v", name, err)
		_, err = st.CreateCorpus(ctx, name, "open", "", "original")
		assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%q: %v", name, err)
	}
	n, err := st.Client.Corpus.Query().Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)

	_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "notes 2026-11", TagSet: "open"}, docs)
	require.NoError(t, err, "spaces inside a name are fine")
	m, err := phi.ParseMapping("keep", []byte("@default keep\n"))
	require.NoError(t, err)
	_, err = st.Derive(ctx, store.DeriveOptions{Source: "notes 2026-11", Set: "gold", Mapping: m, Out: "notes/kept"})
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.ErrorContains(t, err, `out: corpus name "notes/kept" holds '/'`)
}
