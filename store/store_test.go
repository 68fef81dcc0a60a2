package store_test

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/internal/shared"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// xmlTags is how the test reads i2b2 files on its own, independently of the
// formats package, to know what the store should hold.
type xmlTags struct {
	Tags struct {
		Items []struct {
			XMLName xml.Name
			Text    string `xml:"text,attr"`
			Type    string `xml:"TYPE,attr"`
		} `xml:",any"`
	} `xml:"TAGS"`
}

func countXML(t *testing.T, dirs ...string) (docs, spans int, total map[string]int, unique map[string]map[string]bool) {
	total, unique = map[string]int{}, map[string]map[string]bool{}
	for _, dir := range dirs {
		paths, err := filepath.Glob(filepath.Join(dir, "*.xml"))
		require.NoError(t, err)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			var x xmlTags
			require.NoError(t, xml.Unmarshal(data, &x), p)
			docs++
			for _, it := range x.Tags.Items {
				spans++
				total[it.Type]++
				if unique[it.Type] == nil {
					unique[it.Type] = map[string]bool{}
				}
				unique[it.Type][it.Text] = true
			}
		}
	}
	return
}

func importDir(t *testing.T, s *store.Store, corpus, split string, paths ...string) *store.ImportResult {
	t.Helper()
	files, err := formats.ReadPaths(paths...)
	require.NoError(t, err)
	res, err := s.Import(context.Background(), store.ImportOptions{Corpus: corpus, TagSet: "i2b2-2014", Split: split}, files)
	require.NoError(t, err)
	return res
}

func TestImportMEDDOCAN(t *testing.T) {
	train := shared.Path(t, "meddocan-i2b2/train")
	dev := shared.Path(t, "meddocan-i2b2/dev")
	wantDocs, wantSpans, wantTotal, wantUnique := countXML(t, train, dev)
	require.Equal(t, 750, wantDocs)
	require.Equal(t, 17134, wantSpans)
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, b)
			r1 := importDir(t, s, "meddocan", "train", train)
			r2 := importDir(t, s, "meddocan", "dev", dev)
			assert.True(t, r1.CreatedCorpus)
			assert.False(t, r2.CreatedCorpus)
			assert.Equal(t, 750, r1.Documents+r2.Documents)
			assert.Equal(t, 17134, r1.Spans+r2.Spans)

			st, err := s.Statistics(ctx, "meddocan", "gold", []store.Dimension{store.ByType})
			require.NoError(t, err)
			assert.Equal(t, 750, st.Documents)
			assert.Equal(t, 750, st.Patients)
			assert.Equal(t, 17134, st.Spans)
			got := map[string]store.Group{}
			for _, g := range st.Groups {
				got[g.Keys[0]] = g
			}
			require.Len(t, got, len(wantTotal))
			for typ, n := range wantTotal {
				assert.Equal(t, n, got[typ].Total, "total of %s", typ)
				assert.Equal(t, len(wantUnique[typ]), got[typ].Unique, "unique of %s", typ)
			}

			bySplit, err := s.Statistics(ctx, "meddocan", "gold", []store.Dimension{store.BySplit})
			require.NoError(t, err)
			splits := map[string]int{}
			for _, g := range bySplit.Groups {
				splits[g.Keys[0]] = g.Total
			}
			assert.Equal(t, map[string]int{"train": 11333, "dev": 5801}, splits)

			c, err := s.CorpusByName(ctx, "meddocan")
			require.NoError(t, err)
			docs, err := s.LoadDocuments(ctx, c, "gold")
			require.NoError(t, err)
			n := 0
			for _, d := range docs {
				ix := pipeline.NewIndex(d.Text)
				for _, sp := range d.Spans {
					n++
					require.Equal(t, sp.Text, ix.Slice(sp.Start, sp.End), "%s %s", d.ID, sp.ID)
				}
			}
			assert.Equal(t, 17134, n)

			devDocs, err := s.LoadSplit(ctx, c, "gold", "dev")
			require.NoError(t, err)
			devSpans := 0
			for _, d := range devDocs {
				assert.Equal(t, "dev", d.Split)
				devSpans += len(d.Spans)
			}
			assert.Len(t, devDocs, 250)
			assert.Equal(t, 5801, devSpans)
		})
	}
}

