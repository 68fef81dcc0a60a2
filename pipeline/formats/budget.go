package formats

import (
	"errors"
	"fmt"
)

// DefaultMaxImport is the import budget of a reading that sets none: the
// most bytes an import's files may hold once decompressed, all together.
// The per-note limit bounds each note, not how many there are: a 9.5 MB zip
// of 3,000 notes of 3 MiB each holds 9 GiB of text, which the server would
// decompress, store again and parse twice. A real corpus is far below it
// (MEDDOCAN is 5 MB, 105,000 generated notes 350 MB); a larger one is
// imported in parts, or with the budget raised (--max-import-size).
const DefaultMaxImport = 2 << 30

// ErrOverBudget is the error of files over an import budget (WithinBudget).
var ErrOverBudget = errors.New("over the import budget")

// WithinBudget refuses the files of src when they hold more than max bytes
// in all (0: DefaultMaxImport), before any is read: the sizes are what the
// Source knows without reading them, an archive member's from the archive's
// directory (which archive/zip holds the member to as it decompresses it),
// a file's from the disk, an upload's from the request.
func WithinBudget(src Source, max int64) error {
	if max <= 0 {
		max = DefaultMaxImport
	}
	var total int64
	var files int
	err := src(func(f File) error {
		files++
		if f.open == nil {
			total += int64(len(f.Data))
		} else {
			total += f.size
		}
		return nil
	})
	if err != nil {
		return err
	}
	if total > max {
		return fmt.Errorf("%w: the %d files given hold %s once decompressed, more than the %s an import may take: "+
			"import them in parts, or raise the budget with --max-import-size", ErrOverBudget, files, approx(total), size(max))
	}
	return nil
}

// approx says a number of bytes in MiB, rounded down, when it is over one.
func approx(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
