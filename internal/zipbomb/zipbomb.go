// Package zipbomb writes zip archives whose members decompress to far more
// than the archive holds (a gigabyte of zeros in about a megabyte; 3,000
// notes of 3 MiB in a few megabytes), for the tests and benchmarks of the
// input limits. Such an archive is made as it is needed, never kept in the
// repository.
package zipbomb

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"hash/crc32"
	"io"
)

// chunk is the stretch of zeros compressed once and repeated.
const chunk = 1 << 20

// Write writes an archive of one deflated member, name, of size zero bytes
// (a whole number of MiB; others are rounded up), whose header tells its
// true size and checksum.
func Write(w io.Writer, name string, size int64) error {
	return Members(w, []string{name}, size, make([]byte, chunk))
}

// Members writes an archive of deflated members, each of unit repeated to
// size bytes (rounded up to a whole number of units), whose headers tell
// their true sizes and checksums. It costs the compression of one unit: a
// flushed deflate block of a compressor's first input refers back only
// within itself, so its bytes repeated decompress to the unit repeated.
func Members(w io.Writer, names []string, size int64, unit []byte) error {
	n := (size + int64(len(unit)) - 1) / int64(len(unit))
	var block bytes.Buffer
	fw, err := flate.NewWriter(&block, flate.BestCompression)
	if err != nil {
		return err
	}
	if _, err := fw.Write(unit); err != nil {
		return err
	}
	if err := fw.Flush(); err != nil {
		return err
	}
	var end bytes.Buffer // the final, empty block
	fe, _ := flate.NewWriter(&end, flate.BestCompression)
	if err := fe.Close(); err != nil {
		return err
	}
	crc := crc32.NewIEEE()
	for range n {
		crc.Write(unit)
	}
	zw := zip.NewWriter(w)
	for _, name := range names {
		mw, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc.Sum32(),
			CompressedSize64: uint64(n)*uint64(block.Len()) + uint64(end.Len()), UncompressedSize64: uint64(n) * uint64(len(unit))})
		if err != nil {
			return err
		}
		for range n {
			if _, err := mw.Write(block.Bytes()); err != nil {
				return err
			}
		}
		if _, err := mw.Write(end.Bytes()); err != nil {
			return err
		}
	}
	return zw.Close()
}
