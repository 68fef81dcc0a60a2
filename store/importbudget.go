package store

import (
	"errors"

	"deidcorpus/apperr"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

// What an import holds at once, and how much it may take in all.

// WithinBudget refuses, before any of them is read, files of src that
// hold more than the import's budget (formats.WithinBudget): what an
// import holds at once is bounded by its batches (importBatchBytes), but
// not how long it decompresses, stores and parses.
func (opt ImportOptions) WithinBudget(src formats.Source) error {
	err := formats.WithinBudget(src, opt.MaxImport)
	if errors.Is(err, formats.ErrOverBudget) {
		return apperr.Wrap(apperr.Invalid, err)
	}
	return err
}

// importBatch is about how many documents an import writes per transaction:
// a batch ends at the first change of patient after it, so that a patient's
// notes that follow each other in the input are written together. Short
// transactions keep SQLite's one writer free for heartbeats and requests.
// A batch also ends before it would hold more than importBatchBytes of
// notes (docBytes), whatever their patient: with one batch being written
// while the next is read, an import holds about twice that in notes,
// however many and large they are (500 notes of 3 MiB were 1.5 GiB a
// batch, and an upload of them took the server's memory).
const (
	importBatch      = 500
	importBatchBytes = 16 << 20
)

// docBytes is about what a document takes in memory as a batch holds it:
// its text, and its spans' text and fields.
func docBytes(d pipeline.Document) int {
	n := len(d.Text) + len(d.ID) + len(d.Patient)
	for _, sp := range d.Spans {
		n += spanBytes + len(sp.Text) + len(sp.Comment) + len(sp.ID)
	}
	return n
}

// spanBytes is what a span's fields other than its strings take.
const spanBytes = 128