func TestExportReimport(t *testing.T) {
	dev := shared.Path(t, "meddocan-i2b2/dev")
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, b)
			importDir(t, s, "a", "dev", dev)
			files, err := s.Export(ctx, store.ExportOptions{Corpus: "a", Set: "gold", Format: "i2b2"})
			require.NoError(t, err)
			require.Len(t, files, 250)
			_, err = s.Import(ctx, store.ImportOptions{Corpus: "b", TagSet: "i2b2-2014", Split: "dev"}, files)
			require.NoError(t, err)

			ca, _ := s.CorpusByName(ctx, "a")
			cb, _ := s.CorpusByName(ctx, "b")
			da, err := s.LoadDocuments(ctx, ca, "gold")
			require.NoError(t, err)
			db, err := s.LoadDocuments(ctx, cb, "gold")
			require.NoError(t, err)
			assert.Equal(t, da, db)
		})
	}
}

// rowCounts counts every table's rows, to prove a failed import wrote nothing.
func rowCounts(t *testing.T, s *store.Store) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"corpora", "patients", "documents", "annotation_sets", "spans"} {
		var n int
		require.NoError(t, s.DB.QueryRow("SELECT COUNT(*) FROM "+table).Scan(&n))
		out[table] = n
	}
	return out
}

const goodDoc = `<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[Seen by Dr. Núñez on 3/4/2090.]]></TEXT>
<TAGS>
<NAME id="P0" start="12" end="17" text="Núñez" TYPE="DOCTOR" comment="" />
<DATE id="P1" start="21" end="29" text="3/4/2090" TYPE="DATE" comment="" />
</TAGS>
</deIdi2b2>
`

