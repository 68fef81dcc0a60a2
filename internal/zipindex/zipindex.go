// Package zipindex reads a zip archive's central directory as a stream, one
// entry at a time, and opens an entry's content, so that a program can check
// an archive of a million files in memory that does not grow with it.
// archive/zip keeps every entry (about 300 bytes each) for as long as its
// Reader lives; this package keeps none: Walk hands each entry on as it is
// read, and Sort gives them in name order by way of sorted runs kept in a
// temporary file.
//
// It reads what archive/zip and the common tools write, zip64 included. It
// refuses archives spanned over several disks, archives with data prepended
// before the first entry (self-extracting ones) and directory entries that
// hold content. Every offset and size is checked against the archive before
// it is used, so a hostile archive gets an error naming the entry and what
// is wrong with it, never a panic or an allocation its size does not
// justify.
package zipindex

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Compression methods Open reads.
const (
	Store   uint16 = 0
	Deflate uint16 = 8
)

// Sentinels the errors match with errors.Is.
var (
	// ErrFormat: the archive is damaged, truncated or not a zip archive.
	ErrFormat = errors.New("not a valid zip archive")
	// ErrChecksum: an entry's content does not have its declared CRC-32.
	ErrChecksum = errors.New("checksum mismatch")
)

// formatError is an ErrFormat with its own message.
type formatError string

func (e formatError) Error() string      { return string(e) }
func (formatError) Is(target error) bool { return target == ErrFormat }

func errorf(format string, args ...any) error { return formatError(fmt.Sprintf(format, args...)) }

// EntryError is what is wrong with one entry: its index in the central
// directory (from 0), its name once it has been read, and the problem.
type EntryError struct {
	Index int
	Name  string
	Err   error
}

func (e *EntryError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("zip entry %d: %v", e.Index, e.Err)
	}
	return fmt.Sprintf("zip entry %d %q: %v", e.Index, e.Name, e.Err)
}

func (e *EntryError) Unwrap() error { return e.Err }

// Entry is one file (or directory) of the archive, as its central directory
// header describes it. Walk has checked that its local header and its
// compressed content lie inside the archive's entries, before the central
// directory.
type Entry struct {
	Index            int // in the central directory, from 0
	Name             string
	Flags, Method    uint16
	CRC32            uint32
	CompressedSize   int64
	UncompressedSize uint64 // as declared: a Deflate entry's is not bounded by the archive's size
	Offset           int64  // of the local file header, from the start of the archive
}

// IsDir says the entry is a directory: its name ends in "/".
func (e *Entry) IsDir() bool { return strings.HasSuffix(e.Name, "/") }

func (e *Entry) errorf(format string, args ...any) error {
	return &EntryError{Index: e.Index, Name: e.Name, Err: errorf(format, args...)}
}

// Reader reads one archive's central directory. It holds where the
// directory is, not its entries; it is safe for concurrent use if r is.
type Reader struct {
	r        io.ReaderAt
	size     int64
	dirStart int64  // the central directory's offset: the entries' content ends here
	dirSize  int64  // its length
	records  uint64 // how many entries the end record declares
	zip64    bool   // records is zip64's, exact; otherwise it counts modulo 65536
}

// Lengths and signatures of the records the package reads (APPNOTE.TXT
// 4.3.7, 4.3.12, 4.3.14-16).
const (
	fileHeaderLen = 30
	dirHeaderLen  = 46
	dirEndLen     = 22
	dir64LocLen   = 20
	dir64EndLen   = 56

	fileHeaderSig = 0x04034b50
	dirHeaderSig  = 0x02014b50
	dirEndSig     = 0x06054b50
	dir64LocSig   = 0x07064b50
	dir64EndSig   = 0x06064b50

	zip64ExtraID = 0x0001
	maxComment   = 0xffff
)

