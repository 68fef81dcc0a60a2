// Package formats reads and writes the corpus file formats of the
// de-identification field (i2b2 2014 XML, and the others registered in
// Formats) as pipeline.Documents. Inputs are plain files, directories or .zip
// archives; every parse error names the file, the line and the field at fault,
// and never quotes note or span text (errors reach logs and clients; the text
// is PHI).
package formats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"deidcorpus/internal/nearmiss"
	"deidcorpus/pipeline"
)

// File is one named input or output file. Name is a slash-separated path,
// relative to the directory or archive it came from (zip members are named
// "archive.zip:member"); readers take document ids from it and pair files
// by it.
type File struct {
	Name string
	// Data is the file's content. A Source may leave it nil and read the
	// content only when it is asked for (loaded, reader), which it can be
	// during the yield that gave the file only: a file that is kept past
	// it, or read whole, is loaded first (Collect does).
	Data []byte
	// Path, if set, is where the user finds the file (Paths: the path given
	// joined with Name's path under it, dir/a.zip:member for an archive's
	// member); errors name it instead of Name, which can be ambiguous
	// (100-01.xml in two directories).
	Path string
	// Given: the user named this file itself, rather than a directory or an
	// archive that holds it, so a format that does not read it says so
	// instead of skipping it.
	Given bool
	// open gives the content of a file whose Source left Data unread;
	// size is the size its Source was told (a directory entry, a zip
	// header), 0 if none; limit, if set, is the most bytes reading it may
	// give (an archive's member, a note: see Bound), so that a zip bomb or
	// an oversize note fails as its limit is crossed, however much it says
	// it holds.
	open  func() (io.ReadCloser, error)
	size  int64
	limit readLimit
}

// readLimit is the most bytes a file's reading may give (0: any), and what
// the error says of a file larger than that.
type readLimit struct {
	max  int64
	says string
}

// within returns the file with its reading limited to max bytes, unless a
// tighter limit holds already; says is the error's text past it.
func (f File) within(max int64, says string) File {
	if f.limit.max == 0 || max < f.limit.max {
		f.limit = readLimit{max: max, says: says}
	}
	return f
}

// Open returns the file's content as a stream (within an archive member's
// limit): during the yield that gave the file only, if its Source left it
// unread.
func (f File) Open() (io.ReadCloser, error) { return f.reader() }

// loaded returns the file with its content in Data, read now (through
// reader, and so within its limit) if its Source left it unread.
func (f File) loaded() (File, error) {
	if f.open == nil {
		if f.overLimit() {
			return f, f.tooLarge()
		}
		return f, nil
	}
	r, err := f.reader()
	if err != nil {
		return f, err
	}
	defer r.Close()
	if f.Data, err = io.ReadAll(r); err != nil && !errors.As(err, new(*Error)) {
		if !errors.As(err, new(damagedMember)) {
			err = fmt.Errorf("cannot read: %w", err)
		}
		err = &Error{File: f.where(), Err: err}
	}
	f.open, f.size, f.limit = nil, 0, readLimit{}
	return f, err
}

// reader returns the file's content as a stream, from the disk or the
// archive when its Source left Data unread; past its limit (an archive
// member's: a zip bomb) the stream fails.
func (f File) reader() (io.ReadCloser, error) {
	if f.overLimit() {
		// Refused unread when it says so; one that says less than it holds
		// fails as it is read.
		return nil, f.tooLarge()
	}
	if f.open == nil {
		return io.NopCloser(bytes.NewReader(f.Data)), nil
	}
	r, err := f.open()
	if err != nil {
		return nil, &Error{File: f.where(), Err: fmt.Errorf("cannot read: %w", err)}
	}
	if f.limit.max > 0 {
		return &limitedReader{ReadCloser: r, f: f}, nil
	}
	return r, nil
}

// overLimit: the file is larger than its limit by what it says (its
// Source's size, the Data in memory).
func (f File) overLimit() bool {
	size := f.size
	if f.open == nil {
		size = int64(len(f.Data))
	}
	return f.limit.max > 0 && size > f.limit.max
}

func (f File) tooLarge() error { return &Error{File: f.where(), Err: errors.New(f.limit.says)} }

// limitedReader fails as soon as more than its file's limit has been read:
// what it gives is never more than the limit and one read's buffer.
type limitedReader struct {
	io.ReadCloser
	f    File
	read int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.ReadCloser.Read(p)
	if l.read += int64(n); l.read > l.f.limit.max {
		return n, l.f.tooLarge()
	}
	return n, err
}

