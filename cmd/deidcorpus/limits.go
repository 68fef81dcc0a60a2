package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"deidcorpus/pipeline/formats"
)

// byteSize is a flag of a number of bytes: 4MiB, 512KiB, 1GiB or a plain
// count (K, M, G and KB, MB, GB mean the same binary units).
type byteSize int64

func (b *byteSize) String() string {
	switch n := int64(*b); {
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	default:
		return strconv.FormatInt(n, 10)
	}
}

func (b *byteSize) Set(s string) error {
	num := strings.TrimRight(s, "KMGiBkmgb")
	unit := strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(s[len(num):], "B"), "b"))
	shift, ok := map[string]uint{"": 0, "K": 10, "KI": 10, "M": 20, "MI": 20, "G": 30, "GI": 30}[unit]
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if !ok || err != nil || n <= 0 || n > (1<<62)>>shift {
		return fmt.Errorf("%q is not a size: give bytes, or e.g. 512KiB, 4MiB, 1GiB", s)
	}
	*b = byteSize(n << shift)
	return nil
}

// maxNoteFlag adds --max-note-size, the per-note limit of the files a
// command reads (formats.ReadOptions.MaxNote).
func maxNoteFlag(fs *flag.FlagSet) *byteSize {
	n := byteSize(formats.DefaultMaxNote)
	fs.Var(&n, "max-note-size", "the most a note may take, as `SIZE`: its text, its file where a file holds one note (annotations included), "+
		"its JSON line; a larger one is refused as it is read")
	return &n
}

// maxImportFlag adds --max-import-size, the budget of an import: the most
// its files may hold once decompressed, all together
// (store.ImportOptions.MaxImport).
func maxImportFlag(fs *flag.FlagSet) *byteSize {
	n := byteSize(formats.DefaultMaxImport)
	fs.Var(&n, "max-import-size", "the most one import's files may hold once decompressed, all together, as `SIZE`; "+
		"larger ones are refused before any is read")
	return &n
}
