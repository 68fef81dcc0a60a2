package formats

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// maxMember bounds one decompressed archive member, so that a zip bomb fails
// with a clear error instead of filling memory or the disk: a member read
// whole is bounded tighter still, by what the format's files hold (see
// Format.Bound).
const maxMember = 256 << 20

// memberLimit is the error past maxMember.
var memberLimit = "archive member larger than " + size(maxMember)

// Source yields input files one at a time, in a stable order, so that a
// corpus can be read without holding all of its files; it stops at the
// first error yield returns. A Source can be read more than once.
type Source func(yield func(File) error) error

// Files is a Source of files already in memory.
func Files(files []File) Source {
	return func(yield func(File) error) error {
		for _, f := range files {
			if err := yield(f); err != nil {
				return err
			}
		}
		return nil
	}
}

// Collect returns every file of src.
func Collect(src Source) ([]File, error) {
	var out []File
	err := src(func(f File) error {
		f, err := f.loaded()
		out = append(out, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadPaths loads files, the files under directories (recursively, hidden
// files skipped), and the members of .zip archives, in a stable order.
func ReadPaths(paths ...string) ([]File, error) { return Collect(Paths(paths...)) }

// Paths is the Source of ReadPaths: one file, or one archive member, in
// memory at a time.
func Paths(paths ...string) Source {
	return func(yield func(File) error) error {
		for _, p := range paths {
			info, err := os.Stat(p)
			if err != nil {
				return err
			}
			if !info.IsDir() {
				if err := readFile(p, filepath.Base(p), info.Size(), true, yield); err != nil {
					return err
				}
				continue
			}
			err = filepath.WalkDir(p, func(fp string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if strings.HasPrefix(d.Name(), ".") && fp != p {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if d.IsDir() {
					return nil
				}
				info, err := d.Info()
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(p, fp)
				return readFile(fp, filepath.ToSlash(rel), info.Size(), false, yield)
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// readFile yields the file at fp, of size bytes, or an archive's members
// read from the disk one at a time; given says the user named it.
func readFile(fp, name string, size int64, given bool, yield func(File) error) error {
	if isZip(name) {
		zr, err := zip.OpenReader(fp)
		if err != nil {
			return notZip(fp, err)
		}
		defer zr.Close()
		return zipMembers(name, fp, &zr.Reader, yield)
	}
	return yield(File{Name: name, Path: fp, Given: given, size: size, open: func() (io.ReadCloser, error) { return os.Open(fp) }})
}

func isZip(name string) bool { return strings.EqualFold(path.Ext(name), ".zip") }

func notZip(name string, err error) error {
	return &Error{File: name, Err: fmt.Errorf("not a readable zip archive: %w", err)}
}

// Upload is the Source of an uploaded file of size bytes that r reads where
// it is asked: the file as itself (named by the user: a format that does not
// read it says so), read when a format asks, or a .zip archive as its
// members, read as ZipAt reads them. Neither is held between readings.
func Upload(name string, r io.ReaderAt, size int64) Source {
	if isZip(name) {
		return ZipAt(name, r, size)
	}
	return func(yield func(File) error) error {
		return yield(File{Name: name, Given: true, size: size, open: func() (io.ReadCloser, error) {
			return io.NopCloser(&sizedReader{r: io.NewSectionReader(r, 0, size), size: size}), nil
		}})
	}
}

// sizedReader reads an upload of a known size, and fails if it ends short.
type sizedReader struct {
	r          io.Reader
	size, read int64
}

func (s *sizedReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.read += int64(n)
	if err == io.EOF && s.read < s.size {
		err = fmt.Errorf("the upload ended after %d of its %d bytes", s.read, s.size)
	}
	return n, err
}

// Unzip expands an archive's regular members (directories and hidden files
// skipped). A damaged member fails the whole archive, naming the member.
func Unzip(name string, data []byte) ([]File, error) { return Collect(Zip(name, data)) }

// Zip is the Source of Unzip: the archive stays compressed in memory and
// its members are decompressed one at a time.
func Zip(name string, data []byte) Source {
	return ZipAt(name, bytes.NewReader(data), int64(len(data)))
}

// ZipAt is Zip of an archive of size bytes that r reads where it is asked
// (its end, its directory, then a member at a time): the archive need not
// be in memory. Each reading of the Source reads r again from its end.
func ZipAt(name string, r io.ReaderAt, size int64) Source {
	return func(yield func(File) error) error {
		zr, err := zip.NewReader(r, size)
		if err != nil {
			return notZip(name, err)
		}
		return zipMembers(name, name, zr, yield)
	}
}

// isMember reports whether a zip entry is one of the archive's files: not a
// directory, a hidden file or a Mac's resource fork.
func isMember(m *zip.File) bool {
	return !m.FileInfo().IsDir() && !strings.HasPrefix(path.Base(m.Name), ".") && !strings.HasPrefix(m.Name, "__MACOSX/")
}

// zipMembers yields an archive's regular members in name order; fp is
// where the user finds the archive.
func zipMembers(name, fp string, zr *zip.Reader, yield func(File) error) error {
	var members []*zip.File
	for _, m := range zr.File {
		if isMember(m) {
			members = append(members, m)
		}
	}
	sort.SliceStable(members, func(i, j int) bool { return members[i].Name < members[j].Name })
	for _, m := range members {
		member := fp + ":" + m.Name
		if zr.Comment == uploadComment && m.Comment != "" {
			member = m.Comment
		}
		open := func() (io.ReadCloser, error) {
			rc, err := m.Open()
			if err != nil {
				return nil, fmt.Errorf("cannot open archive member: %w", err)
			}
			return memberReader{rc}, nil
		}
		f := File{Name: name + ":" + m.Name, Path: member, open: open, size: int64(min(m.UncompressedSize64, math.MaxInt64))}
		if err := yield(f.within(maxMember, memberLimit)); err != nil {
			return err
		}
	}
	return nil
}

// memberReader says that an error reading an archive member's stream (a
// checksum, a truncated member) is a damaged member.
type memberReader struct{ io.ReadCloser }

func (r memberReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = damagedMember{err}
	}
	return n, err
}

// damagedMember is an error reading an archive member.
type damagedMember struct{ error }

func (e damagedMember) Error() string { return "damaged archive member: " + e.error.Error() }
func (e damagedMember) Unwrap() error { return e.error }

// ReadMember reads an opened archive member whole, up to the size a member
// may have decompressed.
func ReadMember(member string, r io.Reader) ([]byte, error) {
	buf, err := io.ReadAll(io.LimitReader(r, maxMember+1))
	if err != nil {
		if !errors.As(err, new(damagedMember)) {
			err = damagedMember{err}
		}
		return nil, &Error{File: member, Err: err}
	}
	if len(buf) > maxMember {
		return nil, &Error{File: member, Err: errors.New(memberLimit)}
	}
	return buf, nil
}

// WriteDir writes files under dir, creating subdirectories as needed.
func WriteDir(dir string, files []File) error {
	d := &DirFiles{Dir: dir}
	for _, f := range files {
		w, err := d.Create(f.Name)
		if err != nil {
			d.Close()
			return err
		}
		if _, err := w.Write(f.Data); err != nil {
			d.Close()
			return err
		}
	}
	return d.Close()
}

// DirFiles makes files under Dir one after another, creating subdirectories
// as needed (a Stream's destination): a file is closed when the next one is
// made, the last one by Close. Made counts them.
type DirFiles struct {
	Dir  string
	Made int
	f    *os.File
}

// Create makes (or truncates) a file and returns it for writing.
func (d *DirFiles) Create(name string) (io.Writer, error) {
	if err := d.Close(); err != nil {
		return nil, err
	}
	fp := filepath.Join(d.Dir, filepath.FromSlash(name))
	// Private as the files are: their names are document ids.
	if err := os.MkdirAll(filepath.Dir(fp), 0o700); err != nil {
		return nil, err
	}
	f, err := CreatePrivate(fp)
	if err != nil {
		return nil, err
	}
	d.f = f
	d.Made++
	return f, nil
}

// CreatePrivate creates or truncates a file that only its owner may read
// and write (mode 0600), as every file made from notes must be: it holds PHI,
// or a model or features learnt from PHI. A file already there with wider
// permissions is narrowed to 0600 before it is truncated (O_TRUNC alone keeps
// the old mode, and the new contents would be readable by all); if that
// fails, the file is left as it was. Anything other than a regular file
// (/dev/stdout, a pipe) is written to unchanged.
func CreatePrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && info.Mode().IsRegular() {
		if info.Mode().Perm()&0o077 != 0 {
			err = f.Chmod(0o600)
		}
		if err == nil {
			err = f.Truncate(0)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Close closes the file made last.
func (d *DirFiles) Close() error {
	if d.f == nil {
		return nil
	}
	err := d.f.Close()
	d.f = nil
	return err
}

// WriteZip writes files as one zip archive.
func WriteZip(w io.Writer, files []File) error {
	_, err := ZipFrom(w, Files(files))
	return err
}

// ZipFrom writes the files of src as one zip archive, one in memory at a
// time, and returns how many it wrote. Two files of one name (100-01.xml of
// two directories) are an error naming both: the archive would hold two
// members of that name.
func ZipFrom(w io.Writer, src Source) (int, error) { return zipFrom(w, src, false) }

// ZipUpload is ZipFrom for files a job will read in place of the user: each
// member keeps, as its comment, where the user found the file, and ZipAt
// gives it back as the file's Path, so that the job's errors name the
// user's path ("notes/100-01.xml:33"), not the stored archive's member.
func ZipUpload(w io.Writer, src Source) (int, error) { return zipFrom(w, src, true) }

// uploadComment marks an archive ZipUpload wrote: only there is a member's
// comment a path.
const uploadComment = "deidcorpus upload: member comments are the files' paths"

func zipFrom(w io.Writer, src Source, paths bool) (int, error) {
	z := NewZipFiles(w)
	seen := map[string]string{} // member name -> the file it came from
	err := src(func(f File) error {
		if prev, dup := seen[f.Name]; dup {
			return &Error{File: f.where(), Err: fmt.Errorf("%s is named %s too: give one of them", prev, f.Name)}
		}
		seen[f.Name] = f.where()
		comment := ""
		if paths {
			comment = f.where()
		}
		fw, err := z.create(f.Name, comment)
		if err != nil {
			return err
		}
		r, err := f.reader()
		if err != nil {
			return err
		}
		defer r.Close()
		if _, err := io.Copy(fw, r); err != nil {
			if errors.As(err, new(*Error)) { // the reader's own, naming the file
				return err
			}
			return &Error{File: f.where(), Err: err}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if paths {
		if err := z.zw.SetComment(uploadComment); err != nil {
			return 0, err
		}
	}
	return z.Made, z.Close()
}

// ZipFiles makes files as the members of a zip archive, one after another
// (a Stream's destination); Close ends the archive. Made counts them.
type ZipFiles struct {
	Made int
	zw   *zip.Writer
}

// NewZipFiles starts an archive written to w.
func NewZipFiles(w io.Writer) *ZipFiles { return &ZipFiles{zw: zip.NewWriter(w)} }

// zipTime is every member's modification time: fixed, so that an archive of
// the same files is the same bytes, and a real date (a zero time lists as
// 1980-00-00 in unzip -l).
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// Create starts a member.
func (z *ZipFiles) Create(name string) (io.Writer, error) { return z.create(name, "") }

func (z *ZipFiles) create(name, comment string) (io.Writer, error) {
	z.Made++
	return z.zw.CreateHeader(&zip.FileHeader{Name: name, Comment: comment, Method: zip.Deflate, Modified: zipTime})
}

// Close writes the archive's directory.
func (z *ZipFiles) Close() error { return z.zw.Close() }
