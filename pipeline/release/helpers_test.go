package release

import (
	"bytes"
	"encoding/hex"
	"io"
	"math"
	"sort"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

// What the tests make whole that the package makes a batch at a time.

// DocHash is a document's content hash (hex).
func DocHash(d pipeline.Document) string {
	sum := docDigest(d)
	return hex.EncodeToString(sum[:])
}

// Manifest computes the manifest of a snapshot.
func (s Snapshot) Manifest() (Manifest, error) {
	b := newManifestBuilder()
	defer b.Close()
	for set, docs := range s.Sets {
		b.add(set, docs)
	}
	m := Manifest{Entries: []Entry{}}
	root, err := b.each(func(e digestEntry) error {
		m.Entries = append(m.Entries, e.entry())
		return nil
	})
	m.Root = root
	return m, err
}

// Encode writes a snapshot compactly (gzipped JSON) for storage.
func (s Snapshot) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	sets := make([]string, 0, len(s.Sets))
	for set := range s.Sets {
		sets = append(sets, set)
	}
	sort.Strings(sets)
	for _, set := range sets {
		enc.Set(set)
		enc.Add(s.Sets[set])
	}
	if _, err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decode reads a snapshot written by Encode.
func Decode(r io.Reader) (Snapshot, error) {
	s := Snapshot{Sets: map[string][]pipeline.Document{}}
	err := Each(r, math.MaxInt, func(set string, docs []pipeline.Document) error {
		s.Sets[set] = docs // a whole set: one batch
		return nil
	})
	return s, err
}

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