// size says a number of bytes in MiB when it is a whole number of them.
func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// where names the file in errors.
func (f File) where() string {
	if f.Path != "" {
		return f.Path
	}
	return f.Name
}

// Format is one corpus file format.
type Format struct {
	Name string
	// Exts are the file extensions the reader consumes (with the dot); files
	// with other extensions in a directory or archive are ignored.
	Exts []string
	// Only, if set, narrows the files of Exts the format reads to those
	// it says (OMOP's tables, by name).
	Only func(name string) bool
	Doc  string
	// Read parses files into documents; a document's spans are sorted.
	Read func(files []File, opt ReadOptions) ([]pipeline.Document, error)
	// ReadFile, if set, parses one file on its own (Read is then ReadFile
	// of every file with one of Exts, ids unique across files), so that
	// Scan holds one file at a time. Nil for formats whose documents join
	// several files.
	ReadFile func(f File, opt ReadOptions) ([]pipeline.Document, error)
	// ScanFile, if set, parses one file as a stream (r reads its content),
	// giving each document to fn as it comes, so that Scan holds one
	// document at a time however large the file (a JSON Lines corpus).
	ScanFile func(f File, r io.Reader, opt ReadOptions, fn func(pipeline.Document) error) error
	// ScanSource, if set, is Scan for a format whose documents join several
	// files: it holds a file only as long as the document needs it.
	ScanSource func(src Source, opt ReadOptions, fn func(pipeline.Document) error) error
	// ManyNotes: a file the format reads whole may hold many notes (a
	// corpus in one file), so it is bounded by maxManyNotes rather than
	// the per-note limit (ReadOptions.MaxNote), which bounds each of its
	// documents' text instead.
	ManyNotes bool
	// Patients: the format carries each note's patient beside its id (a
	// field, a column), rather than in its file's name (PatientNames).
	Patients bool
	// RebuildsText: the format keeps tokens, not the text, which Read
	// rebuilds (whitespace lost), so a document read back is not the one
	// written.
	RebuildsText bool
	// Write renders documents as files, named by document id.
	Write func(docs []pipeline.Document) ([]File, error)
	// Records, if set, renders documents as Write does without the Head
	// and Tail files Write puts around them (the root element of a file
	// that holds every document): Stream writes Head, then each batch's
	// Records, then Tail, and such a format can be Batched.
	Records    func(docs []pipeline.Document) ([]File, error)
	Head, Tail []File
	// Batched: Write (or Records) of consecutive batches of a corpus's documents, with a
	// file that continues the previous batch's last file appended to it,
	// gives Write of the whole corpus. True of a file per document, and of
	// one file in which documents follow each other without header or footer.
	Batched bool
}

var registry = map[string]*Format{}

// Register adds a format; formats register themselves in init.
func Register(f *Format) {
	if _, dup := registry[f.Name]; dup {
		panic("formats: duplicate format " + f.Name)
	}
	registry[f.Name] = f
}

// Default is the format of an import, export or release that names none.
const Default = "i2b2"

// Lookup returns the named format or an error that lists the known ones and,
// for a near miss ("JSONL", "i2b2_2006", "brt"), says which was meant.
func Lookup(name string) (*Format, error) { return LookupAmong(name, Names()) }

// LookupAmong is Lookup among some formats only (those a command writes),
// whose names its error lists.
func LookupAmong(name string, names []string) (*Format, error) {
	if f, ok := registry[name]; ok && slices.Contains(names, name) {
		return f, nil
	}
	msg := fmt.Sprintf("unknown format %q", name)
	if _, ok := registry[name]; ok {
		msg = fmt.Sprintf("format %q is not one of these", name)
	} else if meant := nearmiss.Among(name, names); len(meant) > 0 {
		msg += "; did you mean " + strings.Join(meant, " or ") + "?"
	}
	return nil, fmt.Errorf("%s (known: %s)", msg, strings.Join(names, ", "))
}

