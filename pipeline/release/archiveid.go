package release

import (
	"fmt"
	"strconv"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
)

// A release's content hashes are over each document's id, so verify must
// know which document of the archive is which. Most formats carry the id (a
// file's name, an attribute, a field); PhysioNet's files do not: a note is
// "START_OF_RECORD=101||||1||||", its patient and note number, and its
// reader names it "101-1". For such a format release.json lists, beside
// each document's id, the id its reader gives it back (Entry.ArchiveID), and
// verify names each document it reads by the entry that lists its archive
// id, then checks its text and spans as for any format.

// carriesIDs reports whether f's files carry a document's id: whether a
// document written and read back has its own. It is a property of the
// format's writer and reader, tried on one document, not of its name.
func carriesIDs(f *formats.Format) (bool, error) {
	probe := pipeline.Document{ID: "release-probe", Patient: "1", RecordOrder: 1}
	ids, err := archiveIDs(f, []pipeline.Document{probe})
	if err != nil {
		return false, fmt.Errorf("format %s: a document written and read back: %w", f.Name, err)
	}
	return ids[0] == probe.ID, nil
}

// archiveIDs gives the id each document comes back with when f's files of
// docs are read: a document's own id if f carries ids. It writes the
// documents without their spans and with their index for a text (the one
// thing of a document every release format gives back as written, which
// tells them apart), and reads them back.
func archiveIDs(f *formats.Format, docs []pipeline.Document) ([]string, error) {
	if f.Write == nil {
		return nil, fmt.Errorf("format %s cannot be written", f.Name)
	}
	stubs := make([]pipeline.Document, len(docs))
	for i, d := range docs {
		d.Text, d.Spans = strconv.Itoa(i), nil
		stubs[i] = d
	}
	files, err := f.Write(stubs)
	if err != nil {
		return nil, err
	}
	back, err := f.Read(files, formats.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("format %s does not read back the files it writes: %w", f.Name, err)
	}
	ids := make([]string, len(docs))
	for _, d := range back {
		i, err := strconv.Atoi(d.Text)
		if err != nil || i < 0 || i >= len(docs) || ids[i] != "" {
			return nil, fmt.Errorf("format %s reads back a document it did not write (%s)", f.Name, d.ID)
		}
		ids[i] = d.ID
	}
	for i, id := range ids {
		if id == "" {
			return nil, fmt.Errorf("document %s: format %s does not read it back from the files it writes", docs[i].ID, f.Name)
		}
	}
	return ids, nil
}
