package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
// and a MANIFEST with every file's SHA-256 and the release's root hash.
func Pack(meta Meta, snap Snapshot, f *formats.Format, datasheet string) ([]formats.File, error) {
	if f.Write == nil {
		return nil, fmt.Errorf("format %s cannot be written", f.Name)
	}
	meta.Format = f.Name
	meta.Manifest = snap.Manifest()
	var files []formats.File
	sets := make([]string, 0, len(snap.Sets))
	for s := range snap.Sets {
		sets = append(sets, s)
	}
	sort.Strings(sets)
	for _, set := range sets {
		written, err := f.Write(snap.Sets[set])
		if err != nil {
			return nil, fmt.Errorf("set %s: %w", set, err)
		}
		for _, w := range written {
			files = append(files, formats.File{Name: path.Join(set, w.Name), Data: w.Data})
		}
	}
	metaJSON, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	files = append(files, formats.File{Name: DatasheetFile, Data: []byte(datasheet)},
		formats.File{Name: MetaFile, Data: append(metaJSON, '\n')})
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })

	var m bytes.Buffer
	fmt.Fprintf(&m, "# deidcorpus release %s format %s\n# root %s\n", Ref(meta.Name, meta.Version), f.Name, meta.Manifest.Root)
	for _, file := range files {
		sum := sha256.Sum256(file.Data)
		fmt.Fprintf(&m, "%s  %s\n", hex.EncodeToString(sum[:]), file.Name)
	}
	return append(files, formats.File{Name: ManifestFile, Data: m.Bytes()}), nil
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
