package formats

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"

	"deidcorpus/pipeline"
)

// Stream writes a corpus in a format batch by batch, so that neither the
// documents nor their files are ever all in memory: each batch's files go
// to create, and a file that continues the previous batch's last one (the
// one file of a whole corpus, as JSON lines) is appended to it, up to
// partSize: past it the file goes on in a part of its own, its name numbered
// ("corpus.part0002.jsonl"), which a format with Records opens with its Head
// and closes with its Tail. A reader reads a file of many notes whole up
// to 192 MiB, and an archive's member of at most 256 MiB: no file of a big
// corpus is beyond either (a file of one note is bounded by the per-note
// limit, which the note met when it was imported). A format that is not
// Batched must get the whole corpus in one batch.
type Stream struct {
	f      *Format
	create func(name string) (io.Writer, error)
	name   string    // the file written last, as the format names it
	part   int       // ... its part (0: the first, under that name)
	size   int       // ... the bytes written to the part
	w      io.Writer // ... and where it goes
	wrote  bool
}

// partSize is how far a file is continued before it goes on in a new part.
var partSize = 128 << 20

// NewStream returns a Stream writing f's files to create.
func NewStream(f *Format, create func(name string) (io.Writer, error)) *Stream {
	return &Stream{f: f, create: create}
}

// Write renders one batch of documents and writes its files.
func (s *Stream) Write(docs []pipeline.Document) error {
	if s.f.Records == nil {
		s.wrote = true
		files, err := s.f.Write(docs)
		if err != nil {
			return err
		}
		return s.put(files, s.f.Batched)
	}
	if !s.wrote {
		s.wrote = true
		if err := s.put(s.f.Head, false); err != nil {
			return err
		}
	}
	files, err := s.f.Records(docs)
	if err != nil {
		return err
	}
	return s.put(files, true)
}

// put writes files, appending one that continues the file written last, in
// a new part of it if that one is full and split allows.
func (s *Stream) put(files []File, split bool) error {
	for _, file := range files {
		switch {
		case s.w == nil || file.Name != s.name:
			if err := s.open(file.Name, 0); err != nil {
				return err
			}
		case split && s.size >= partSize:
			if err := s.nextPart(); err != nil {
				return err
			}
		}
		if err := s.write(file.Data); err != nil {
			return err
		}
	}
	return nil
}

// nextPart ends the part being written and starts the next.
func (s *Stream) nextPart() error {
	for _, f := range s.f.Tail {
		if err := s.write(f.Data); err != nil {
			return err
		}
	}
	if err := s.open(s.name, s.part+1); err != nil {
		return err
	}
	for _, f := range s.f.Head {
		if err := s.write(f.Data); err != nil {
			return err
		}
	}
	return nil
}

// open starts a part of a file.
func (s *Stream) open(name string, part int) error {
	made := name
	if part > 0 {
		ext := path.Ext(name)
		made = fmt.Sprintf("%s.part%04d%s", strings.TrimSuffix(name, ext), part+1, ext)
	}
	w, err := s.create(made)
	if err != nil {
		return err
	}
	s.w, s.name, s.part, s.size = w, name, part, 0
	return nil
}

func (s *Stream) write(p []byte) error {
	s.size += len(p)
	_, err := s.w.Write(p)
	return err
}

// Close writes what the format writes of an empty corpus when no batch
// came, and the Tail of a format with Records.
func (s *Stream) Close() error {
	if !s.wrote {
		if err := s.Write(nil); err != nil {
			return err
		}
	}
	if s.f.Records == nil {
		return nil
	}
	return s.put(s.f.Tail, false)
}

// Collector keeps the files made through its Create in memory, for callers
// that want them all at once.
type Collector struct {
	names []string
	bufs  []*bytes.Buffer
}

// Create starts a file.
func (c *Collector) Create(name string) (io.Writer, error) {
	c.names = append(c.names, name)
	c.bufs = append(c.bufs, new(bytes.Buffer))
	return c.bufs[len(c.bufs)-1], nil
}

// Files returns the files made, in the order they were made.
func (c *Collector) Files() []File {
	files := make([]File, len(c.names))
	for i := range c.names {
		files[i] = File{Name: c.names[i], Data: c.bufs[i].Bytes()}
	}
	return files
}