// NewReader finds the end of central directory record of the archive r,
// size bytes long (and the zip64 one it points to, if any), and checks that
// the central directory it describes lies inside the archive. It reads at
// most 64 KiB; the entries are read by Walk.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	if size < dirEndLen {
		return nil, errorf("%d bytes: too short to hold a zip archive's end record (%d bytes)", size, dirEndLen)
	}
	// The end record is the last thing in the archive but for its comment,
	// at most 65,535 bytes.
	n := min(size, dirEndLen+maxComment)
	tail := make([]byte, n)
	if _, err := r.ReadAt(tail, size-n); err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading the archive's end: %w", err)
	}
	at := -1
	for i := int(n) - dirEndLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(tail[i:]) == dirEndSig &&
			i+dirEndLen+int(binary.LittleEndian.Uint16(tail[i+20:])) <= int(n) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil, errorf("no end of central directory record: not a zip archive, or a truncated one")
	}
	end := size - n + int64(at) // the end record's offset
	b := tail[at:]
	disk, dirDisk := uint32(binary.LittleEndian.Uint16(b[4:])), uint32(binary.LittleEndian.Uint16(b[6:]))
	z := &Reader{r: r, size: size}
	records := uint64(binary.LittleEndian.Uint16(b[10:]))
	dirSize := uint64(binary.LittleEndian.Uint32(b[12:]))
	dirStart := uint64(binary.LittleEndian.Uint32(b[16:]))
	limit := uint64(end) // where the central directory must end
	if records == 0xffff || dirSize == 0xffffffff || dirStart == 0xffffffff {
		// Saturated fields: the real values are in the zip64 end record,
		// if a locator just before this record points to one. An archive
		// without it may have exactly 65,535 entries.
		at64, err := z.find64(end)
		if err != nil {
			return nil, err
		}
		if at64 >= 0 {
			var b [dir64EndLen]byte
			if _, err := r.ReadAt(b[:], at64); err != nil {
				return nil, fmt.Errorf("reading the zip64 end of central directory record at offset %d: %w", at64, err)
			}
			if binary.LittleEndian.Uint32(b[:]) != dir64EndSig {
				return nil, errorf("no zip64 end of central directory record at offset %d, where its locator points", at64)
			}
			disk, dirDisk = binary.LittleEndian.Uint32(b[16:]), binary.LittleEndian.Uint32(b[20:])
			records = binary.LittleEndian.Uint64(b[32:])
			dirSize = binary.LittleEndian.Uint64(b[40:])
			dirStart = binary.LittleEndian.Uint64(b[48:])
			limit = uint64(at64)
			z.zip64 = true
		}
	}
	if disk != 0 || dirDisk != 0 {
		return nil, errorf("spanned over several disks (this is disk %d, the central directory on disk %d): not supported", disk, dirDisk)
	}
	if dirStart > limit || dirSize > limit-dirStart {
		return nil, errorf("the central directory (offset %d, %d bytes) runs past its end record at offset %d: the archive is truncated or damaged", dirStart, dirSize, limit)
	}
	if records > dirSize/dirHeaderLen && z.zip64 {
		return nil, errorf("the end record declares %d entries, more than a central directory of %d bytes can hold", records, dirSize)
	}
	z.dirStart, z.dirSize, z.records = int64(dirStart), int64(dirSize), records
	return z, nil
}

// find64 is the offset of the zip64 end record that the locator before the
// end record at end points to, -1 if there is no locator.
func (z *Reader) find64(end int64) (int64, error) {
	if end < dir64LocLen {
		return -1, nil
	}
	var b [dir64LocLen]byte
	if _, err := z.r.ReadAt(b[:], end-dir64LocLen); err != nil {
		return -1, fmt.Errorf("reading the zip64 end of central directory locator: %w", err)
	}
	if binary.LittleEndian.Uint32(b[:]) != dir64LocSig {
		return -1, nil
	}
	if disk, disks := binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[16:]); disk != 0 || disks > 1 {
		return -1, errorf("spanned over %d disks (the zip64 end record on disk %d): not supported", disks, disk)
	}
	at := binary.LittleEndian.Uint64(b[8:])
	if limit := uint64(end - dir64LocLen); limit < dir64EndLen || at > limit-dir64EndLen {
		return -1, errorf("the zip64 end of central directory record's offset %d is not before its locator at offset %d", at, end-dir64LocLen)
	}
	return int64(at), nil
}

// Len is how many entries the end record declares. Without zip64 it is
// modulo 65,536: some writers put more entries than that in an archive
// without saying so. Walk counts them exactly.
func (z *Reader) Len() uint64 { return z.records }