func TestBrokenInputsChangeNothing(t *testing.T) {
	zipWithBadMember := func() []byte {
		var b strings.Builder
		files := []formats.File{{Name: "100-01.xml", Data: []byte(goodDoc)}, {Name: "100-02.xml", Data: []byte(strings.Replace(goodDoc, `end="29"`, `end="99"`, 1))}}
		require.NoError(t, formats.WriteZip(&b, files))
		return []byte(b.String())
	}
	cases := []struct {
		name string
		file formats.File
		want []string // substrings of the error
	}{
		{"offset past text", formats.File{Name: "200-01.xml", Data: []byte(strings.Replace(goodDoc, `end="29"`, `end="99"`, 1))}, []string{"200-01.xml", "P1", "past the end"}},
		{"text mismatch", formats.File{Name: "200-01.xml", Data: []byte(strings.Replace(goodDoc, `text="Núñez"`, `text="Nunez"`, 1))}, []string{"200-01.xml", "P0", "does not match"}},
		{"unclosed xml", formats.File{Name: "200-01.xml", Data: []byte(strings.Replace(goodDoc, "</TAGS>", "", 1))}, []string{"200-01.xml", "malformed XML"}},
		{"unknown type", formats.File{Name: "200-01.xml", Data: []byte(strings.Replace(goodDoc, `TYPE="DATE"`, `TYPE="FECHA"`, 1))}, []string{"200-01.xml", "P1", "unknown type", "imported with tag set open"}},
		{"misspelt type", formats.File{Name: "200-01.xml", Data: []byte(strings.Replace(goodDoc, `TYPE="DATE"`, `TYPE="DAET"`, 1))}, []string{"200-01.xml", "P1", `unknown type "DAET"`, "did you mean DATE?"}},
		{"MEDDOCAN type", formats.File{Name: "200-01.xml", Data: []byte(strings.Replace(goodDoc, `TYPE="DATE"`, `TYPE="FECHAS"`, 1))}, []string{"200-01.xml", "P1", `type "FECHAS" is meddocan's, not i2b2-2014's: import with tag set meddocan (derive --mapping meddocan-i2b2`}},
		{"invalid utf-8", formats.File{Name: "200-01.xml", Data: []byte(strings.Replace(goodDoc, "Seen", "S\xffen", 1))}, []string{"200-01.xml", "invalid UTF-8"}},
		{"zip with bad member", formats.File{Name: "batch.zip", Data: zipWithBadMember()}, []string{"batch.zip:100-02.xml", "P1", "past the end"}},
	}
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, b)
			_, err := s.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, []formats.File{{Name: "100-01.xml", Data: []byte(goodDoc)}})
			require.NoError(t, err)
			before := rowCounts(t, s)
			for _, c := range cases {
				files := []formats.File{c.file}
				if strings.HasSuffix(c.file.Name, ".zip") {
					files, err = formats.Unzip(c.file.Name, c.file.Data)
					require.NoError(t, err)
				} else {
					// a good file beside the bad one must not be imported either
					files = append([]formats.File{{Name: "300-01.xml", Data: []byte(goodDoc)}}, files...)
				}
				for _, corpus := range []string{"c", "new"} {
					_, err := s.Import(ctx, store.ImportOptions{Corpus: corpus, TagSet: "i2b2-2014"}, files)
					require.Error(t, err, c.name)
					assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), c.name)
					for _, w := range c.want {
						assert.Contains(t, err.Error(), w, c.name)
					}
					assert.Equal(t, before, rowCounts(t, s), "%s changed the database", c.name)
				}
			}
			// Every bad file is named in one round, and still nothing is written.
			files := []formats.File{cases[0].file, {Name: "201-01.xml", Data: cases[3].file.Data}, {Name: "300-01.xml", Data: []byte(goodDoc)}}
			_, err = s.Import(ctx, store.ImportOptions{Corpus: "new", TagSet: "i2b2-2014"}, files)
			require.Error(t, err)
			assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
			for _, w := range []string{"2 files with errors:\n", "200-01.xml", "past the end", "201-01.xml", "unknown type"} {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, before, rowCounts(t, s), "two bad files changed the database")
		})
	}
}

func TestReimportConflictAndReplace(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, storetest.SQLite)
	files := []formats.File{{Name: "100-01.xml", Data: []byte(goodDoc)}}
	opt := store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}
	_, err := s.Import(ctx, opt, files)
	require.NoError(t, err)
	// a second layer over the same text survives a replace that keeps the text
	_, err = s.Import(ctx, store.ImportOptions{Corpus: "c", Set: "annotator1"}, files)
	require.NoError(t, err)

	before := rowCounts(t, s)
	_, err = s.Import(ctx, opt, files)
	require.Error(t, err)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err))
	assert.Contains(t, err.Error(), "100-01")
	assert.Equal(t, before, rowCounts(t, s))

	opt.Replace = true
	res, err := s.Import(ctx, opt, files)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Replaced)
	assert.Equal(t, before, rowCounts(t, s))

	changed := strings.Replace(goodDoc, "Seen by", "Visto por", 1)
	changed = strings.NewReplacer(`start="12" end="17"`, `start="14" end="19"`, `start="21" end="29"`, `start="23" end="31"`).Replace(changed)
	res, err = s.Import(ctx, opt, []formats.File{{Name: "100-01.xml", Data: []byte(changed)}})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Replaced)
	after := rowCounts(t, s)
	assert.Equal(t, 2, after["spans"], "the changed text drops the other layer's spans")

	_, err = s.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "open"}, files)
	assert.Equal(t, apperr.Conflict, apperr.CodeOf(err), "tag set mismatch: the corpus exists with another")
}