// Names lists the registered formats.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Error is a parse or validation error located in an input file.
type Error struct {
	File  string
	Line  int    // 1-based; 0 if unknown
	Field string // the tag, attribute, column or span at fault; may be empty
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(file string, line int, field, format string, args ...any) error {
	return &Error{File: file, Line: line, Field: field, Err: fmt.Errorf(format, args...)}
}

// ErrNoDocuments is returned when the inputs hold no file the format reads.
var ErrNoDocuments = errors.New("no documents found")

var recordName = regexp.MustCompile(`^(.+)-(\d+)$`)

// DocumentID derives a document's id, patient and record order from its file
// name: "100-02.xml" is record 2 of patient "100"; a name without a numeric
// suffix is its own patient's first record.
func DocumentID(name string) (id, patient string, order int) {
	base := path.Base(name)
	if i := strings.LastIndexByte(base, ':'); i >= 0 {
		base = base[i+1:]
	}
	id = strings.TrimSuffix(base, path.Ext(base))
	if m := recordName.FindStringSubmatch(id); m != nil {
		n, err := strconv.Atoi(m[2])
		if err == nil {
			return id, m[1], n
		}
	}
	return id, id, 1
}

// filterExt keeps the files with one of exts.
func filterExt(files []File, exts ...string) []File {
	var out []File
	for _, f := range files {
		if hasExt(f.Name, exts) {
			out = append(out, f)
		}
	}
	return out
}

func hasExt(name string, exts []string) bool {
	for _, e := range exts {
		if strings.EqualFold(path.Ext(name), e) {
			return true
		}
	}
	return false
}

// Reads reports whether a file of the name is one the format reads (its
// extension is one of Exts).
func (f *Format) Reads(name string) bool {
	return hasExt(name, f.Exts) && (f.Only == nil || f.Only(name))
}

// Scan parses the documents of src and gives them to fn in Read's order,
// one file in memory at a time when the format has ReadFile or ScanFile, a
// document's files at a time when it has ScanSource (the others are read
// whole). Duplicate ids are an error, as in Read; the only thing kept across
// files is each id and the file it came from. Files the format does not
// read are skipped (and given to opt.Skipped), except one the user named
// (File.Given); if src holds only such files, the error names a few and the
// formats that read them.
func (f *Format) Scan(src Source, opt ReadOptions, fn func(pipeline.Document) error) error {
	var (
		read    bool
		skipped []string // the first few files skipped
		n       int      // how many were
		exts    = map[string]bool{}
	)
	readings := 0 // a format may read its source twice (omop): skipped files are told once
	sifted := func(yield func(File) error) error {
		readings++
		return src(func(file File) error {
			if f.Reads(file.Name) {
				read = true
				return yield(f.Bound(file, opt))
			}
			if err := f.Refuses(file); err != nil {
				return err
			}
			if readings > 1 {
				return nil
			}
			if opt.Skipped != nil {
				opt.Skipped(file.where())
			}
			ext := strings.ToLower(path.Ext(file.Name))
			n++
			if len(skipped) < 3 {
				skipped = append(skipped, file.where())
			}
			exts[ext] = true
			return nil
		})
	}
	maxNote := opt.maxNote()
	err := f.scan(sifted, opt, func(d pipeline.Document) error {
		if int64(len(d.Text)) > maxNote {
			return fmt.Errorf("document %s: its text is %s, over %s", d.ID, size(int64(len(d.Text))), noteLimit(maxNote))
		}
		return fn(d)
	})
	if errors.Is(err, ErrNoDocuments) && !read && n > 0 {
		list := strings.Join(skipped, ", ")
		if n > len(skipped) {
			list += fmt.Sprintf(" and %d more", n-len(skipped))
		}
		return fmt.Errorf("no %s documents in the given input, only files it does not read: %s; %s",
			f.Name, list, f.readsOnly(slices.Sorted(maps.Keys(exts))))
	}
	return err
}

// scan is Scan of the files the format reads.
func (f *Format) scan(src Source, opt ReadOptions, fn func(pipeline.Document) error) error {
	if f.ScanSource != nil {
		return f.ScanSource(src, opt, fn)
	}
	if f.ScanFile != nil {
		return scanEach(src, func(file File, fn func(pipeline.Document) error) error {
			r, err := file.reader()
			if err != nil {
				return err
			}
			defer r.Close()
			return f.ScanFile(file, r, opt, fn)
		}, fn, opt.KeepGoing)
	}
	if f.ReadFile != nil {
		return scanEach(src, wholeFiles(f.ReadFile, opt), fn, opt.KeepGoing)
	}
	files, err := Collect(src)
	if err != nil {
		return err
	}
	docs, err := f.Read(files, opt)
	if err != nil {
		return err
	}
	for _, d := range docs {
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}

// DefaultMaxNote is the per-note limit of a reading that sets none
// (ReadOptions.MaxNote). Real notes are far below it (a MEDDOCAN note is a
// few KB, the longest MIMIC discharge summaries about 100 KB), and a note
// is held in memory a few times over while it is parsed and checked.
const DefaultMaxNote = 4 << 20

// maxManyNotes bounds a file of many notes that is read whole (see
// Format.ManyNotes): a whole i2b2 2006 or PhysioNet corpus is a few MB, and
// an export writes a big corpus in such a format in parts of 128 MiB
// (Stream), which an import must read back.
const maxManyNotes = 192 << 20

func (opt ReadOptions) maxNote() int64 {
	if opt.MaxNote > 0 {
		return opt.MaxNote
	}
	return DefaultMaxNote
}

// noteLimit says the per-note limit and how to raise it.
func noteLimit(max int64) string {
	return fmt.Sprintf("the limit of %s per note (raise it with --max-note-size if the note is real)", size(max))
}

// Bound returns file with its reading limited as Scan limits it: a file of
// one note (with its annotations) to the per-note limit, a file of many
// notes read whole to maxManyNotes; a format that streams its files (JSON
// Lines) limits each line to the per-note limit as it reads it instead.
// The limit holds as the file is read: an archive member is refused as it
// crosses it, never buffered to a larger one.
func (f *Format) Bound(file File, opt ReadOptions) File {
	switch {
	case f.ScanFile != nil:
		return file
	case f.ManyNotes:
		return file.within(maxManyNotes, fmt.Sprintf("larger than %s, the most a %s file of many notes may be: split it into smaller files",
			size(maxManyNotes), f.Name))
	}
	max := opt.maxNote()
	return file.within(max, "larger than "+noteLimit(max))
}

// Refuses is the error for a file the user named (File.Given) that the
// format does not read, nil for any other file.
func (f *Format) Refuses(file File) error {
	if !file.Given || f.Reads(file.Name) {
		return nil
	}
	return &Error{File: file.where(), Err: errors.New(f.readsOnly([]string{strings.ToLower(path.Ext(file.Name))}))}
}

// readsOnly says which files the format reads, and which other formats read
// files with one of exts (extensions of files it skipped).
func (f *Format) readsOnly(exts []string) string {
	var others []string
	for _, name := range Names() {
		o := registry[name]
		if o != f && slices.ContainsFunc(exts, o.Reads) {
			others = append(others, "--format "+name)
		}
	}
	msg := fmt.Sprintf("format %s reads %s files only", f.Name, strings.Join(f.Exts, ", "))
	if len(others) > 0 {
		msg += " (try " + strings.Join(others, " or ") + ")"
	}
	return msg
}

// readEach reads every file with one of exts through read (which may give
// several documents per file) and rejects duplicate document ids.
func readEach(files []File, opt ReadOptions, read func(File, ReadOptions) ([]pipeline.Document, error), exts ...string) ([]pipeline.Document, error) {
	var docs []pipeline.Document
	err := scanEach(Files(filterExt(files, exts...)), wholeFiles(read, opt), func(d pipeline.Document) error {
		docs = append(docs, d)
		return nil
	}, opt.KeepGoing)
	if err != nil {
		return nil, err
	}
	return docs, nil
}

// scanEach is readEach one file at a time, of files already filtered, read
// gives fn the documents of one file: ErrNoDocuments when src has no
// document.
func scanEach(src Source, read func(File, func(pipeline.Document) error) error, fn func(pipeline.Document) error, keepGoing int) error {
	seen := map[string]string{} // document id -> its file
	n := 0
	bad := fileErrors{max: keepGoing}
	err := src(func(f File) error {
		var fnErr error // fn's: it stops the scan
		err := read(f, func(d pipeline.Document) error {
			if prev, dup := seen[d.ID]; dup {
				return errorf(f.where(), 0, "", "document id %q also comes from %s", d.ID, prev)
			}
			seen[d.ID] = f.where()
			n++
			fnErr = fn(d)
			return fnErr
		})
		if err != nil && err != fnErr {
			return bad.add(err)
		}
		return err
	})
	if err == nil {
		err = bad.err()
	}
	if err == nil && n == 0 {
		return ErrNoDocuments
	}
	return err
}

// fileErrors gathers the errors of a scan's files, up to max of them.
type fileErrors struct {
	max  int
	errs []error
}

// add notes a file's error. It returns nil while the scan may read on, and
// every error noted once max are.
func (e *fileErrors) add(err error) error {
	e.errs = append(e.errs, err)
	if len(e.errs) < e.max {
		return nil
	}
	return e.err()
}

// err is every error noted, nil for none; one alone is itself, several are
// one line per distinct problem under a count.
func (e *fileErrors) err() error {
	switch {
	case len(e.errs) == 0:
		return nil
	case len(e.errs) == 1:
		return e.errs[0]
	case len(e.errs) == e.max:
		return &scanErrors{fmt.Sprintf("the first %d files with errors (reading stopped there: fix them and run again to see any more):", e.max), e.errs}
	}
	return &scanErrors{fmt.Sprintf("%d files with errors:", len(e.errs)), e.errs}
}

// A Problem is an error that many files may share, each with its own detail:
// a type of another tag set is one problem whatever the type. A scan's
// errors of one problem are said in one line, which lists their details.
type Problem interface {
	error
	Problem() string // what is wrong, the same for every file that has it
	Detail() string  // what differs from file to file (a type); may be empty
}

// scanErrors are the errors of a scan's files under a heading. Each
// stays reachable (errors.As finds the first *Error).
type scanErrors struct {
	head string
	errs []error
}

func (e *scanErrors) Unwrap() []error { return e.errs }

// Error says each distinct problem once: an error only one file has as it
// is, one that several share (the same message apart from where, or the same
// Problem) with its details, how many files have it and the first of them.
func (e *scanErrors) Error() string {
	type group struct {
		first   error
		n       int
		details []string
		where   []string // of the errors that say where
	}
	var order []string
	groups := map[string]*group{}
	for _, err := range e.errs {
		problem, detail, where := describe(err)
		g := groups[problem]
		if g == nil {
			g = &group{first: err}
			groups[problem] = g
			order = append(order, problem)
		}
		g.n++
		if where != "" {
			g.where = append(g.where, where)
		}
		if detail != "" && !slices.Contains(g.details, detail) {
			g.details = append(g.details, detail)
		}
	}
	lines := []string{e.head}
	for _, problem := range order {
		g := groups[problem]
		if g.n == 1 {
			lines = append(lines, g.first.Error())
			continue
		}
		line := problem
		if len(g.details) > 0 {
			line += ": " + firstFew(g.details)
		}
		line += fmt.Sprintf(" (%d files", g.n)
		if len(g.where) > 0 {
			line += ": " + firstFew(g.where)
		}
		lines = append(lines, line+")")
	}
	return strings.Join(lines, "\n")
}

// describe splits a file's error into its problem, its detail and where it
// is (file:line).
func describe(err error) (problem, detail, where string) {
	problem = err.Error()
	var fe *Error
	if errors.As(err, &fe) {
		problem, where = fe.Err.Error(), fe.File
		if fe.Line > 0 {
			where += ":" + strconv.Itoa(fe.Line)
		}
	}
	if p := Problem(nil); errors.As(err, &p) {
		problem, detail = p.Problem(), p.Detail()
	}
	return problem, detail, where
}

// firstFew joins the first three of a list, and says how many more there are.
func firstFew(list []string) string {
	if len(list) <= 3 {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:3], ", "), len(list)-3)
}

// wholeFiles adapts a reader of whole files to scanEach: each file is
// loaded, parsed, and its documents given in order.
func wholeFiles(read func(File, ReadOptions) ([]pipeline.Document, error), opt ReadOptions) func(File, func(pipeline.Document) error) error {
	return func(f File, fn func(pipeline.Document) error) error {
		f, err := f.loaded()
		if err != nil {
			return err
		}
		docs, err := read(f, opt)
		if err != nil {
			return err
		}
		for _, d := range docs {
			if err := fn(d); err != nil {
				return err
			}
		}
		return nil
	}
}

// one adapts a one-document-per-file reader to readEach.
func one(read func(File, ReadOptions) (pipeline.Document, error)) func(File, ReadOptions) ([]pipeline.Document, error) {
	return func(f File, opt ReadOptions) ([]pipeline.Document, error) {
		d, err := read(f, opt)
		if err != nil {
			return nil, err
		}
		return []pipeline.Document{d}, nil
	}
}
