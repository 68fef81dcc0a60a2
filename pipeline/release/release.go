// Package release freezes corpora into verifiable snapshots: a canonical
// content hash per document and a root hash over them (the manifest), the
// diff between two snapshots, and release archives with a MANIFEST that
// `deidcorpus release verify` checks byte for byte.
package release

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"

	"deidcorpus/pipeline"
)

// Snapshot is the frozen content of a release: for each annotation set, the
// documents with that set's spans.
type Snapshot struct {
	Sets map[string][]pipeline.Document `json:"sets"`
}

// Entry is one document's line in a manifest.
type Entry struct {
	Set  string `json:"set"`
	ID   string `json:"id"`
	Hash string `json:"sha256"`
	// ArchiveID is the id the archive's document is read back with, in a
	// format whose files cannot carry a document's own (PhysioNet names a
	// note by patient and note number: "101-1"), or whose file names give
	// the patient where the document's id would not (i2b2, brat, MIMIC:
	// "PATIENT-NN"); verify reads it to tell which document is which. Not
	// part of the root hash: the content hash, over the document's own id,
	// checks the pairing.
	ArchiveID string `json:"archive_id,omitempty"`
	// Split is the document's split (train, dev, test), which no file of
	// i2b2, brat or MIMIC can carry; empty for none. Not part of the root
	// hash (the content hash is the text's and the spans'), but release.json
	// is hashed in the MANIFEST.
	Split string `json:"split,omitempty"`
}

// Manifest lists every document's content hash, sorted by set and id, and
// the root hash over them.
type Manifest struct {
	Entries []Entry `json:"documents"`
	Root    string  `json:"root"`
}

