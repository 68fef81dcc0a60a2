package release

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"deidcorpus/internal/zipindex"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

// zipped writes files as a zip archive and opens it.
func zipped(t *testing.T, files []formats.File) *zipindex.Reader {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(f.Data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := zipindex.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

// remanifest rewrites the MANIFEST of files as a forger would: every file's
// SHA-256 recomputed, the header (comment lines) kept.
func remanifest(files []formats.File) []formats.File {
	var header, lines []string
	out := files[:0:0]
	for _, f := range files {
		if f.Name == ManifestFile {
			for _, l := range strings.Split(string(f.Data), "\n") {
				if strings.HasPrefix(l, "#") {
					header = append(header, l)
				}
			}
			continue
		}
		sum := sha256.Sum256(f.Data)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+f.Name)
		out = append(out, f)
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
	return append(out, formats.File{Name: ManifestFile, Data: []byte(strings.Join(append(header, lines...), "\n") + "\n")})
}

// editManifest changes the text of the MANIFEST, Pack's last file.
func editManifest(fs []formats.File, edit func(string) string) []formats.File {
	m := &fs[len(fs)-1]
	m.Data = []byte(edit(string(m.Data)))
	return fs
}

// An archive read from a zip a member at a time verifies as in memory, and
// a forger who rehashes the MANIFEST after changing, adding or removing a
// document is still caught by release.json's content hashes, the document
// named; a file no check covers (hidden, of another format, beside the
// archive's own) is refused, and so is a MANIFEST comment line that is not
// what release.json says, the line and what was expected named. Every file
// that differs is named, up to maxFailures. The files counted are the
// archive's, MANIFEST included, as export counts them.
func TestVerifyZip(t *testing.T) {
	f, _ := formats.Lookup("i2b2")
	snap := sample()
	files, err := Pack(Meta{Name: "demo", Version: "1.0.0", Corpus: "c"}, snap, f, "# demo\n")
	if err != nil {
		t.Fatal(err)
	}
	v, err := VerifyZip(zipped(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if v.Root != rootOf(t, snap) || v.Documents != 2 || v.Files != len(files) || v.Name != "demo" || v.Format != "i2b2" {
		t.Fatalf("%+v", v)
	}
	if _, err := VerifyZip(zipped(t, remanifest(files))); err != nil {
		t.Fatalf("the MANIFEST rewritten unchanged: %v", err)
	}
	doc := -1
	for i, file := range files {
		if strings.HasPrefix(file.Name, "gold/") {
			doc = i
			break
		}
	}
	for name, c := range map[string]struct {
		change func([]formats.File) []formats.File
		want   string
	}{
		"a document changed, MANIFEST rehashed": {func(fs []formats.File) []formats.File {
			fs[doc].Data = bytes.Replace(fs[doc].Data, []byte(`TYPE="DOCTOR"`), []byte(`TYPE="PATIENT"`), 1)
			return remanifest(fs)
		}, "document gold/100-01: content hash differs from the release's"},
		"a document added, MANIFEST rehashed": {func(fs []formats.File) []formats.File {
			extra := fs[doc]
			extra.Name = "gold/100-03.xml"
			return remanifest(append(fs, extra))
		}, "document gold/100-03: not in release.json: it was added"},
		"a document removed, MANIFEST rehashed": {func(fs []formats.File) []formats.File {
			return remanifest(append(fs[:doc], fs[doc+1:]...))
		}, "document gold/100-01: listed in release.json but missing"},
		"a hidden file, MANIFEST rehashed": {func(fs []formats.File) []formats.File {
			return remanifest(append(fs, formats.File{Name: "gold/.notes", Data: []byte("Lee, 3/4")}))
		}, "gold/.notes: not a file of format i2b2"},
		"a file beside the archive's, MANIFEST rehashed": {func(fs []formats.File) []formats.File {
			return remanifest(append(fs, formats.File{Name: "notes.txt", Data: []byte("Lee, 3/4")}))
		}, "notes.txt: not a file of a release archive"},
		"a Mac's resource fork": {func(fs []formats.File) []formats.File {
			return append(fs, formats.File{Name: "__MACOSX/gold/._100-01.xml", Data: []byte("x")})
		}, "__MACOSX/gold/._100-01.xml: not listed in MANIFEST"},
		"a file twice": {func(fs []formats.File) []formats.File {
			return append(fs, fs[doc])
		}, "twice in the archive"},
		"two files changed and one removed": {func(fs []formats.File) []formats.File {
			fs[0].Data = append(fs[0].Data, "(edited)"...) // DATASHEET.md
			fs[doc].Data = bytes.Replace(fs[doc].Data, []byte("Lee"), []byte("Lea"), 1)
			return append(fs[:doc+1], fs[doc+2:]...)
		}, "DATASHEET.md: SHA-256 differs from MANIFEST: the file was changed\n" +
			"gold/100-01.xml: SHA-256 differs from MANIFEST: the file was changed\n" +
			"gold/100-02.xml: listed in MANIFEST but missing"},
		"two documents changed, MANIFEST rehashed": {func(fs []formats.File) []formats.File {
			for _, k := range []int{doc, doc + 1} {
				fs[k].Data = bytes.Replace(fs[k].Data, []byte(`TYPE="DOCTOR"`), []byte(`TYPE="PATIENT"`), 1)
			}
			return remanifest(fs)
		}, "document gold/100-01: content hash differs from the release's\n" +
			"document gold/100-02: content hash differs from the release's"},
		"more files added than are named": {func(fs []formats.File) []formats.File {
			for k := range maxFailures + 5 {
				fs = append(fs, formats.File{Name: fmt.Sprintf("gold/x%02d.xml", k), Data: fs[doc].Data})
			}
			return fs
		}, fmt.Sprintf("gold/x%02d.xml: not listed in MANIFEST: the file was added\nand 5 more", maxFailures-1)},
		"MANIFEST's header names another release": {func(fs []formats.File) []formats.File {
			return editManifest(fs, func(m string) string { return strings.Replace(m, "demo@1.0.0", "evil@9.9.9", 1) })
		}, `MANIFEST:1: "# deidcorpus release evil@9.9.9 format i2b2" differs from release.json: expected "# deidcorpus release demo@1.0.0 format i2b2"`},
		"MANIFEST's root changed": {func(fs []formats.File) []formats.File {
			return editManifest(fs, func(m string) string { return strings.Replace(m, "# root ", "# root 0", 1) })
		}, `MANIFEST:2: "# root 0`},
		"MANIFEST without its header": {func(fs []formats.File) []formats.File {
			return editManifest(fs, func(m string) string { _, rest, _ := strings.Cut(m, "\n"); return rest })
		}, `MANIFEST:1: "# root`},
		"a comment added to MANIFEST": {func(fs []formats.File) []formats.File {
			return editManifest(fs, func(m string) string {
				i := strings.Index(m, "# root ")
				i += strings.IndexByte(m[i:], '\n') + 1
				return m[:i] + "# signed by the hospital\n" + m[i:]
			})
		}, `MANIFEST:3: "# signed by the hospital": a comment release verify does not write`},
		"release.json renamed, MANIFEST rehashed": {func(fs []formats.File) []formats.File {
			for i := range fs {
				if fs[i].Name == MetaFile {
					fs[i].Data = bytes.Replace(fs[i].Data, []byte(`"name": "demo"`), []byte(`"name": "evil"`), 1)
				}
			}
			return remanifest(fs)
		}, `MANIFEST:1: "# deidcorpus release demo@1.0.0 format i2b2" differs from release.json: expected "# deidcorpus release evil@1.0.0 format i2b2"`},
		"MANIFEST out of order": {func(fs []formats.File) []formats.File {
			m := &fs[len(fs)-1]
			lines := strings.Split(strings.TrimSpace(string(m.Data)), "\n")
			n := len(lines)
			lines[n-1], lines[n-2] = lines[n-2], lines[n-1]
			m.Data = []byte(strings.Join(lines, "\n") + "\n")
			return fs
		}, "out of name order"},
		"release.json out of order": {func(fs []formats.File) []formats.File {
			for i := range fs {
				if fs[i].Name == MetaFile {
					s := string(fs[i].Data)
					a, b := strings.Index(s, `"100-01"`), strings.Index(s, `"100-02"`)
					s = s[:a] + `"100-02"` + s[a+8:b] + `"100-01"` + s[b+8:]
					fs[i].Data = []byte(s)
				}
			}
			return remanifest(fs)
		}, "out of set and id order"},
	} {
		fs := append([]formats.File(nil), files...)
		for i := range fs {
			fs[i].Data = append([]byte(nil), fs[i].Data...)
		}
		_, err := VerifyZip(zipped(t, c.change(fs)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error with %q, got %v", name, c.want, err)
		}
	}
}

// Directory entries, which tools that zip a tree add, hold nothing to check
// and are passed over; one that holds content is refused, named, since
// nothing would check what it holds.
func TestVerifyZipDirectories(t *testing.T) {
	f, _ := formats.Lookup("i2b2")
	files, err := Pack(Meta{Name: "demo", Version: "1.0.0", Corpus: "c"}, sample(), f, "# demo\n")
	if err != nil {
		t.Fatal(err)
	}
	archive := func(dir string, content []byte) *zipindex.Reader {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		// archive/zip writes no content for a directory: it is written as
		// a file, its name's last byte "_", then renamed.
		w, err := zw.CreateRaw(&zip.FileHeader{Name: strings.TrimSuffix(dir, "/") + "_", Method: zip.Store,
			CompressedSize64: uint64(len(content)), UncompressedSize64: uint64(len(content)), CRC32: crc32.ChecksumIEEE(content)})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(content)
		for _, f := range files {
			w, err := zw.Create(f.Name)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(f.Data)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		data := bytes.Replace(buf.Bytes(), []byte(strings.TrimSuffix(dir, "/")+"_"), []byte(dir), 2) // local and central
		zr, err := zipindex.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		return zr
	}
	v, err := VerifyZip(archive("gold/", nil))
	if err != nil {
		t.Fatal(err)
	}
	if v.Files != len(files) || v.Documents != 2 {
		t.Errorf("%+v", v)
	}
	_, err = VerifyZip(archive("gold/.notes/", []byte("Lee, 3/4")))
	if want := `zip entry 0 "gold/.notes/": a directory that holds 8 bytes (8 compressed)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("want an error with %q, got %v", want, err)
	}
}

// physioNetSample is sample with a second patient, written "007" and "7"
// (one number to PhysioNet's reader), whose ids run against its notes'
// order.
func physioNetSample() Snapshot {
	s := sample()
	s.Sets["gold"] = append(s.Sets["gold"],
		pipeline.Document{ID: "a-late", Patient: "007", RecordOrder: 3, Text: "Called Ann.", Spans: []pipeline.Span{
			{Start: 7, End: 10, Text: "Ann", Category: "NAME", Type: "PATIENT"},
		}},
		pipeline.Document{ID: "z-early", Patient: "7", RecordOrder: 1, Text: "First visit."})
	return s
}

// PhysioNet's files name a note by patient and note number only, so its
// archive's release.json lists the id each document is read back with, and
// the archive verifies document by document as any other: a forger who
// rehashes the MANIFEST after changing a span, a text, a note's number, or
// release.json's pairing, or after removing or adding a note, is caught, the
// document named by its own id (an added one, which has none, by the
// archive's).
func TestVerifyZipPhysioNet(t *testing.T) {
	f, _ := formats.Lookup("physionet")
	snap := physioNetSample()
	files, err := Pack(Meta{Name: "demo", Version: "1.0.0", Corpus: "c"}, snap, f, "# demo\n")
	if err != nil {
		t.Fatal(err)
	}
	v, err := VerifyZip(zipped(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if v.Root != rootOf(t, snap) || v.Documents != 4 || v.Files != len(files) || v.Format != "physionet" {
		t.Fatalf("%+v", v)
	}
	if _, err := Verify(files); err != nil {
		t.Fatalf("in memory: %v", err)
	}
	archived := archiveIDsOf(t, files)
	if want := map[string]string{"100-01": "100-1", "100-02": "100-2", "a-late": "7-3", "z-early": "7-1"}; !reflect.DeepEqual(archived, want) {
		t.Fatalf("archive ids %v, want %v", archived, want)
	}

	// edit changes the named files' text.
	edit := func(fs []formats.File, change func(string) string, names ...string) []formats.File {
		for _, name := range names {
			if f := file(fs, name); f != nil {
				f.Data = []byte(change(string(f.Data)))
			}
		}
		return fs
	}
	replace := func(oldnew ...string) func(string) string { return strings.NewReplacer(oldnew...).Replace }
	all := []string{"gold/id.deid", "gold/id-phi.phrase", "gold/id.text"}
	for name, c := range map[string]struct {
		change func([]formats.File) []formats.File
		want   string
	}{
		"a span's type changed": {func(fs []formats.File) []formats.File {
			return remanifest(edit(fs, replace("100 1 12 15 DOCTOR", "100 1 12 15 PATIENT"), "gold/id-phi.phrase"))
		}, "document gold/100-01: content hash differs from the release's"},
		"a span moved": {func(fs []formats.File) []formats.File {
			return remanifest(edit(fs, replace("12\t12\t15", "12\t12\t14", "100 1 12 15 DOCTOR Lee", "100 1 12 14 DOCTOR Le"), all...))
		}, "document gold/100-01: content hash differs from the release's"},
		"a note's text changed": {func(fs []formats.File) []formats.File {
			return remanifest(edit(fs, replace("Dr. Lee again.", "Dr. Lee later."), "gold/id.text"))
		}, "document gold/100-02: content hash differs from the release's"},
		"a note removed": {func(fs []formats.File) []formats.File {
			return remanifest(edit(fs, func(s string) string {
				s = regexp.MustCompile(`(?s)START_OF_RECORD=100\|\|\|\|2\|\|\|\|.*?END_OF_RECORD\n`).ReplaceAllString(s, "")
				s = regexp.MustCompile(`Patient 100\tNote 2\n[^P]*`).ReplaceAllString(s, "")
				return regexp.MustCompile(`(?m)^100 2 .*\n`).ReplaceAllString(s, "")
			}, all...))
		}, "document gold/100-02: listed in release.json but missing"},
		"a note added": {func(fs []formats.File) []formats.File {
			return remanifest(edit(fs, func(s string) string { return s + "START_OF_RECORD=100||||9||||\nSeen.||||END_OF_RECORD\n" }, "gold/id.text"))
		}, "document gold/100-9 (as the archive names it): not in release.json: it was added"},
		"two notes' numbers swapped": {func(fs []formats.File) []formats.File {
			return remanifest(edit(fs, replace("100||||1||||", "100||||2||||", "100||||2||||", "100||||1||||",
				"Patient 100\tNote 1", "Patient 100\tNote 2", "Patient 100\tNote 2", "Patient 100\tNote 1",
				"100 1 ", "100 2 ", "100 2 ", "100 1 "), all...))
		}, "document gold/100-01: content hash differs from the release's\n" +
			"document gold/100-02: content hash differs from the release's"},
		"release.json's archive ids swapped": {func(fs []formats.File) []formats.File {
			return remanifest(edit(fs, replace(`"archive_id": "100-1"`, `"archive_id": "100-2"`, `"archive_id": "100-2"`, `"archive_id": "100-1"`), MetaFile))
		}, "document gold/100-01: content hash differs from the release's\n" +
			"document gold/100-02: content hash differs from the release's"},
		"release.json with one archive id twice": {func(fs []formats.File) []formats.File {
			return remanifest(edit(fs, replace(`"archive_id": "100-2"`, `"archive_id": "100-1"`), MetaFile))
		}, `release.json: documents gold/100-01 and gold/100-02 have the same archive_id "100-1"`},
		"release.json with one archive id twice, MANIFEST not rehashed": {func(fs []formats.File) []formats.File {
			return edit(fs, replace(`"archive_id": "100-2"`, `"archive_id": "100-1"`), MetaFile)
		}, `release.json: documents gold/100-01 and gold/100-02 have the same archive_id "100-1"` + "\n" +
			"release.json: SHA-256 differs from MANIFEST: the file was changed"},
		"release.json without archive ids, as exported before they were listed": {func(fs []formats.File) []formats.File {
			return remanifest(edit(fs, func(s string) string {
				return regexp.MustCompile(`,\n\s*"archive_id": "[^"]*"`).ReplaceAllLiteralString(s, "")
			}, MetaFile))
		}, "release.json: document gold/100-01 has no archive_id, the id it is read back with, which tells the documents of format physionet apart (its files cannot carry a document's id): export the release again"},
	} {
		fs := append([]formats.File(nil), files...)
		for i := range fs {
			fs[i].Data = append([]byte(nil), fs[i].Data...)
		}
		_, err := VerifyZip(zipped(t, c.change(fs)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error with %q, got %v", name, c.want, err)
		}
	}

	// Two documents PhysioNet would read back as one note are refused, both
	// named, before anything is written.
	snap.Sets["gold"][3].RecordOrder = 3
	_, err = Pack(Meta{Name: "demo", Version: "1.0.0", Corpus: "c"}, snap, f, "# demo\n")
	if want := "set gold: document z-early: patient 7 note 3, as document a-late is"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("want an error with %q, got %v", want, err)
	}
}

