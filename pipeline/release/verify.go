package release

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"deidcorpus/internal/zipindex"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

// Verification is what Verify checked.
type Verification struct {
	Name, Version, Root, Format string
	Files                       int // the archive's, MANIFEST included, as export counts them
	Documents                   int
}

// maxFailures is how many failures a verification names; past it, it counts
// them.
const maxFailures = 20

// failures collects what fails a verification, so that one run names every
// file (or document) that differs, not only the first.
type failures struct {
	errs []error
	more int
}

func (f *failures) add(err error) {
	if len(f.errs) < maxFailures {
		f.errs = append(f.errs, err)
	} else {
		f.more++
	}
}

func (f *failures) any() bool { return len(f.errs) > 0 }

// err is the failures one a line, nil if there are none.
func (f *failures) err() error {
	if f.more > 0 {
		return errors.Join(append(f.errs, fmt.Errorf("and %d more", f.more))...)
	}
	return errors.Join(f.errs...)
}

// Verify checks an archive's files in memory, as VerifyZip does; names are
// relative to the archive, or as Unzip gives them ("archive.zip:member").
func Verify(files []formats.File) (*Verification, error) {
	byName := map[string][]byte{}
	for _, f := range files {
		name := f.Name
		if i := strings.IndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		byName[name] = f.Data
	}
	names := slices.Sorted(maps.Keys(byName))
	return verify(func() func() (member, bool, error) {
		i := 0
		return func() (member, bool, error) {
			if i == len(names) {
				return member{}, false, nil
			}
			data := byName[names[i]]
			i++
			return member{name: names[i-1], open: func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(data)), nil
			}}, true, nil
		}
	})
}

// VerifyFS checks an archive unzipped into a file system (os.DirFS of its
// folder), as VerifyZip checks the archive: every file below the root is a
// member, named by its slash-separated path.
func VerifyFS(fsys fs.FS) (*Verification, error) {
	var names, odd []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || d.IsDir():
		case d.Type().IsRegular():
			names = append(names, p)
		default: // a link or a pipe: an archive holds neither, and reading a pipe would wait for ever
			odd = append(odd, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(odd) > 0 {
		return nil, fmt.Errorf("%s: not a regular file (a link, a pipe or a device), which no release archive holds", strings.Join(odd, ", "))
	}
	slices.Sort(names)
	return verify(func() func() (member, bool, error) {
		i := 0
		return func() (member, bool, error) {
			if i == len(names) {
				return member{}, false, nil
			}
			name := names[i]
			i++
			return member{name: name, open: func() (io.ReadCloser, error) { return fsys.Open(name) }}, true, nil
		}
	})
}

// VerifyZip recomputes every hash of a release archive: each file against
// the MANIFEST, no file missing or unlisted, the MANIFEST's comment lines
// against release.json, and every document's content hash and the root hash
// against release.json. Any difference is an error naming the file (every
// file that differs, up to maxFailures), and so is any file a release archive
// does not hold (a hidden one, one the format does not read, content in a
// directory entry): it could carry what nothing checks. It reads a member at
// a time: memory holds a run of the archive's index, not all of it
// (zipindex.Sort keeps the other runs, sorted by name, in a temporary file),
// a member (at most 256 MiB; PackTo cuts a file in parts of 128 MiB), a run
// of the manifest's entries, and what Scan keeps of a set to refuse a
// duplicate id (for a format whose documents join several files, brat and
// PhysioNet, the set's files). In a format whose files cannot carry a
// document's id (PhysioNet), a document is named by the entry of
// release.json that lists the id it is read back with (Entry.ArchiveID), as
// is one written under a name that gives its patient (i2b2, brat), and
// memory holds those of a set.
func VerifyZip(zr *zipindex.Reader) (*Verification, error) {
	sorted, err := zr.Sort()
	if err != nil {
		return nil, err
	}
	defer sorted.Close()
	return verify(func() func() (member, bool, error) {
		c := sorted.Cursor()
		return func() (member, bool, error) {
			for c.Next() {
				e := c.Entry()
				if e.IsDir() {
					continue // Sort refused a directory that holds content
				}
				return member{name: e.Name, open: func() (io.ReadCloser, error) {
					rc, err := zr.Open(e)
					if err != nil {
						return nil, fmt.Errorf("%s: cannot open archive member: %w", e.Name, err)
					}
					return rc, nil
				}}, true, nil
			}
			return member{}, false, c.Err()
		}
	})
}

// archive is what verify reads: passes over its files in name order, as
// many as it needs. Each call starts a pass; each call of the function it
// returns gives the next file, ok false after the last.
type archive func() (next func() (m member, ok bool, err error))

// member is one file of an archive: its name, relative to the archive, and
// its content, read when it is opened.
type member struct {
	name string
	open func() (io.ReadCloser, error)
}

// read reads a file whole, as big as an archive member may be.
func (m member) read() ([]byte, error) {
	rc, err := m.open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return formats.ReadMember(m.name, rc)
}

// digest hashes a file as it is read.
func (m member) digest() ([sha256.Size]byte, error) {
	rc, err := m.open()
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("%s: damaged archive member: %w", m.name, err)
	}
	return [sha256.Size]byte(h.Sum(nil)), nil
}

