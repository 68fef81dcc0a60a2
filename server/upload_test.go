package server_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/synth"
	"deidcorpus/server"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// upload is one file of a multipart request.
type upload struct {
	name string
	data []byte
}

type gqlResponse struct {
	Data   map[string]json.RawMessage
	Errors []struct {
		Message    string
		Extensions struct{ Code string }
	}
}

// postFiles sends query with files as its $files, one part each as curl -F
// sends them; chunked sends the body without its length.
func postFiles(t *testing.T, ts *testServer, query string, chunked bool, files ...upload) gqlResponse {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	nulls := make([]any, len(files))
	paths := map[string][]string{}
	for i := range files {
		paths[fmt.Sprint(i)] = []string{fmt.Sprintf("variables.files.%d", i)}
	}
	ops, err := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"files": nulls}})
	require.NoError(t, err)
	require.NoError(t, mw.WriteField("operations", string(ops)))
	m, err := json.Marshal(paths)
	require.NoError(t, err)
	require.NoError(t, mw.WriteField("map", string(m)))
	for i, f := range files {
		w, err := mw.CreateFormFile(fmt.Sprint(i), f.name)
		require.NoError(t, err)
		_, err = w.Write(f.data)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	var r io.Reader = &body
	if chunked {
		r = struct{ io.Reader }{&body} // a length the client cannot see
	}
	req, err := http.NewRequest("POST", ts.URL+"/graphql", r)
	require.NoError(t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+ts.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out gqlResponse
	require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	return out
}

// zipped is an archive of files; stored (not compressed) members keep their
// bytes as they are, for a test to damage.
func zipped(t *testing.T, method uint16, files ...formats.File) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: method})
		require.NoError(t, err)
		_, err = w.Write(f.Data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// TestImportReadsUploadsWhereTheyAre: startImport and importDocuments read
// their uploads as a Source, a file or an archive's member at a time, from
// gqlgen's uploads wherever gqlgen keeps them (in memory for a short
// request, in a temporary file for a long one or one of unknown length). An
// upload of a zip and a plain file imports what a direct import of the same
// files does, and a damaged member, a file the format refuses and a member
// the job cannot parse are each named in the error, with nothing queued for
// the first two.
func TestImportReadsUploadsWhereTheyAre(t *testing.T) {
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 12, Seed: 5}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	files, err := formats.WriteI2B2(docs)
	require.NoError(t, err)
	require.Greater(t, len(files), 2)
	last := len(files) - 1
	notes := upload{"notes.zip", zipped(t, zip.Deflate, files[:last]...)}
	plain := upload{files[last].Name, files[last].Data}

	spooled := server.DefaultConfig
	spooled.UploadMemory = 1 // every request is longer
	modes := []struct {
		name    string
		cfg     server.Config
		chunked bool
	}{
		{"in memory", server.DefaultConfig, false},
		{"spooled", spooled, false},
		{"chunked", server.DefaultConfig, true},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			st, ts, _ := newServerConfig(t, storetest.SQLite, mode.cfg)
			opt := store.ImportOptions{Corpus: "direct", TagSet: "i2b2-2014", Split: "train"}
			_, err := st.Import(ctx, opt, files)
			require.NoError(t, err)
			load := func(name string) []pipeline.Document {
				t.Helper()
				corpus, err := st.CorpusByName(ctx, name)
				require.NoError(t, err)
				got, err := st.LoadDocuments(ctx, corpus, "gold")
				require.NoError(t, err)
				return got
			}
			want := load("direct")
			require.Len(t, want, len(files))
			start := func(corpus string, files ...upload) gqlResponse {
				t.Helper()
				return postFiles(t, ts, `mutation($files: [Upload!]!) { startImport(input: {corpus: "`+corpus+
					`", tagset: "i2b2-2014", split: train}, files: $files) { id } }`, mode.chunked, files...)
			}
			finished := func(resp gqlResponse) jobState {
				t.Helper()
				require.Empty(t, resp.Errors)
				var j struct{ ID string }
				require.NoError(t, json.Unmarshal(resp.Data["startImport"], &j))
				states := follow(t, ts.Config.Handler, ts.Token, j.ID)
				return states[len(states)-1]
			}

			got := finished(start("queued", notes, plain))
			require.Equal(t, "succeeded", got.Status, got.Error)
			assert.Equal(t, float64(len(files)), got.Result["documents"])
			assert.Equal(t, want, load("queued"))

			resp := postFiles(t, ts, `mutation($files: [Upload!]!) { importDocuments(input: {corpus: "direct-upload",
				tagset: "i2b2-2014", split: train}, files: $files) { documents } }`, mode.chunked, notes, plain)
			require.Empty(t, resp.Errors)
			assert.Equal(t, want, load("direct-upload"))

			// Refused as the upload is read, before anything is queued: the
			// archive's member named, and nothing left in the store.
			jobsBefore, err := st.Client.Job.Query().Count(ctx)
			require.NoError(t, err)
			chunksBefore, err := st.Client.Chunk.Query().Count(ctx)
			require.NoError(t, err)
			good, bad := files[0], formats.File{Name: "900-01.xml", Data: bytes.Clone(files[1].Data)}
			damaged := zipped(t, zip.Store, good, bad)
			at := bytes.Index(damaged, bad.Data)
			require.Positive(t, at)
			damaged[at+len(bad.Data)/2] ^= 1
			wrong := upload{"notes.jsonl", []byte(`{"id":"n1","text":"Seen today."}` + "\n")}
			for _, tc := range []struct {
				files []upload
				want  string
			}{
				{[]upload{plain, {"damaged.zip", damaged}}, "damaged.zip:900-01.xml: damaged archive member"},
				{[]upload{{"broken.zip", damaged[:len(damaged)/2]}}, "broken.zip: not a readable zip archive"},
				{[]upload{plain, wrong}, "notes.jsonl: format i2b2 reads .xml files only (try --format jsonl)"},
			} {
				resp := start("refused", tc.files...)
				require.Len(t, resp.Errors, 1)
				assert.Contains(t, resp.Errors[0].Message, tc.want)
				assert.Equal(t, "invalid", resp.Errors[0].Extensions.Code, resp.Errors[0].Message)
			}
			jobsAfter, err := st.Client.Job.Query().Count(ctx)
			require.NoError(t, err)
			chunksAfter, err := st.Client.Chunk.Query().Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, jobsBefore, jobsAfter, "nothing queued")
			assert.Equal(t, chunksBefore, chunksAfter, "no chunk left behind")

			// A member the format cannot parse fails the job, named.
			unparsable := formats.File{Name: "901-01.xml",
				Data: []byte(`<r><TEXT>x</TEXT><TAGS><DATE id="P0" start="0" end="5" TYPE="DATE"/></TAGS></r>`)}
			got = finished(start("unparsable", plain, upload{"more.zip", zipped(t, zip.Deflate, good, unparsable)}))
			assert.Equal(t, "failed", got.Status)
			assert.Contains(t, got.Error, "more.zip:901-01.xml")
		})
	}
}

