package formats

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// maxMember bounds one decompressed archive member, so that a zip bomb fails
// with a clear error instead of exhausting memory.
const maxMember = 256 << 20

// ReadPaths loads files, the files under directories (recursively, hidden
// files skipped), and the members of .zip archives, in a stable order.
func ReadPaths(paths ...string) ([]File, error) {
	var out []File
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files, err := readFile(p, filepath.Base(p))
			if err != nil {
				return nil, err
			}
			out = append(out, files...)
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
			rel, _ := filepath.Rel(p, fp)
			files, err := readFile(fp, filepath.ToSlash(rel))
			out = append(out, files...)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readFile(fp, name string) ([]File, error) {
	data, err := os.ReadFile(fp)
	if err != nil {
		return nil, err
	}
	return Expand(name, data)
}

// Expand returns a file as itself, or a .zip archive as its members.
func Expand(name string, data []byte) ([]File, error) {
	if strings.EqualFold(path.Ext(name), ".zip") {
		return Unzip(name, data)
	}
	return []File{{Name: name, Data: data}}, nil
}

// Unzip expands an archive's regular members (directories and hidden files
// skipped). A damaged member fails the whole archive, naming the member.
func Unzip(name string, data []byte) ([]File, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, &Error{File: name, Err: fmt.Errorf("not a readable zip archive: %w", err)}
	}
	var out []File
	for _, m := range zr.File {
		base := path.Base(m.Name)
		if m.FileInfo().IsDir() || strings.HasPrefix(base, ".") || strings.HasPrefix(m.Name, "__MACOSX/") {
			continue
		}
		member := name + ":" + m.Name
		rc, err := m.Open()
		if err != nil {
			return nil, &Error{File: member, Err: fmt.Errorf("cannot open archive member: %w", err)}
		}
		buf, err := io.ReadAll(io.LimitReader(rc, maxMember+1))
		rc.Close()
		if err != nil {
			return nil, &Error{File: member, Err: fmt.Errorf("damaged archive member: %w", err)}
		}
		if len(buf) > maxMember {
			return nil, &Error{File: member, Err: fmt.Errorf("archive member larger than %d MiB", maxMember>>20)}
		}
		out = append(out, File{Name: member, Data: buf})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
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
	if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(fp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	d.f = f
	d.Made++
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
	z := NewZipFiles(w)
	for _, f := range files {
		fw, err := z.Create(f.Name)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.Data); err != nil {
			return err
		}
	}
	return z.Close()
}

// ZipFiles makes files as the members of a zip archive, one after another
// (a Stream's destination); Close ends the archive. Made counts them.
type ZipFiles struct {
	Made int
	zw   *zip.Writer
}

// NewZipFiles starts an archive written to w.
func NewZipFiles(w io.Writer) *ZipFiles { return &ZipFiles{zw: zip.NewWriter(w)} }

// Create starts a member.
func (z *ZipFiles) Create(name string) (io.Writer, error) {
	z.Made++
	return z.zw.Create(name)
}

// Close writes the archive's directory.
func (z *ZipFiles) Close() error { return z.zw.Close() }
