package release

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"

	"deidcorpus/internal/extsort"
	"deidcorpus/pipeline"
)

// manifestRun is how many entries a manifestBuilder holds before it writes
// them, sorted, to its temporary file: about 7 MB.
const manifestRun = 1 << 16

// manifestBuilder collects a manifest's entries as documents come, in any
// order, and gives them back sorted by set and id. Memory holds one run of
// entries; the others wait in a temporary file, each sorted, and are merged
// as they are read back (see extsort), so a manifest of any size costs a
// few megabytes. Errors stick: each reports the first.
type manifestBuilder struct {
	entries *extsort.Sorter[digestEntry]
	err     error
}

// digestEntry is an Entry with its hash as bytes: the half the size.
type digestEntry struct {
	set, id   string
	archiveID string // Entry.ArchiveID
	split     string // Entry.Split
	hash      [sha256.Size]byte
}

func (a digestEntry) compare(b digestEntry) int {
	return cmp.Or(cmp.Compare(a.set, b.set), cmp.Compare(a.id, b.id))
}

func (a digestEntry) entry() Entry {
	return Entry{Set: a.set, ID: a.id, Hash: hex.EncodeToString(a.hash[:]), ArchiveID: a.archiveID, Split: a.split}
}

// digestOrder sorts entries by set and id, and writes each to the temporary
// file as its strings, their lengths first, and its hash.
var digestOrder = extsort.Order[digestEntry]{
	Compare: digestEntry.compare,
	Append: func(buf []byte, e digestEntry) []byte {
		for _, s := range []string{e.set, e.id, e.archiveID, e.split} {
			buf = extsort.AppendString(buf, s)
		}
		return append(buf, e.hash[:]...)
	},
	Decode: func(r *bufio.Reader) (digestEntry, error) {
		var e digestEntry
		for _, s := range []*string{&e.set, &e.id, &e.archiveID, &e.split} {
			var err error
			if *s, err = extsort.ReadString(r, math.MaxInt); err != nil {
				return e, err
			}
		}
		_, err := io.ReadFull(r, e.hash[:])
		return e, err
	},
}

func newManifestBuilder() *manifestBuilder { return newManifestBuilderRuns(manifestRun) }

// newManifestBuilderRuns is a manifestBuilder that writes runs of runSize
// entries.
func newManifestBuilderRuns(runSize int) *manifestBuilder {
	return &manifestBuilder{entries: extsort.New("release manifest", runSize, digestOrder)}
}

// add notes the entries of a batch of a set's documents.
func (b *manifestBuilder) add(set string, docs []pipeline.Document) {
	b.addArchived(set, docs, nil)
}

// addArchived is add with the ids an archive names the documents by
// (Entry.ArchiveID), one per document, "" for one named by its own; nil:
// none.
func (b *manifestBuilder) addArchived(set string, docs []pipeline.Document, archiveIDs []string) {
	for i, d := range docs {
		e := digestEntry{set: set, id: d.ID, split: d.Split, hash: docDigest(d)}
		if archiveIDs != nil {
			e.archiveID = archiveIDs[i]
		}
		if err := b.entries.Add(e); err != nil && b.err == nil {
			b.err = err
		}
	}
}

// each calls fn with every entry, sorted by set and id, and then the root
// hash over them all.
func (b *manifestBuilder) each(fn func(e digestEntry) error) (root string, err error) {
	if b.err != nil {
		return "", b.err
	}
	c := b.entries.Cursor()
	h := sha256.New()
	var prev digestEntry
	for n := 0; c.Next(); n++ {
		e := c.Value()
		if n > 0 && e.compare(prev) == 0 {
			return "", fmt.Errorf("document %s appears twice in set %s", e.id, e.set)
		}
		prev = e
		io.WriteString(h, e.entry().line())
		if err := fn(e); err != nil {
			return "", err
		}
	}
	if err := c.Err(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// root is the root hash over the entries.
func (b *manifestBuilder) root() (string, error) {
	return b.each(func(digestEntry) error { return nil })
}

// Close removes the temporary file.
func (b *manifestBuilder) Close() error { return b.entries.Close() }
