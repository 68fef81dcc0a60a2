package formats

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"deidcorpus/pipeline"
)

// inputTree makes, in a new working directory, what a user passes to
// import: the same file name in two directories, bad files deep in a
// directory and inside an archive, and a directory of other formats' files.
func inputTree(t *testing.T) {
	t.Helper()
	good := `<r><TEXT>abc</TEXT><TAGS><NAME id="P0" start="0" end="1" TYPE="DOCTOR"/></TAGS></r>`
	bad := `<r><TEXT>abc</TEXT><TAGS><NAME id="P0" start="1" end="9" TYPE="DOCTOR"/></TAGS></r>`
	var zipped bytes.Buffer
	if err := WriteZip(&zipped, []File{{Name: "101-01.xml", Data: []byte(bad)}}); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	for name, data := range map[string]string{
		"dupA/100-01.xml":    good,
		"dupB/100-01.xml":    good,
		"sub/b/101-01.xml":   bad,
		"sub/README.md":      "notes",
		"arch/bad.zip":       zipped.String(),
		"jl/documents.jsonl": `{"id":"100-03","text":"abc"}`,
		"jl/notes.txt":       "abc",
		"jl/notes.ann":       "",
		"jl/z.csv":           "a,b",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir("empty", 0o755); err != nil {
		t.Fatal(err)
	}
}

// Errors name a file by the path the user gave joined with its path under
// it, which the user can open; a file the user named that the format does
// not read is an error, and so is an input that holds only such files.
func TestScanErrorsNameTheGivenPath(t *testing.T) {
	inputTree(t)
	cases := []struct {
		name, format string
		paths        []string
		want         string // the error's beginning; "" for none
	}{
		{"same name in two directories", "i2b2", []string{"dupA/", "dupB/"},
			`dupB/100-01.xml: document id "100-01" also comes from dupA/100-01.xml`},
		{"file deep in a directory", "i2b2", []string{"sub/"}, "sub/b/101-01.xml:1: tag P0 (NAME/DOCTOR): end 9"},
		{"file named itself", "i2b2", []string{"sub/b/101-01.xml"}, "sub/b/101-01.xml:1: tag P0"},
		{"archive in a directory", "i2b2", []string{"arch/"}, "arch/bad.zip:101-01.xml:1: tag P0"},
		{"archive named itself", "i2b2", []string{"arch/bad.zip"}, "arch/bad.zip:101-01.xml:1: tag P0"},
		{"named file of another format", "i2b2", []string{"jl/documents.jsonl"},
			"jl/documents.jsonl: format i2b2 reads .xml files only (try --format jsonl)"},
		{"named file of another format after good ones", "i2b2", []string{"dupA/", "jl/notes.txt"},
			"jl/notes.txt: format i2b2 reads .xml files only (try --format brat or --format mimic)"},
		{"directory of other formats' files", "i2b2", []string{"jl/"},
			"no i2b2 documents in the given input, only files it does not read: jl/documents.jsonl, jl/notes.ann, jl/notes.txt " +
				"and 1 more; format i2b2 reads .xml files only (try --format brat or --format csv or --format jsonl or --format mimic)"},
		{"other files in a directory skipped", "jsonl", []string{"jl/"}, ""},
		{"empty directory", "i2b2", []string{"empty/"}, ErrNoDocuments.Error()},
	}
	for _, c := range cases {
		f, err := Lookup(c.format)
		if err != nil {
			t.Fatal(err)
		}
		err = f.Scan(Paths(c.paths...), ReadOptions{}, func(pipeline.Document) error { return nil })
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
	}
}

// Readers take ids from, and pair files by, Name, which stays relative to
// the directory or archive; Path is for messages.
func TestPathsKeepNamesRelative(t *testing.T) {
	inputTree(t)
	files, err := ReadPaths("sub/b/101-01.xml", "sub/", "arch/")
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]any
	for _, f := range files {
		got = append(got, [3]any{f.Name, f.Path, f.Given})
	}
	want := [][3]any{
		{"101-01.xml", "sub/b/101-01.xml", true},
		{"README.md", "sub/README.md", false},
		{"b/101-01.xml", "sub/b/101-01.xml", false},
		{"bad.zip:101-01.xml", "arch/bad.zip:101-01.xml", false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// An archive of the same files is the same bytes, and its members carry a
// real date (a zero time lists as 1980-00-00).
func TestZipFilesAreReproducible(t *testing.T) {
	archive := func() []byte {
		var buf bytes.Buffer
		z := NewZipFiles(&buf)
		for _, name := range []string{"a.xml", "b/c.xml"} {
			w, err := z.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(w, "<doc>%s</doc>", name)
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a := archive()
	if !bytes.Equal(a, archive()) {
		t.Fatal("two archives of the same files differ")
	}
	r, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.File {
		if m := f.Modified.UTC(); m.Year() != 1980 || m.Month() != time.January || m.Day() != 1 {
			t.Errorf("%s: modified %v, want 1980-01-01", f.Name, f.Modified)
		}
	}
}

// Files packed into one archive (an import job's input) keep their names:
// two of one name are an error naming both, not two members of that name.
func TestZipFromRefusesTwoFilesOfOneName(t *testing.T) {
	inputTree(t)
	var buf bytes.Buffer
	_, err := ZipFrom(&buf, Paths("dupA/", "dupB/"))
	if err == nil || !strings.Contains(err.Error(), "dupB/100-01.xml: dupA/100-01.xml is named 100-01.xml too") {
		t.Fatalf("got %v", err)
	}
	n, err := ZipFrom(&buf, Paths("dupA/", "sub/"))
	if err != nil || n != 3 {
		t.Fatalf("%d files, %v", n, err)
	}
}

// A job reads the user's files from the archive ZipUpload stored, and its
// errors name the paths the user gave, as a direct import's do; the members
// of an archive ZipFrom wrote are named as its members.
func TestUploadKeepsTheUsersPaths(t *testing.T) {
	inputTree(t)
	f, err := Lookup("i2b2")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		zip   func(io.Writer, Source) (int, error)
		paths []string
		want  string
	}{
		{ZipUpload, []string{"sub/"}, "sub/b/101-01.xml:1: tag P0"},
		{ZipUpload, []string{"arch/"}, "arch/bad.zip:101-01.xml:1: tag P0"},
		{ZipFrom, []string{"sub/"}, "import-input.zip:b/101-01.xml:1: tag P0"},
	} {
		var buf bytes.Buffer
		if _, err := c.zip(&buf, Paths(c.paths...)); err != nil {
			t.Fatal(err)
		}
		stored := ZipAt("import-input.zip", bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		err := f.Scan(stored, ReadOptions{}, func(pipeline.Document) error { return nil })
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %s", c.paths, err, c.want)
		}
	}
}

// Files written from notes are the owner's only, including one that was
// there before with wider permissions (O_TRUNC alone keeps a file's mode).
func TestExportFilesArePrivate(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "100-02.xml")
	if err := os.WriteFile(old, []byte("an older, longer export"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	docs := []pipeline.Document{{ID: "100-01", Text: "Seen by Dr. Lee."}, {ID: "100-02", Text: "Lee"}}
	files, err := WriteI2B2(docs)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteDir(dir, append(files, File{Name: "sub/100-03.xml", Data: files[0].Data})); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"100-01.xml", "100-02.xml", "sub/100-03.xml"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s: mode %v, want 0600", name, perm)
		}
	}
	if info, err := os.Stat(filepath.Join(dir, "sub")); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("a directory made for the files: %v %v, want mode 0700 (the names are document ids)", info, err)
	}
	got, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, files[1].Data) {
		t.Errorf("the file there before was not replaced: %q", got)
	}
}

// An upload is read where it is asked each time its Source is read (an
// import reads it twice): a plain file whole and named by the user, an
// archive as its members, the same the second time.
func TestUploadCanBeReadTwice(t *testing.T) {
	var zipped bytes.Buffer
	members := []File{{Name: "100-01.xml", Data: []byte("a")}, {Name: "100-02.xml", Data: []byte("b")}}
	if err := WriteZip(&zipped, members); err != nil {
		t.Fatal(err)
	}
	want := []File{
		{Name: "notes.zip:100-01.xml", Data: []byte("a"), Path: "notes.zip:100-01.xml"},
		{Name: "notes.zip:100-02.xml", Data: []byte("b"), Path: "notes.zip:100-02.xml"},
		{Name: "100-03.xml", Data: []byte("c"), Given: true},
	}
	srcs := []Source{
		Upload("notes.zip", bytes.NewReader(zipped.Bytes()), int64(zipped.Len())),
		Upload("100-03.xml", strings.NewReader("c"), 1),
	}
	for range 2 {
		var got []File
		for _, src := range srcs {
			files, err := Collect(src)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, files...)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	}
	_, err := Collect(Upload("100-04.xml", strings.NewReader("short"), 10))
	if err == nil || err.Error() != "100-04.xml: cannot read: the upload ended after 5 of its 10 bytes" {
		t.Fatalf("got %v", err)
	}
}