// docDigest is a document's content hash: its id, its text and its spans
// (offsets and type), which every archive format carries, so that an archive
// in any format verifies against the release.
func docDigest(d pipeline.Document) [sha256.Size]byte {
	h := sha256.New()
	io.WriteString(h, d.ID)
	h.Write([]byte{0})
	io.WriteString(h, d.Text)
	h.Write([]byte{0})
	spans := append([]pipeline.Span(nil), d.Spans...)
	sort.Slice(spans, func(i, j int) bool {
		a, b := spans[i], spans[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.End != b.End {
			return a.End < b.End
		}
		return a.Type < b.Type
	})
	for _, s := range spans {
		fmt.Fprintf(h, "%d %d %s\n", s.Start, s.End, s.Type)
	}
	return [sha256.Size]byte(h.Sum(nil))
}

func rootHash(entries []Entry) string {
	h := sha256.New()
	for _, e := range entries {
		io.WriteString(h, e.line())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// line is the entry as the root hash reads it.
func (e Entry) line() string { return e.Set + "\t" + e.ID + "\t" + e.Hash + "\n" }

// Encoder writes a snapshot (gzipped JSON) a batch of documents at a time,
// and makes its manifest on the way: it holds one batch and a run of the
// manifest's entries, never the snapshot. Errors stick: Close reports the first.
type Encoder struct {
	zw      *gzip.Writer
	entries *manifestBuilder
	set     string
	sets    int // sets begun
	docs    int // documents of the current set written
	closed  bool
	root    string
	err     error
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	e := &Encoder{zw: gzip.NewWriter(w), entries: newManifestBuilder()}
	e.write([]byte(`{"sets":{`))
	return e
}

func (e *Encoder) write(p []byte) {
	if e.err == nil {
		_, e.err = e.zw.Write(p)
	}
}

// Set begins an annotation set: the documents added next are its.
func (e *Encoder) Set(name string) {
	if e.sets > 0 {
		e.write([]byte("],"))
	}
	key, _ := json.Marshal(name) // a string always marshals
	e.write(append(key, ':', '['))
	e.set, e.docs = name, 0
	e.sets++
}

// Add writes documents of the current set.
func (e *Encoder) Add(docs []pipeline.Document) {
	for _, d := range docs {
		data, err := json.Marshal(d)
		if err != nil && e.err == nil {
			e.err = err
		}
		if e.docs > 0 {
			e.write([]byte{','})
		}
		e.write(data)
		e.docs++
	}
	e.entries.add(e.set, docs)
}

// Close ends the snapshot and returns its manifest's root hash. Calling it
// again returns the same.
func (e *Encoder) Close() (root string, err error) {
	if e.closed {
		return e.root, e.err
	}
	e.closed = true
	if e.sets > 0 {
		e.write([]byte{']'})
	}
	e.write([]byte("}}\n"))
	if err := e.zw.Close(); err != nil && e.err == nil {
		e.err = err
	}
	if e.err == nil {
		e.root, e.err = e.entries.root()
	}
	if err := e.entries.Close(); err != nil && e.err == nil {
		e.err = err
	}
	return e.root, e.err
}

// Each reads a snapshot written by an Encoder and calls fn with its sets'
// documents, about n at a time, set after set; a set without documents
// comes once with none. A batch ends where a patient's documents do (a
// snapshot holds each patient's together, as EachBatch reads them), so that
// a format naming a patient's files together sees them all (see
// groupedArchiveIDs). It holds a batch, never the snapshot, decoded or not.
func Each(r io.Reader, n int, fn func(set string, docs []pipeline.Document) error) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("release snapshot: %w", err)
	}
	defer zr.Close()
	dec := json.NewDecoder(zr)
	if err := eachSet(dec, n, fn); err != nil {
		return fmt.Errorf("release snapshot: %w", err)
	}
	return nil
}

// eachSet walks {"sets":{"NAME":[DOC,...],...}}.
func eachSet(dec *json.Decoder, n int, fn func(set string, docs []pipeline.Document) error) error {
	expect := func(want json.Delim) error {
		tok, err := dec.Token()
		if err == nil && tok != want {
			err = fmt.Errorf("found %v where %v belongs", tok, want)
		}
		return err
	}
	if err := expect('{'); err != nil {
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if key != "sets" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		if err := expect('{'); err != nil {
			return err
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			set, _ := tok.(string)
			if err := eachDoc(dec, set, n, fn); err != nil {
				return err
			}
		}
		if err := expect('}'); err != nil {
			return err
		}
	}
	return expect('}')
}

// eachDoc reads one set's array (or null) of documents.
func eachDoc(dec *json.Decoder, set string, n int, fn func(set string, docs []pipeline.Document) error) error {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		if err == nil {
			err = fn(set, nil)
		}
		return err
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("set %s: found %v where its documents belong", set, tok)
	}
	var batch []pipeline.Document
	sent := false
	for dec.More() {
		var d pipeline.Document
		if err := dec.Decode(&d); err != nil {
			return err
		}
		if len(batch) >= n && d.Patient != batch[len(batch)-1].Patient {
			if err := fn(set, batch); err != nil {
				return err
			}
			batch, sent = nil, true
		}
		batch = append(batch, d)
	}
	if _, err := dec.Token(); err != nil { // ]
		return err
	}
	if len(batch) > 0 || !sent {
		return fn(set, batch)
	}
	return nil
}

var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$`)

// ValidVersion reports whether v is a semantic version (MAJOR.MINOR.PATCH,
// optional pre-release and build).
func ValidVersion(v string) bool { return semver.MatchString(v) }

// CompareVersions orders two semantic versions by precedence (build metadata
// ignored): negative if a < b.
func CompareVersions(a, b string) int {
	ma, mb := semver.FindStringSubmatch(a), semver.FindStringSubmatch(b)
	if ma == nil || mb == nil {
		return bytesCompare(a, b)
	}
	for i := 1; i <= 3; i++ {
		x, _ := strconv.Atoi(ma[i])
		y, _ := strconv.Atoi(mb[i])
		if x != y {
			return x - y
		}
	}
	switch {
	case ma[4] == mb[4]:
		return 0
	case ma[4] == "":
		return 1 // a release outranks its pre-releases
	case mb[4] == "":
		return -1
	}
	return bytesCompare(ma[4], mb[4])
}

func bytesCompare(a, b string) int { return bytes.Compare([]byte(a), []byte(b)) }