// archiveIDsOf maps each document id release.json lists to its archive id.
func archiveIDsOf(t *testing.T, files []formats.File) map[string]string {
	return entryField(t, files, func(e Entry) string { return e.ArchiveID })
}

// entryField maps each document id release.json lists to a field of its entry.
func entryField(t *testing.T, files []formats.File, field func(Entry) string) map[string]string {
	t.Helper()
	var meta Meta
	if err := json.Unmarshal(file(files, MetaFile).Data, &meta); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range meta.Manifest.Entries {
		out[e.ID] = field(e)
	}
	return out
}

// file is the named file of fs, nil if none.
func file(fs []formats.File, name string) *formats.File {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}

// In i2b2 and brat a file is named by its document's id, and its patient is
// read from that name ("100-01" is note 1 of patient 100). Documents whose
// ids say nothing of their patient (pseudonymous ids) are written as
// "PATIENT-NN", release.json pairing each archive id with the document's
// own id: the notes come back grouped by patient, in order, and the archive
// verifies. A document whose id already names its patient keeps its file.
func TestArchiveKeepsPatientsTogether(t *testing.T) {
	snap := Snapshot{Sets: map[string][]pipeline.Document{"gold": {
		{ID: "100-01", Patient: "100", RecordOrder: 1, Text: "Seen by Dr. Li."},
		{ID: "731902448217", Patient: "100", RecordOrder: 2, Text: "Back again.", Spans: []pipeline.Span{
			{Start: 0, End: 4, Text: "Back", Category: "NAME", Type: "PATIENT"}}},
		{ID: "580114372905", Patient: "100", RecordOrder: 3, Text: "Third note."},
		// A kept id after the renamed ones: no new name takes it.
		{ID: "100-02", Patient: "100", RecordOrder: 4, Text: "Fourth note."},
		{ID: "220917001835", Patient: "922018377411", RecordOrder: 1, Text: "Another patient."},
		// A patient id no file name can hold: the note keeps its id, as before.
		{ID: "note-x", Patient: "a:b", RecordOrder: 1, Text: "A patient no file can name."},
	}}}
	for _, name := range []string{"i2b2", "brat"} {
		t.Run(name, func(t *testing.T) {
			f, _ := formats.Lookup(name)
			files, err := Pack(Meta{Name: "demo", Version: "1.0.0", Corpus: "c"}, snap, f, "# demo\n")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := VerifyZip(zipped(t, files)); err != nil {
				t.Fatal(err)
			}
			archived := archiveIDsOf(t, files)
			want := map[string]string{"100-01": "", "731902448217": "100-03", "580114372905": "100-04", "100-02": "",
				"220917001835": "922018377411-01", "note-x": ""}
			if !reflect.DeepEqual(archived, want) {
				t.Fatalf("archive ids %v, want %v", archived, want)
			}
			var docFiles []formats.File
			for _, fl := range files {
				if strings.HasPrefix(fl.Name, "gold/") {
					docFiles = append(docFiles, formats.File{Name: strings.TrimPrefix(fl.Name, "gold/"), Data: fl.Data})
				}
			}
			back, err := f.Read(docFiles, formats.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			patients := map[string]string{}
			for _, d := range back {
				patients[d.ID] = d.Patient
			}
			if want := map[string]string{"100-01": "100", "100-02": "100", "100-03": "100", "100-04": "100", "922018377411-01": "922018377411",
				"note-x": "note-x"}; !reflect.DeepEqual(patients, want) {
				t.Fatalf("read back %v, want %v", patients, want)
			}
		})
	}
}

// A format whose files cannot say a document's split (i2b2 here) has it in
// release.json, beside the document's hash; a document of no split has none.
// The archive verifies: the split is not part of the content hash.
func TestArchiveListsSplits(t *testing.T) {
	snap := Snapshot{Sets: map[string][]pipeline.Document{"gold": {
		{ID: "100-01", Patient: "100", RecordOrder: 1, Split: "train", Text: "Seen by Dr. Li."},
		{ID: "100-02", Patient: "100", RecordOrder: 2, Split: "train", Text: "Back again."},
		{ID: "200-01", Patient: "200", RecordOrder: 1, Split: "dev", Text: "Another patient."},
		{ID: "300-01", Patient: "300", RecordOrder: 1, Text: "No split."},
	}}}
	f, _ := formats.Lookup("i2b2")
	files, err := Pack(Meta{Name: "demo", Version: "1.0.0", Corpus: "c"}, snap, f, "# demo\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyZip(zipped(t, files)); err != nil {
		t.Fatal(err)
	}
	splits := entryField(t, files, func(e Entry) string { return e.Split })
	if want := map[string]string{"100-01": "train", "100-02": "train", "200-01": "dev", "300-01": ""}; !reflect.DeepEqual(splits, want) {
		t.Errorf("splits %v, want %v", splits, want)
	}
	if strings.Count(string(file(files, MetaFile).Data), `"split"`) != 3 {
		t.Errorf("release.json lists a split for the document of none:\n%s", file(files, MetaFile).Data)
	}
}

// TestVerifySharedReleaseSpanIDs: a release whose datasheet marks it for
// outside sharing fails verification when a span keeps an id that is not
// one a resynthesis gives (a source's, which may name the patient), in
// every format that carries such ids; an internal release may keep them.
func TestVerifySharedReleaseSpanIDs(t *testing.T) {
	for _, format := range []string{"i2b2", "jsonl", "brat"} {
		f, _ := formats.Lookup(format)
		for _, c := range []struct {
			id    string
			share bool
			ok    bool
		}{{"Harlan Valdez MRN 4471123", true, false}, {"Harlan Valdez MRN 4471123", false, true}, {"T1", true, true}} {
			snap := sample()
			for _, docs := range snap.Sets {
				for i := range docs {
					for j := range docs[i].Spans {
						docs[i].Spans[j].ID = fmt.Sprintf("T%d", j+1)
					}
					docs[i].Spans[0].ID = c.id
				}
			}
			sheet := Datasheet{Name: "demo", Version: "1.0.0", Share: c.share}.Markdown()
			files, err := Pack(Meta{Name: "demo", Version: "1.0.0", Corpus: "c"}, snap, f, sheet)
			if err != nil {
				t.Fatal(err)
			}
			_, err = VerifyZip(zipped(t, files))
			ok := c.ok || format == "brat" // BRAT writes T ids anew for ids it cannot carry
			switch {
			case ok && err != nil:
				t.Errorf("%s, id %q, shared %v: %v", format, c.id, c.share, err)
			case !ok && (err == nil || !strings.Contains(err.Error(), "a span's id is not one a resynthesis gives")):
				t.Errorf("%s, id %q, shared %v: verified (%v)", format, c.id, c.share, err)
			case err != nil && strings.Contains(err.Error(), "Valdez"):
				t.Errorf("the error writes the id: %v", err)
			}
		}
	}
}
