package formats

import (
	"bytes"
	"io"

	"deidcorpus/pipeline"
)

// Stream writes a corpus in a format batch by batch, so that neither the
// documents nor their files are ever all in memory: each batch's files go
// to create, and a file that continues the previous batch's last one (the
// one file of a whole corpus, as JSON lines) is appended to it. A format
// that is not Batched must get the whole corpus in one batch.
type Stream struct {
	f      *Format
	create func(name string) (io.Writer, error)
	name   string    // the file written last
	w      io.Writer // ... and where it goes
	wrote  bool
}

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
		return s.put(files)
	}
	if !s.wrote {
		s.wrote = true
		if err := s.put(s.f.Head); err != nil {
			return err
		}
	}
	files, err := s.f.Records(docs)
	if err != nil {
		return err
	}
	return s.put(files)
}

// put writes files, appending one that continues the file written last.
func (s *Stream) put(files []File) error {
	var err error
	for _, file := range files {
		if s.w == nil || file.Name != s.name {
			if s.w, err = s.create(file.Name); err != nil {
				return err
			}
			s.name = file.Name
		}
		if _, err := s.w.Write(file.Data); err != nil {
			return err
		}
	}
	return nil
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
	return s.put(s.f.Tail)
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
