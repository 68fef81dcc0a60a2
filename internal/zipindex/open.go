package zipindex

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"sync"
)

// Open gives the content of e, an entry Walk or Sort gave for this archive.
// It reads the entry's local header to find where the content starts (and
// checks that the header names the entry as the central directory does:
// a tool that unpacks by local headers would otherwise write a file nobody
// checked). Reading to the end checks the content's length and CRC-32
// against the central directory's, as archive/zip does; a mismatch is an
// *EntryError matching ErrChecksum or ErrFormat. Store and Deflate are read;
// another method, or an encrypted entry, matches errors.ErrUnsupported.
func (z *Reader) Open(e Entry) (io.ReadCloser, error) {
	if e.Flags&0x1 != 0 {
		return nil, &EntryError{Index: e.Index, Name: e.Name, Err: fmt.Errorf("encrypted: %w", errors.ErrUnsupported)}
	}
	if e.Method != Store && e.Method != Deflate {
		return nil, &EntryError{Index: e.Index, Name: e.Name, Err: fmt.Errorf("compression method %d: %w", e.Method, errors.ErrUnsupported)}
	}
	// Walk checked that the header and content fit before the central
	// directory; Entry's fields are exported, so check again.
	if e.Offset < 0 || e.Offset > z.dirStart-fileHeaderLen || e.CompressedSize < 0 {
		return nil, e.errorf("its local header's offset %d is outside the archive's entries, which end at offset %d", e.Offset, z.dirStart)
	}
	var hdr [fileHeaderLen]byte
	if _, err := z.r.ReadAt(hdr[:], e.Offset); err != nil {
		return nil, &EntryError{Index: e.Index, Name: e.Name, Err: fmt.Errorf("reading its local header at offset %d: %w", e.Offset, err)}
	}
	if sig := binary.LittleEndian.Uint32(hdr[:]); sig != fileHeaderSig {
		return nil, e.errorf("no local file header at offset %d (found %#08x)", e.Offset, sig)
	}
	nameLen := int64(binary.LittleEndian.Uint16(hdr[26:]))
	extraLen := int64(binary.LittleEndian.Uint16(hdr[28:]))
	start := e.Offset + fileHeaderLen + nameLen + extraLen // at most dirStart + 2^17: no overflow
	if start > z.dirStart || e.CompressedSize > z.dirStart-start {
		return nil, e.errorf("its %d compressed bytes from offset %d run into the central directory at offset %d", e.CompressedSize, start, z.dirStart)
	}
	if nameLen != int64(len(e.Name)) {
		return nil, e.errorf("its local header names another file (a name of %d bytes)", nameLen)
	}
	name := make([]byte, nameLen)
	if _, err := z.r.ReadAt(name, e.Offset+fileHeaderLen); err != nil {
		return nil, &EntryError{Index: e.Index, Name: e.Name, Err: fmt.Errorf("reading its local header's name: %w", err)}
	}
	if !bytes.Equal(name, []byte(e.Name)) {
		return nil, e.errorf("its local header names another file, %q", name)
	}
	content := io.NewSectionReader(z.r, start, e.CompressedSize)
	var rc io.ReadCloser
	if e.Method == Store {
		if uint64(e.CompressedSize) != e.UncompressedSize {
			return nil, e.errorf("stored, yet %d bytes long in the archive and %d unpacked", e.CompressedSize, e.UncompressedSize)
		}
		rc = io.NopCloser(content)
	} else {
		rc = inflater(content)
	}
	return &checked{rc: rc, e: e, crc: crc32.NewIEEE()}, nil
}

// inflaters keeps Deflate readers (a 32 KiB window and tables each) for
// the next entry: verifying a million files would otherwise allocate one
// for each.
var inflaters sync.Pool

func inflater(r io.Reader) io.ReadCloser {
	if fr, ok := inflaters.Get().(io.ReadCloser); ok {
		fr.(flate.Resetter).Reset(r, nil)
		return &pooled{fr}
	}
	return &pooled{flate.NewReader(r)}
}

// pooled gives its Deflate reader back to the pool when closed, once.
type pooled struct{ io.ReadCloser }

func (p *pooled) Read(b []byte) (int, error) {
	if p.ReadCloser == nil {
		return 0, errors.New("read after close")
	}
	return p.ReadCloser.Read(b)
}

func (p *pooled) Close() error {
	if p.ReadCloser == nil {
		return nil
	}
	err := p.ReadCloser.Close()
	inflaters.Put(p.ReadCloser)
	p.ReadCloser = nil
	return err
}

// checked counts and hashes what it reads, and at the end compares them
// with the entry's declared size and CRC-32.
type checked struct {
	rc  io.ReadCloser
	e   Entry
	crc hash.Hash32
	n   uint64
	err error
}

func (c *checked) Read(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.rc.Read(b)
	if over := c.n + uint64(n); over > c.e.UncompressedSize || over < c.n {
		n = int(c.e.UncompressedSize - c.n)
		err = c.e.errorf("its content runs past its declared %d bytes", c.e.UncompressedSize)
	}
	c.crc.Write(b[:n])
	c.n += uint64(n)
	switch {
	case err == io.EOF:
		if c.n != c.e.UncompressedSize {
			err = &EntryError{Index: c.e.Index, Name: c.e.Name,
				Err: fmt.Errorf("its content ends after %d of its declared %d bytes: %w", c.n, c.e.UncompressedSize, io.ErrUnexpectedEOF)}
		} else if sum := c.crc.Sum32(); sum != c.e.CRC32 {
			err = &EntryError{Index: c.e.Index, Name: c.e.Name,
				Err: fmt.Errorf("%w: its content's CRC-32 is %08x, its header says %08x", ErrChecksum, sum, c.e.CRC32)}
		}
	case err != nil:
		if _, ok := err.(*EntryError); !ok {
			err = &EntryError{Index: c.e.Index, Name: c.e.Name, Err: fmt.Errorf("reading its content: %w", err)}
		}
	}
	c.err = err
	return n, err
}

func (c *checked) Close() error { return c.rc.Close() }