// TestUploadOfUnknownLengthIsSpooled: gqlgen holds the files of a request in
// memory when it declares fewer bytes than UploadMemory, and a request of
// unknown length declares none: such a request is spooled to a temporary
// file as a long one is, which shows where there is nowhere to spool it.
func TestUploadOfUnknownLengthIsSpooled(t *testing.T) {
	_, ts, _ := newServer(t, storetest.SQLite)
	files, err := formats.ReadPaths("../testdata/i2b2")
	require.NoError(t, err)
	t.Setenv("TMPDIR", t.TempDir()+"/missing")
	query := `mutation($files: [Upload!]!) { importDocuments(input: {corpus: "c"}, files: $files) { documents } }`
	resp := postFiles(t, ts, query, false, upload{files[0].Name, files[0].Data})
	require.Empty(t, resp.Errors, "a short request is held in memory")
	resp = postFiles(t, ts, query, true, upload{files[1].Name, files[1].Data})
	require.Len(t, resp.Errors, 1)
	assert.Contains(t, resp.Errors[0].Message, "failed to create temp file")
}

// A CSV export of an EHR with its own column names imports through GraphQL
// when the columns are named; without them, the error names what is missing.
func TestImportCSVColumnsThroughGraphQL(t *testing.T) {
	ctx := context.Background()
	st, ts, _ := newServer(t, storetest.SQLite)
	csv := upload{"notes.csv", []byte("NOTE_ID,PERSON_ID,NOTE_TEXT\n" +
		"n1,p1,\"Seen on 2089-03-14, \"\"stable\"\".\"\n" +
		"n2,p1,Follow-up.\n" +
		"n3,p2,\"Two\nlines.\"\n")}
	const mutation = `mutation($files: [Upload!]!) { importDocuments(input: {corpus: "ehr", tagset: "open", format: "csv"%s}, files: $files) { documents } }`
	out := postFiles(t, ts, fmt.Sprintf(mutation, ""), false, csv)
	require.NotEmpty(t, out.Errors, "the header has no column named id or text")
	assert.Contains(t, out.Errors[0].Message, "notes.csv")
	out = postFiles(t, ts, fmt.Sprintf(mutation, `, columns: "id=NOTE_ID,patient=PERSON_ID,text=NOTE_TEXT"`), false, csv)
	require.Empty(t, out.Errors)
	c, err := st.CorpusByName(ctx, "ehr")
	require.NoError(t, err)
	docs, err := st.LoadDocuments(ctx, c, "gold")
	require.NoError(t, err)
	require.Len(t, docs, 3)
	byID := map[string]pipeline.Document{}
	for _, d := range docs {
		byID[d.ID] = d
	}
	assert.Equal(t, `Seen on 2089-03-14, "stable".`, byID["n1"].Text)
	assert.Equal(t, "p1", byID["n2"].Patient)
	assert.Equal(t, "Two\nlines.", byID["n3"].Text)
}