// verify walks the files in name order beside the MANIFEST's lines (also in
// name order), so that each file is read once and no list of either is kept.
// A first pass over the names finds the MANIFEST and release.json and
// refuses a name given twice, before any file is read.
func verify(a archive) (*Verification, error) {
	var (
		man, js member  // the MANIFEST and release.json
		sheet   *member // DATASHEET.md
		haveMan bool
		haveJS  bool
		files   int
		prev    string
		nested  string // a MANIFEST below the top: the release's folder zipped
		next    = a()
	)
	for {
		m, ok, err := next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if files > 0 && m.name == prev {
			return nil, fmt.Errorf("%s: twice in the archive", m.name)
		}
		switch m.name {
		case ManifestFile:
			man, haveMan = m, true
		case MetaFile:
			js, haveJS = m, true
		case DatasheetFile:
			sheet = &m
		}
		if nested == "" && strings.HasSuffix(m.name, "/"+ManifestFile) {
			nested = m.name
		}
		prev = m.name
		files++
	}
	if !haveMan {
		if nested != "" {
			return nil, fmt.Errorf("no MANIFEST at the archive's top, but %s: a release's files are zipped as they are, not in a folder", nested)
		}
		return nil, errors.New("no MANIFEST in the archive")
	}
	if !haveJS {
		return nil, fmt.Errorf("%s: not in the archive", MetaFile)
	}
	meta, entriesRoot, err := readMeta(js, nil)
	if err != nil {
		return nil, err
	}
	f, err := formats.Lookup(meta.Format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", MetaFile, err)
	}
	carries, err := carriesIDs(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", MetaFile, err)
	}
	mr, err := man.open()
	if err != nil {
		return nil, err
	}
	defer mr.Close()
	// The MANIFEST's header (its root hash among it) and release.json's
	// root first: an archive that cannot verify fails before its files are
	// read.
	lines := newManifestReader(mr, manifestHeader(meta))
	if err := lines.next(); err != nil {
		return nil, err
	}
	if entriesRoot != meta.Manifest.Root {
		return nil, fmt.Errorf("%s: its documents' hashes add up to %s, not to the root hash %s", MetaFile, entriesRoot, meta.Manifest.Root)
	}

	shared, err := sharedRelease(sheet)
	if err != nil {
		return nil, err
	}
	var failed failures
	// check compares a file with its MANIFEST line. A file that differs
	// fails for that; one that matches may still fail for its own reason
	// (bad, nil if none): either way, once.
	check := func(name string, sum [sha256.Size]byte, bad error) error {
		differs, err := lines.take(name, sum, &failed)
		if err != nil {
			return err
		}
		if differs == nil {
			differs = bad
		}
		if differs != nil {
			failed.add(differs)
		}
		return nil
	}
	entries := newManifestBuilder()
	defer entries.Close()
	documents := 0
	// The second pass: m is the file at hand, more false past the last.
	next = a()
	m, more, err := next()
	if err != nil {
		return nil, err
	}
	advance := func() error {
		var err error
		m, more, err = next()
		return err
	}
	for more {
		name := m.name
		set, _, inSet := strings.Cut(name, "/")
		if !inSet {
			var bad error
			if name != ManifestFile && name != MetaFile && name != DatasheetFile {
				bad = fmt.Errorf("%s: not a file of a release archive", name)
			}
			if name != ManifestFile {
				sum, err := m.digest()
				if err == nil {
					err = check(name, sum, bad)
				}
				if err != nil {
					return nil, err
				}
			}
			if err := advance(); err != nil {
				return nil, err
			}
			continue
		}
		// A set's files follow each other in name order: its documents are
		// read from them as they are checked.
		inThisSet := func() bool { return more && strings.HasPrefix(m.name, set+"/") }
		// A release.json that cannot name the documents fails the check, as
		// a file that differs does: the files are still checked, the
		// documents not read.
		named, err := readArchiveNames(js, set, f.Name, !carries)
		if err != nil {
			failed.add(err)
		}
		var readErr error // the archive's or the MANIFEST's, not a document's
		// src moves the pass on as it reads: it can be read once, as Scan
		// does.
		src := func(yield func(formats.File) error) error {
			for ; inThisSet(); readErr = advance() {
				data, err := m.read()
				if err == nil {
					var bad error
					if !f.Reads(m.name) {
						bad = fmt.Errorf("%s: not a file of format %s", m.name, f.Name)
					}
					err = check(m.name, sha256.Sum256(data), bad)
				}
				if err != nil {
					readErr = err
					return err
				}
				// Once a file has failed, the documents are not read
				// (what they say is moot), but every file is still
				// checked, so that all that differ are named.
				if failed.any() {
					continue
				}
				if err := yield(formats.File{Name: strings.TrimPrefix(m.name, set+"/"), Data: data}); err != nil {
					return err
				}
			}
			return readErr // advance's, which ends the pass
		}
		err = f.Scan(src, formats.ReadOptions{AllowOverlap: true}, func(d pipeline.Document) error {
			d.ID = named.id(d.ID)
			if shared {
				if k := slices.IndexFunc(d.Spans, func(s pipeline.Span) bool { return !freshSpanID(s.ID) }); k >= 0 {
					// The id itself is not written: it may be the original.
					failed.add(fmt.Errorf("set %s, document %s: a span's id is not one a resynthesis gives (T1, T2, ...): a release for outside sharing never copies its source's span ids, which may name the patient", set, d.ID))
				}
			}
			entries.add(set, []pipeline.Document{d})
			documents++
			return nil
		})
		if readErr != nil {
			return nil, readErr
		}
		if err != nil && !failed.any() {
			return nil, fmt.Errorf("set %s: %w", set, err)
		}
		// Past the set's files Scan did not read (it stops at an error).
		for inThisSet() {
			if err := advance(); err != nil {
				return nil, err
			}
		}
	}
	if err := lines.missing("", &failed); err != nil {
		return nil, err
	}
	if err := failed.err(); err != nil {
		return nil, err
	}
	root, err := entries.root()
	if err != nil {
		return nil, err
	}
	if root != meta.Manifest.Root {
		return nil, differences(js, entries)
	}
	return &Verification{Name: meta.Name, Version: meta.Version, Root: root, Format: meta.Format,
		Files: files, Documents: documents}, nil
}