// Walk calls fn with each entry in central directory order, stopping at
// fn's first error, which it returns. It reads the directory through a small
// buffer and keeps no entry. An entry it cannot read, or whose header points
// outside the archive's entries, or a directory entry that holds content, is
// an *EntryError: the entries before it have been given to fn.
func (z *Reader) Walk(fn func(Entry) error) error {
	br := bufio.NewReaderSize(io.NewSectionReader(z.r, z.dirStart, z.dirSize), 32<<10)
	var (
		hdr   [dirHeaderLen]byte
		name  []byte
		extra []byte
	)
	left := z.dirSize
	count := uint64(0)
	for i := 0; left > 0; i++ {
		bad := func(format string, args ...any) error {
			return &EntryError{Index: i, Err: errorf(format, args...)}
		}
		if left < dirHeaderLen {
			return bad("the central directory ends %d bytes into its header, which takes %d", left, dirHeaderLen)
		}
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return &EntryError{Index: i, Err: fmt.Errorf("reading its central directory header: %w", err)}
		}
		if sig := binary.LittleEndian.Uint32(hdr[:]); sig != dirHeaderSig {
			return bad("no central directory header at offset %d (found %#08x): the central directory is damaged", z.dirStart+z.dirSize-left, sig)
		}
		nameLen := int(binary.LittleEndian.Uint16(hdr[28:]))
		extraLen := int(binary.LittleEndian.Uint16(hdr[30:]))
		commentLen := int(binary.LittleEndian.Uint16(hdr[32:]))
		total := int64(dirHeaderLen + nameLen + extraLen + commentLen)
		if total > left {
			return bad("its header (%d bytes with name, extra field and comment) runs past the end of the central directory", total)
		}
		name = grow(name, nameLen)
		extra = grow(extra, extraLen)
		if _, err := io.ReadFull(br, name); err != nil {
			return &EntryError{Index: i, Err: fmt.Errorf("reading its name: %w", err)}
		}
		e := Entry{Index: i, Name: string(name)}
		if _, err := io.ReadFull(br, extra); err != nil {
			return &EntryError{Index: i, Name: e.Name, Err: fmt.Errorf("reading its extra field: %w", err)}
		}
		if _, err := br.Discard(commentLen); err != nil {
			return &EntryError{Index: i, Name: e.Name, Err: fmt.Errorf("reading its comment: %w", err)}
		}
		left -= total
		count++
		e.Flags = binary.LittleEndian.Uint16(hdr[8:])
		e.Method = binary.LittleEndian.Uint16(hdr[10:])
		e.CRC32 = binary.LittleEndian.Uint32(hdr[16:])
		csize := uint64(binary.LittleEndian.Uint32(hdr[20:]))
		e.UncompressedSize = uint64(binary.LittleEndian.Uint32(hdr[24:]))
		offset := uint64(binary.LittleEndian.Uint32(hdr[42:]))
		if err := e.zip64(extra, &csize, &offset); err != nil {
			return err
		}
		// The entries' local headers and content come before the
		// central directory.
		dataEnd := uint64(z.dirStart)
		if dataEnd < fileHeaderLen || offset > dataEnd-fileHeaderLen {
			return e.errorf("its local header's offset %d is outside the archive's entries, which end at offset %d", offset, dataEnd)
		}
		if csize > dataEnd-fileHeaderLen-offset {
			return e.errorf("its %d compressed bytes from offset %d run past the archive's entries, which end at offset %d", csize, offset, dataEnd)
		}
		e.Offset, e.CompressedSize = int64(offset), int64(csize)
		if e.IsDir() && e.holds() {
			return e.errorf("a directory that holds %d bytes (%d compressed): nothing unpacks a directory's content, so nothing would check it", e.UncompressedSize, e.CompressedSize)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if z.zip64 && count != z.records || !z.zip64 && uint16(count) != uint16(z.records) {
		return errorf("the central directory holds %d entries, its end record says %d: the archive is damaged", count, z.records)
	}
	return nil
}

// holds says an entry has content. At most 2 bytes of Deflate hold nothing
// (a literal byte takes 18 bits): some writers, Java's among them, give a
// directory the empty stream's 2 bytes.
func (e *Entry) holds() bool {
	if e.UncompressedSize > 0 {
		return true
	}
	if e.Method == Deflate {
		return e.CompressedSize > 2
	}
	return e.CompressedSize > 0
}

// zip64 reads the sizes and offset that the entry's header saturates from
// its zip64 extra field (APPNOTE.TXT 4.5.3), in the order the field gives
// them: uncompressed size, compressed size, local header offset.
func (e *Entry) zip64(extra []byte, csize, offset *uint64) error {
	needU := e.UncompressedSize == 0xffffffff
	needC := *csize == 0xffffffff
	needO := *offset == 0xffffffff
	if !needU && !needC && !needO {
		return nil
	}
	for len(extra) >= 4 {
		id := binary.LittleEndian.Uint16(extra)
		n := int(binary.LittleEndian.Uint16(extra[2:]))
		extra = extra[4:]
		if n > len(extra) {
			// A field that runs past the end: archive/zip reads no further
			// either, and a size it should have given is refused below.
			break
		}
		field := extra[:n]
		extra = extra[n:]
		if id != zip64ExtraID {
			continue
		}
		for _, v := range []struct {
			need *bool
			set  func(uint64)
			what string
		}{
			{&needU, func(x uint64) { e.UncompressedSize = x }, "uncompressed size"},
			{&needC, func(x uint64) { *csize = x }, "compressed size"},
			{&needO, func(x uint64) { *offset = x }, "local header offset"},
		} {
			if !*v.need {
				continue
			}
			if len(field) < 8 {
				return e.errorf("its zip64 extra field ends before its %s", v.what)
			}
			v.set(binary.LittleEndian.Uint64(field))
			field = field[8:]
			*v.need = false
		}
		break
	}
	// An uncompressed size of 2^32-1 is possible in a zip32 archive, which
	// archive/zip also allows; the others are not plausibly real.
	switch {
	case needC:
		return e.errorf("its compressed size is saturated (%#x) but no zip64 extra field gives it", uint32(math.MaxUint32))
	case needO:
		return e.errorf("its local header offset is saturated (%#x) but no zip64 extra field gives it", uint32(math.MaxUint32))
	}
	return nil
}

// grow returns b with length n, reallocated only if its capacity is short.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
