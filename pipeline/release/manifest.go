package release

import (
	"bufio"
	"cmp"
	"container/heap"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"

	"deidcorpus/pipeline"
)

// manifestRun is how many entries a manifestBuilder holds before it writes
// them, sorted, to its temporary file: about 7 MB.
const manifestRun = 1 << 16

// manifestBuilder collects a manifest's entries as documents come, in any
// order, and gives them back sorted by set and id. Memory holds one run of
// entries; the others wait in a temporary file, each sorted, and are merged
// as they are read back, so a manifest of any size costs a few megabytes.
type manifestBuilder struct {
	run      []digestEntry
	runSize  int
	file     *os.File
	unlinked bool    // file is already removed from its directory
	runs     []int64 // end offset of each run written to file
	err      error
}

// digestEntry is an Entry with its hash as bytes: the half the size.
type digestEntry struct {
	set, id string
	hash    [sha256.Size]byte
}

func (a digestEntry) compare(b digestEntry) int {
	return cmp.Or(cmp.Compare(a.set, b.set), cmp.Compare(a.id, b.id))
}

func (a digestEntry) entry() Entry {
	return Entry{Set: a.set, ID: a.id, Hash: hex.EncodeToString(a.hash[:])}
}

func newManifestBuilder() *manifestBuilder { return &manifestBuilder{runSize: manifestRun} }

// add notes the entries of a batch of a set's documents.
func (b *manifestBuilder) add(set string, docs []pipeline.Document) {
	for _, d := range docs {
		b.run = append(b.run, digestEntry{set: set, id: d.ID, hash: docDigest(d)})
		if len(b.run) >= b.runSize {
			b.spill()
		}
	}
}

// spill writes the run in memory, sorted, to the temporary file.
func (b *manifestBuilder) spill() {
	if b.err != nil || len(b.run) == 0 {
		b.run = b.run[:0]
		return
	}
	if b.file == nil {
		if b.file, b.err = os.CreateTemp("", "deidcorpus-manifest-"); b.err != nil {
			b.err = fmt.Errorf("release manifest: %w", b.err)
			return
		}
		// Unlinked at once where the system allows it: a process that dies
		// leaves nothing behind.
		b.unlinked = os.Remove(b.file.Name()) == nil
	}
	slices.SortFunc(b.run, digestEntry.compare)
	w := bufio.NewWriter(b.file)
	var n [binary.MaxVarintLen64]byte
	for _, e := range b.run {
		for _, s := range []string{e.set, e.id} {
			w.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
			w.WriteString(s)
		}
		w.Write(e.hash[:])
	}
	if err := w.Flush(); err != nil {
		b.err = fmt.Errorf("release manifest: %w", err)
		return
	}
	end, err := b.file.Seek(0, io.SeekCurrent)
	if err != nil {
		b.err = fmt.Errorf("release manifest: %w", err)
		return
	}
	b.runs = append(b.runs, end)
	clear(b.run) // let the ids go
	b.run = b.run[:0]
}

// each calls fn with every entry, sorted by set and id, and then the root
// hash over them all.
func (b *manifestBuilder) each(fn func(e digestEntry) error) (root string, err error) {
	slices.SortFunc(b.run, digestEntry.compare)
	if b.err != nil {
		return "", b.err
	}
	var m merge
	if len(b.run) > 0 {
		m = append(m, &runReader{mem: b.run})
	}
	start := int64(0)
	for _, end := range b.runs {
		m = append(m, &runReader{r: bufio.NewReaderSize(io.NewSectionReader(b.file, start, end-start), 32<<10)})
		start = end
	}
	for i := len(m) - 1; i >= 0; i-- { // drop runs that hold nothing, fill the others
		if ok, err := m[i].next(); err != nil {
			return "", err
		} else if !ok {
			m = slices.Delete(m, i, i+1)
		}
	}
	heap.Init(&m)
	h := sha256.New()
	var prev digestEntry
	for n := 0; len(m) > 0; n++ {
		r := m[0]
		if n > 0 && r.head.compare(prev) == 0 {
			return "", fmt.Errorf("document %s appears twice in set %s", r.head.id, r.head.set)
		}
		prev = r.head
		io.WriteString(h, r.head.entry().line())
		if err := fn(r.head); err != nil {
			return "", err
		}
		if ok, err := r.next(); err != nil {
			return "", err
		} else if ok {
			heap.Fix(&m, 0)
		} else {
			heap.Pop(&m)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// root is the root hash over the entries.
func (b *manifestBuilder) root() (string, error) {
	return b.each(func(digestEntry) error { return nil })
}

// Close removes the temporary file.
func (b *manifestBuilder) Close() error {
	if b.file == nil {
		return nil
	}
	err := b.file.Close()
	if !b.unlinked {
		if rm := os.Remove(b.file.Name()); err == nil {
			err = rm
		}
	}
	b.file = nil
	return err
}

// runReader reads one sorted run: from memory, or from the temporary file.
type runReader struct {
	mem  []digestEntry
	r    *bufio.Reader
	head digestEntry
}

func (r *runReader) next() (bool, error) {
	if r.r == nil {
		if len(r.mem) == 0 {
			return false, nil
		}
		r.head, r.mem = r.mem[0], r.mem[1:]
		return true, nil
	}
	var fields [2]string
	for i := range fields {
		n, err := binary.ReadUvarint(r.r)
		if err == io.EOF && i == 0 {
			return false, nil
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return false, fmt.Errorf("release manifest: reading a run back: %w", err)
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r.r, buf); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return false, fmt.Errorf("release manifest: reading a run back: %w", err)
		}
		fields[i] = string(buf)
	}
	r.head = digestEntry{set: fields[0], id: fields[1]}
	if _, err := io.ReadFull(r.r, r.head.hash[:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("release manifest: reading a run back: %w", err)
	}
	return true, nil
}

// merge is a heap of runs by their next entry.
type merge []*runReader

func (m merge) Len() int           { return len(m) }
func (m merge) Less(i, j int) bool { return m[i].head.compare(m[j].head) < 0 }
func (m merge) Swap(i, j int)      { m[i], m[j] = m[j], m[i] }
func (m *merge) Push(x any)        { *m = append(*m, x.(*runReader)) }
func (m *merge) Pop() any {
	old := *m
	r := old[len(old)-1]
	*m = old[:len(old)-1]
	return r
}