// A new SQLite database and its WAL are readable by their owner only: they
// hold the notes' original text. An existing file keeps its permissions.
func TestNewDatabaseIsPrivate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	st, err := store.Open(ctx, path)
	require.NoError(t, err)
	_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", TagSet: "open"},
		[]pipeline.Document{{ID: "d1", Patient: "p1", Text: "Seen by Dr. Ann Lee."}})
	require.NoError(t, err)
	for _, f := range []string{path, path + "-wal"} {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), f)
	}
	require.NoError(t, st.Close())

	shared := filepath.Join(t.TempDir(), "shared.db")
	require.NoError(t, os.WriteFile(shared, nil, 0o640))
	st, err = store.Open(ctx, shared)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	fi, err := os.Stat(shared)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "an existing database's permissions are the operator's choice")
}

// On SQLite the write connection never checkpoints the WAL (a checkpoint
// after a commit held it, and every write behind it): the store does, from
// a connection of its own, while it is open.
func TestWALIsCheckpointedBesideTheWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	st, err := store.Open(ctx, path)
	require.NoError(t, err)
	defer st.Close()
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 40, Seed: 1}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	_, err = st.ImportDocuments(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, docs)
	require.NoError(t, err)
	// The pages reach the database file while the store is open, as the
	// checkpoints copy them from the WAL.
	require.Eventually(t, func() bool {
		fi, err := os.Stat(path)
		return err == nil && fi.Size() > 256<<10
	}, time.Minute, 50*time.Millisecond) // a deadline for a hang, not a speed bar
}

// The WAL stays bounded under a writer that commits without pause: it
// starts again from its beginning after the write connection's checkpoint,
// although the background checkpoints never catch up with such a writer.
func TestWALStaysBoundedUnderAStreamOfCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("writes four times the WAL's restart size")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	st, err := store.Open(ctx, path)
	require.NoError(t, err)
	defer st.Close()
	var every, pageSize int64
	require.NoError(t, st.DB.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&every))
	require.NoError(t, st.DB.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize))
	require.Positive(t, every)
	_, err = st.DB.ExecContext(ctx, `CREATE TABLE churn (id INTEGER PRIMARY KEY, b BLOB)`)
	require.NoError(t, err)
	// Each commit rewrites 40 rows of 64 KiB (2.5 MiB), four times a WAL
	// that restarts every `every` pages in all.
	blob := make([]byte, 64<<10)
	var largest int64
	for i := range int(4*every*pageSize/(40<<16)) + 1 {
		tx, err := st.DB.BeginTx(ctx, nil)
		require.NoError(t, err)
		for r := range 40 {
			blob[0], blob[1] = byte(i), byte(r)
			_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO churn (id, b) VALUES (?, ?)`, r, blob)
			require.NoError(t, err)
		}
		require.NoError(t, tx.Commit())
		if fi, err := os.Stat(path + "-wal"); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	assert.Less(t, largest, 2*every*pageSize, "the WAL grew past twice its restart size: it never started again")
	assert.Greater(t, largest, every*pageSize/4, "the WAL never held a quarter of its restart size: the test wrote too little to show anything")
}

// A corpus imported without a split has every note unassigned: a job that
// wants its train split is told so, and what to pass.
func TestNoDocumentsInSaysWhereTheyAre(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, storetest.SQLite)
	files := []formats.File{{Name: "100-01.xml", Data: []byte(goodDoc)}, {Name: "101-01.xml", Data: []byte(goodDoc)}}
	res, err := s.Import(ctx, store.ImportOptions{Corpus: "c", TagSet: "i2b2-2014"}, files)
	require.NoError(t, err)
	err = s.NoDocumentsIn(ctx, res.Corpus, "train")
	assert.Equal(t, apperr.Invalid, apperr.CodeOf(err))
	assert.EqualError(t, err, `corpus "c" has no documents in split "train" (its documents: unassigned 2): `+
		`its import gave no split; use split "all", or import again with --split (or a split per document)`)
}
