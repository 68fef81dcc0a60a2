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
	"strings"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

// Meta describes a release in its archive (release.json).
type Meta struct {
	Name     string   `json:"name"`
	Version  string   `json:"version"`
	Corpus   string   `json:"corpus"`
	Format   string   `json:"format"`
	Parent   string   `json:"parent,omitempty"` // name@version
	Manifest Manifest `json:"manifest"`
}

// Files of an archive besides the documents.
const (
	ManifestFile  = "MANIFEST"
	DatasheetFile = "DATASHEET.md"
	MetaFile      = "release.json"
)

// Pack renders a release as archive files: each annotation set's documents in
// a directory of its name, in the given format, the datasheet, release.json,
// and a MANIFEST with every file's SHA-256 and the release's root hash. The
// files are sorted by name, the MANIFEST last.
func Pack(meta Meta, snap Snapshot, f *formats.Format, datasheet string) ([]formats.File, error) {
	sets := make([]string, 0, len(snap.Sets))
	for s := range snap.Sets {
		sets = append(sets, s)
	}
	sort.Strings(sets)
	each := func(fn func(set string, docs []pipeline.Document) error) error {
		for _, set := range sets {
			if err := fn(set, snap.Sets[set]); err != nil {
				return err
			}
		}
		return nil
	}
	var c formats.Collector
	if err := PackTo(meta, each, f, datasheet, c.Create); err != nil {
		return nil, err
	}
	files := c.Files()
	docs := files[:len(files)-1]
	sort.Slice(docs, func(i, j int) bool { return docs[i].Name < docs[j].Name })
	return files, nil
}

// PackTo writes the files of Pack's archive to create, in the order they
// are made: the documents' files set by set, DATASHEET.md, release.json, then
// the MANIFEST. each calls its function with a snapshot's documents, set
// after set, a batch at a time (all of a set's at once if the format is not
// Batched); PackTo calls it twice, for the manifest that release.json holds,
// then to write the documents: it holds a batch and the files' hashes.
func PackTo(meta Meta, each func(fn func(set string, docs []pipeline.Document) error) error, f *formats.Format, datasheet string,
	create func(name string) (io.Writer, error)) error {
	if f.Write == nil {
		return fmt.Errorf("format %s cannot be written", f.Name)
	}
	var entries []Entry
	if err := each(func(set string, docs []pipeline.Document) error {
		entries = appendEntries(entries, set, docs)
		return nil
	}); err != nil {
		return err
	}
	meta.Format = f.Name
	meta.Manifest = manifestOf(entries)

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
	metaJSON, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	for _, file := range []formats.File{{Name: DatasheetFile, Data: []byte(datasheet)}, {Name: MetaFile, Data: append(metaJSON, '\n')}} {
		w, err := hashed(file.Name)
		if err != nil {
			return err
		}
		if _, err := w.Write(file.Data); err != nil {
			return err
		}
	}
	finish()
	sort.Slice(sums, func(i, j int) bool { return sums[i].name < sums[j].name })
	w, err := create(ManifestFile)
	if err != nil {
		return err
	}
	m := bufio.NewWriter(w)
	fmt.Fprintf(m, "# deidcorpus release %s format %s\n# root %s\n", Ref(meta.Name, meta.Version), f.Name, meta.Manifest.Root)
	for _, s := range sums {
		fmt.Fprintf(m, "%s  %s\n", hex.EncodeToString(s.digest[:]), s.name)
	}
	return m.Flush()
}

// Verification is what Verify checked.
type Verification struct {
	Name, Version, Root, Format string
	Files, Documents            int
}

// Verify recomputes every hash of an archive's files (names relative to the
// archive, as Unzip gives them after the "archive:" prefix): each file against
// the MANIFEST, no file missing or unlisted, and every document's content
// hash and the root hash against release.json. Any difference is an error
// naming the file.
func Verify(files []formats.File) (*Verification, error) {
	byName := map[string][]byte{}
	for _, f := range files {
		name := f.Name
		if i := strings.IndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		byName[name] = f.Data
	}
	manifest, ok := byName[ManifestFile]
	if !ok {
		return nil, errors.New("no MANIFEST in the archive")
	}
	listed := map[string]bool{}
	var root string
	sc := bufio.NewScanner(bytes.NewReader(manifest))
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if r, ok := strings.CutPrefix(text, "# root "); ok {
			root = r
			continue
		}
		if strings.HasPrefix(text, "#") || text == "" {
			continue
		}
		sum, name, ok := strings.Cut(text, "  ")
		if !ok {
			return nil, fmt.Errorf("MANIFEST:%d: malformed line %q", line, text)
		}
		data, present := byName[name]
		if !present {
			return nil, fmt.Errorf("%s: listed in MANIFEST but missing", name)
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			return nil, fmt.Errorf("%s: SHA-256 differs from MANIFEST: the file was changed", name)
		}
		listed[name] = true
	}
	for name := range byName {
		if name != ManifestFile && !listed[name] {
			return nil, fmt.Errorf("%s: not listed in MANIFEST: the file was added", name)
		}
	}
	var meta Meta
	if err := json.Unmarshal(byName[MetaFile], &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", MetaFile, err)
	}
	if meta.Manifest.Root != root || rootHash(meta.Manifest.Entries) != root {
		return nil, fmt.Errorf("%s: root hash differs from MANIFEST", MetaFile)
	}
	f, err := formats.Lookup(meta.Format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", MetaFile, err)
	}
	sets := map[string][]formats.File{}
	for name, data := range byName {
		if dir, rest, ok := strings.Cut(name, "/"); ok {
			sets[dir] = append(sets[dir], formats.File{Name: rest, Data: data})
		}
	}
	snap := Snapshot{Sets: map[string][]pipeline.Document{}}
	for set, files := range sets {
		sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
		docs, err := f.Read(files, formats.ReadOptions{AllowOverlap: true})
		if err != nil {
			return nil, fmt.Errorf("set %s: %w", set, err)
		}
		snap.Sets[set] = docs
	}
	recomputed := snap.Manifest()
	if recomputed.Root != root {
		want := map[string]string{}
		for _, e := range meta.Manifest.Entries {
			want[e.Set+"/"+e.ID] = e.Hash
		}
		for _, e := range recomputed.Entries {
			if want[e.Set+"/"+e.ID] != e.Hash {
				return nil, fmt.Errorf("document %s/%s: content hash differs from the release's", e.Set, e.ID)
			}
		}
		return nil, errors.New("the documents do not add up to the release's root hash (a document is missing or extra)")
	}
	return &Verification{Name: meta.Name, Version: meta.Version, Root: root, Format: meta.Format,
		Files: len(listed), Documents: len(recomputed.Entries)}, nil
}
