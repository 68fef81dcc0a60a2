// Package zipbomb writes zip archives whose one member decompresses to far
// more than the archive holds (a gigabyte of zeros in about a megabyte), for
// the tests and benchmarks of the input limits. Such an archive is made as
// it is needed, never kept in the repository.
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
// true size and checksum. It costs the compression of one MiB: a flushed
// deflate block of zeros refers back only within itself, so its bytes
// repeated decompress to the zeros repeated.
func Write(w io.Writer, name string, size int64) error {
	n := (size + chunk - 1) / chunk
	var block bytes.Buffer
	fw, err := flate.NewWriter(&block, flate.BestCompression)
	if err != nil {
		return err
	}
	zeros := make([]byte, chunk)
	if _, err := fw.Write(zeros); err != nil {
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
		crc.Write(zeros)
	}
	zw := zip.NewWriter(w)
	mw, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(n)*uint64(block.Len()) + uint64(end.Len()), UncompressedSize64: uint64(n * chunk)})
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
	return zw.Close()
}