// sharedLine is the DATASHEET.md line that says whether a release is for
// outside sharing.
const sharedLine = "| for outside sharing | %v |\n"

// sharedRelease reports whether an archive's DATASHEET.md marks it for
// outside sharing (archives of every version have the line).
func sharedRelease(sheet *member) (bool, error) {
	if sheet == nil {
		return false, nil
	}
	data, err := sheet.read()
	if err != nil {
		return false, err
	}
	return bytes.Contains(data, []byte(fmt.Sprintf(sharedLine, true))), nil
}

// freshSpanID reports whether a span id is one a surrogate note's span gets
// (T1, T2, ...), or one a format writes for a span without one (i2b2's
// P0, P1, ...), or none.
func freshSpanID(id string) bool {
	if id == "" {
		return true
	}
	n, ok := strings.CutPrefix(id, "T")
	if !ok {
		n, ok = strings.CutPrefix(id, "P")
	}
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// archiveNames maps the ids a set's documents are read back with to their
// own: in a format whose files cannot carry ids, every document's; in one
// that can, those written under an archive id (see groupedArchiveIDs).
type archiveNames struct {
	ids map[string]string
	all bool // every document has one
}

// id is the document's own id; for one release.json does not list, in a
// format whose files cannot carry ids, its archive id marked as such.
func (n archiveNames) id(archiveID string) string {
	if id, ok := n.ids[archiveID]; ok {
		return id
	}
	if !n.all {
		return archiveID
	}
	return archiveID + " (as the archive names it)"
}

// readArchiveNames reads the archive ids of a set's entries from
// release.json: no two the same and, if all, one for each entry.
func readArchiveNames(js member, set, format string, all bool) (archiveNames, error) {
	names := archiveNames{ids: map[string]string{}, all: all}
	_, _, err := readMeta(js, func(e Entry) error {
		if e.Set != set {
			return nil
		}
		if e.ArchiveID == "" && !all {
			return nil
		}
		if e.ArchiveID == "" {
			return fmt.Errorf("document %s/%s has no archive_id, the id it is read back with, which tells the documents of format %s apart (its files cannot carry a document's id): export the release again", set, e.ID, format)
		}
		if prev, dup := names.ids[e.ArchiveID]; dup {
			return fmt.Errorf("documents %s/%s and %s/%s have the same archive_id %q", set, prev, set, e.ID, e.ArchiveID)
		}
		names.ids[e.ArchiveID] = e.ID
		return nil
	})
	return names, err
}

// differences names the documents whose content differs from release.json's
// entries, or that one lists and the other lacks. Only a failed check comes
// here: it holds release.json's entries.
func differences(js member, entries *manifestBuilder) error {
	want := map[[2]string]string{}
	if _, _, err := readMeta(js, func(e Entry) error {
		want[[2]string{e.Set, e.ID}] = e.Hash
		return nil
	}); err != nil {
		return err
	}
	var failed failures
	_, err := entries.each(func(d digestEntry) error {
		e := d.entry()
		hash, ok := want[[2]string{e.Set, e.ID}]
		switch {
		case !ok:
			failed.add(fmt.Errorf("document %s/%s: not in %s: it was added", e.Set, e.ID, MetaFile))
		case hash != e.Hash:
			failed.add(fmt.Errorf("document %s/%s: content hash differs from the release's", e.Set, e.ID))
		}
		delete(want, [2]string{e.Set, e.ID})
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range slices.SortedFunc(maps.Keys(want), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) {
		failed.add(fmt.Errorf("document %s/%s: listed in %s but missing", k[0], k[1], MetaFile))
	}
	if err := failed.err(); err != nil {
		return err
	}
	return errors.New("the documents do not add up to the release's root hash")
}

// readMeta is ReadMeta of an archive's release.json.
func readMeta(js member, fn func(Entry) error) (Meta, string, error) {
	rc, err := js.open()
	if err != nil {
		return Meta{}, "", err
	}
	defer rc.Close()
	meta, root, err := ReadMeta(rc, fn)
	if err != nil {
		return meta, "", fmt.Errorf("%s: %w", MetaFile, err)
	}
	return meta, root, nil
}

// ReadMeta reads a release.json a token at a time: the release's fields, its
// manifest's root, and the root hash over its entries, each given to fn in
// turn (nil: none); memory holds one entry. Its entries must be sorted by
// set and id. Fields it does not know are skipped.
func ReadMeta(r io.Reader, fn func(Entry) error) (Meta, string, error) {
	var meta Meta
	h := sha256.New()
	dec := json.NewDecoder(bufio.NewReader(r))
	fields := map[string]*string{"name": &meta.Name, "version": &meta.Version, "corpus": &meta.Corpus,
		"format": &meta.Format, "tagset": &meta.TagSet, "parent": &meta.Parent}
	entries := func() error {
		if tok, err := dec.Token(); err != nil || tok == nil {
			return err
		} else if tok != json.Delim('[') {
			return fmt.Errorf("found %v where the manifest's documents belong", tok)
		}
		var prev Entry
		for n := 0; dec.More(); n++ {
			var e Entry
			if err := dec.Decode(&e); err != nil {
				return err
			}
			if n > 0 && (e.Set < prev.Set || e.Set == prev.Set && e.ID <= prev.ID) {
				return fmt.Errorf("document %s/%s is out of set and id order", e.Set, e.ID)
			}
			io.WriteString(h, e.line())
			if fn != nil {
				if err := fn(e); err != nil {
					return err
				}
			}
			prev = e
		}
		_, err := dec.Token() // ]
		return err
	}
	object := func(field func(key string) error) error {
		if tok, err := dec.Token(); err != nil {
			return err
		} else if tok != json.Delim('{') {
			return fmt.Errorf("found %v where an object belongs", tok)
		}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			if err := field(fmt.Sprint(key)); err != nil {
				return err
			}
		}
		_, err := dec.Token() // }
		return err
	}
	skip := func() error {
		var v json.RawMessage
		return dec.Decode(&v)
	}
	err := object(func(key string) error {
		if p, ok := fields[key]; ok {
			return dec.Decode(p)
		}
		if key != "manifest" {
			return skip()
		}
		return object(func(key string) error {
			switch key {
			case "documents":
				return entries()
			case "root":
				return dec.Decode(&meta.Manifest.Root)
			}
			return skip()
		})
	})
	if err != nil {
		return meta, "", err
	}
	return meta, hex.EncodeToString(h.Sum(nil)), nil
}

// manifestReader reads a MANIFEST's lines ("SHA-256  name", in name order)
// one at a time, a line ahead so that one out of order is told as such,
// after its header, which must be the lines expected, word for word.
type manifestReader struct {
	sc     *bufio.Scanner
	line   int
	header []string
	manifestLine
	ahead   manifestLine
	started bool
}

// manifestLine is one file's line; ok: one was read.
type manifestLine struct {
	ok        bool
	sum, name string
}

func newManifestReader(r io.Reader, header []string) *manifestReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &manifestReader{sc: sc, header: header}
}

// next moves to the next file's line. The first call reads two.
func (m *manifestReader) next() error {
	if !m.started {
		m.started = true
		if err := m.readAhead(); err != nil {
			return err
		}
	}
	m.manifestLine = m.ahead
	if !m.ok {
		return nil
	}
	if err := m.readAhead(); err != nil {
		return err
	}
	if m.ahead.ok && m.ahead.name <= m.name {
		return fmt.Errorf("%s:%d: %s is out of name order", ManifestFile, m.line, m.ahead.name)
	}
	return nil
}

func (m *manifestReader) readAhead() error {
	m.ahead = manifestLine{}
	for m.sc.Scan() {
		m.line++
		text := m.sc.Text()
		if m.line <= len(m.header) {
			if want := m.header[m.line-1]; text != want {
				return fmt.Errorf("%s:%d: %q differs from %s: expected %q", ManifestFile, m.line, text, MetaFile, want)
			}
			continue
		}
		if strings.HasPrefix(text, "#") {
			return fmt.Errorf("%s:%d: %q: a comment release verify does not write, which nothing would check", ManifestFile, m.line, text)
		}
		sum, name, ok := strings.Cut(text, "  ")
		if !ok {
			return fmt.Errorf("%s:%d: malformed line %q", ManifestFile, m.line, text)
		}
		m.ahead = manifestLine{ok: true, sum: sum, name: name}
		return nil
	}
	if err := m.sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", ManifestFile, err)
	}
	if m.line < len(m.header) {
		return fmt.Errorf("%s: ends before line %d, expected %q", ManifestFile, m.line+1, m.header[m.line])
	}
	return nil
}

// take checks a file, the next in name order, against its line, and moves
// past it. The lines before it name files the archive lacks: they are added
// to failed. differs says how the file differs from its line; err is the
// MANIFEST's own.
func (m *manifestReader) take(name string, sum [sha256.Size]byte, failed *failures) (differs, err error) {
	if err := m.missing(name, failed); err != nil {
		return nil, err
	}
	switch {
	case !m.ok || m.name > name:
		return fmt.Errorf("%s: not listed in MANIFEST: the file was added", name), nil
	case m.sum != hex.EncodeToString(sum[:]):
		differs = fmt.Errorf("%s: SHA-256 differs from MANIFEST: the file was changed", name)
	}
	return differs, m.next()
}

// missing adds to failed the files listed before name (every one left if
// name is ""), which the archive lacks, and moves past their lines.
func (m *manifestReader) missing(name string, failed *failures) error {
	for m.ok && (name == "" || m.name < name) {
		failed.add(fmt.Errorf("%s: listed in MANIFEST but missing", m.name))
		if err := m.next(); err != nil {
			return err
		}
	}
	return nil
}
