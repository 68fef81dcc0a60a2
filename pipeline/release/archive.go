package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"sort"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

// Meta describes a release in its archive (release.json).
type Meta struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Corpus  string `json:"corpus"`
	Format  string `json:"format"`
	// TagSet is the corpus's tag set (phi.Names), which an import of the
	// archive into a new corpus takes; empty in archives made before it.
	TagSet   string   `json:"tagset,omitempty"`
	Parent   string   `json:"parent,omitempty"` // name@version
	Manifest Manifest `json:"manifest"`
}

// Files of an archive besides the documents.
const (
	ManifestFile  = "MANIFEST"
	DatasheetFile = "DATASHEET.md"
	MetaFile      = "release.json"
)

// PackTo writes the files of Pack's archive to create, in the order they
// are made: the documents' files set by set, DATASHEET.md, release.json, then
// the MANIFEST. each calls its function with a snapshot's documents, set
// after set, a batch at a time (all of a set's at once if the format is not
// Batched), a patient's documents in one batch (as Each gives them). Memory
// holds a batch, a digest per file and a run of the manifest's entries (see
// manifestBuilder). If meta.Manifest.Root is set, the documents must add up
// to it. In a format whose files cannot carry a document's id, release.json
// lists the id each is read back with (see carriesIDs); in one whose file
// names give the patient, the id a document is written under when its own
// would not (see groupedArchiveIDs).
func PackTo(meta Meta, each Reader, f *formats.Format, datasheet string,
	create func(name string) (io.Writer, error)) error {
	if f.Write == nil {
		return fmt.Errorf("format %s cannot be written", f.Name)
	}
	if f.RebuildsText {
		return fmt.Errorf("format %s keeps tokens, not the text, so its archive could never be verified against the release's content hashes: release the corpus in another format, or export it as %s with `deidcorpus export`", f.Name, f.Name)
	}
	meta.Format = f.Name
	want := meta.Manifest.Root
	carries, err := carriesIDs(f)
	if err != nil {
		return err
	}
	entries := newManifestBuilder()
	defer entries.Close()

	// Files are written one after another (a Stream never goes back to a
	// file), so a file is whole once the next is created: only its digest
	// is kept, not its hash's running state.
	type sum struct {
		name   string
		digest [sha256.Size]byte
	}
	var (
		sums []sum
		open hash.Hash // the file being written
	)
	finish := func() {
		if open != nil {
			sums[len(sums)-1].digest = [sha256.Size]byte(open.Sum(nil))
		}
	}
	hashed := func(name string) (io.Writer, error) {
		w, err := create(name)
		if err != nil {
			return nil, err
		}
		finish()
		open = sha256.New()
		sums = append(sums, sum{name: name})
		return io.MultiWriter(w, open), nil
	}
	var stream *formats.Stream
	var current string
	closeSet := func() error {
		if stream == nil {
			return nil
		}
		if err := stream.Close(); err != nil {
			return fmt.Errorf("set %s: %w", current, err)
		}
		return nil
	}
	if err := each(func(set string, docs []pipeline.Document) error {
		if stream == nil || set != current {
			if err := closeSet(); err != nil {
				return err
			}
			current = set
			stream = formats.NewStream(f, func(name string) (io.Writer, error) { return hashed(path.Join(set, name)) })
		}
		if carries {
			ids, written, err := groupedArchiveIDs(f, docs)
			if err != nil {
				return fmt.Errorf("set %s: %w", set, err)
			}
			entries.addArchived(set, docs, ids)
			docs = written
		} else {
			ids, err := archiveIDs(f, docs)
			if err != nil {
				return fmt.Errorf("set %s: %w", set, err)
			}
			entries.addArchived(set, docs, ids)
		}
		if err := stream.Write(docs); err != nil {
			return fmt.Errorf("set %s: %w", set, err)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := closeSet(); err != nil {
		return err
	}
	w, err := hashed(DatasheetFile)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, datasheet); err != nil {
		return err
	}
	if w, err = hashed(MetaFile); err != nil {
		return err
	}
	root, err := writeMeta(w, meta, entries)
	if err != nil {
		return err
	}
	if want != "" && root != want {
		return fmt.Errorf("the documents add up to root hash %s, not the release's %s: its stored snapshot is damaged", root, want)
	}
	finish()
	sort.Slice(sums, func(i, j int) bool { return sums[i].name < sums[j].name })
	if w, err = create(ManifestFile); err != nil {
		return err
	}
	m := bufio.NewWriter(w)
	meta.Manifest.Root = root
	for _, line := range manifestHeader(meta) {
		fmt.Fprintln(m, line)
	}
	for _, s := range sums {
		fmt.Fprintf(m, "%s  %s\n", hex.EncodeToString(s.digest[:]), s.name)
	}
	return m.Flush()
}

// manifestHeader is the MANIFEST's comment lines, the only ones it has: what
// release.json says, written where people read it. Verify checks them line
// by line against release.json, whose bytes the MANIFEST hashes, and refuses
// any other comment, which nothing would check.
func manifestHeader(meta Meta) []string {
	return []string{
		"# deidcorpus release " + Ref(meta.Name, meta.Version) + " format " + meta.Format,
		"# root " + meta.Manifest.Root,
	}
}

// writeMeta writes release.json, byte for byte what json.MarshalIndent
// writes of meta with the manifest of entries, the entries as they are
// merged: memory holds none of them. It returns the root hash.
func writeMeta(w io.Writer, meta Meta, entries *manifestBuilder) (string, error) {
	meta.Manifest = Manifest{}
	head, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return "", err
	}
	// The manifest is Meta's last field: what comes before it is written
	// as is, the manifest by hand.
	i := bytes.LastIndex(head, []byte(`"manifest": `))
	if i < 0 {
		return "", errors.New("release.json: no manifest field")
	}
	bw := bufio.NewWriter(w)
	bw.Write(head[:i])
	bw.WriteString(`"manifest": {` + "\n" + `    "documents": [`)
	n := 0
	root, err := entries.each(func(e digestEntry) error {
		line, err := json.MarshalIndent(e.entry(), "      ", "  ")
		if err != nil {
			return err
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n      ")
		_, err = bw.Write(line)
		n++
		return err
	})
	if err != nil {
		return "", err
	}
	if n > 0 {
		bw.WriteString("\n    ")
	}
	rootJSON, _ := json.Marshal(root) // a string always marshals
	bw.WriteString("],\n" + `    "root": `)
	bw.Write(rootJSON)
	bw.WriteString("\n  }\n}\n")
	return root, bw.Flush()
}
