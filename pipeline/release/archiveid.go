package release

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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
// docs are read: a document's own id if f carries ids.
func archiveIDs(f *formats.Format, docs []pipeline.Document) ([]string, error) {
	back, err := readBack(f, docs)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(back))
	for i, d := range back {
		ids[i] = d.ID
	}
	return ids, nil
}

// readBack gives, for each document, the id and patient it comes back with
// when f's files of docs are read. It writes the documents without their
// spans and with their index for a text (the one thing of a document every
// release format gives back as written, which tells them apart), and reads
// them back.
func readBack(f *formats.Format, docs []pipeline.Document) ([]pipeline.Document, error) {
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
	out := make([]pipeline.Document, len(docs))
	for _, d := range back {
		i, err := strconv.Atoi(d.Text)
		if err != nil || i < 0 || i >= len(docs) || out[i].ID != "" {
			return nil, fmt.Errorf("format %s reads back a document it did not write (%s)", f.Name, d.ID)
		}
		out[i] = pipeline.Document{ID: d.ID, Patient: d.Patient}
	}
	for i, d := range out {
		if d.ID == "" {
			return nil, fmt.Errorf("document %s: format %s does not read it back from the files it writes", docs[i].ID, f.Name)
		}
	}
	return out, nil
}

// A format that carries a document's id may still name its patient only by
// it: i2b2 and brat files are named ID.xml, and "100-01.xml" is read back as
// note 1 of patient 100. A release whose ids say nothing of their patients
// (pseudonymous ids, or a corpus that named its notes otherwise) would lose
// which notes are one patient's. Such a document is written under an
// archive id "PATIENT-NN", the first number of its patient that no other
// file of the patient has, and release.json lists it beside the document's
// own id, as for a format that carries no ids (Entry.ArchiveID).

// groupedArchiveIDs gives the archive ids of a batch of a set's documents in
// a format that carries ids, and the documents as they are written: "" for
// one written under its own id, which comes back with its own patient; nil
// (and docs as they are) if every one is. A patient's
// documents must all be in the batch (Each's batches end with a patient's):
// the names of a patient's files are unique among that patient's, and only
// a patient's own names read back with that patient. A patient whose id no
// file name can hold (a '/', '\\' or ':') keeps its documents' ids, as before.
func groupedArchiveIDs(f *formats.Format, docs []pipeline.Document) ([]string, []pipeline.Document, error) {
	if len(docs) == 0 {
		return nil, docs, nil
	}
	back, err := readBack(f, docs)
	if err != nil {
		return nil, nil, err
	}
	// The ids kept first, so that no new name takes one.
	used := map[string]bool{}
	rename := make([]bool, len(docs))
	renaming := false
	for i, d := range docs {
		nameable := d.Patient != "" && !strings.ContainsAny(d.Patient, "/\\:\x00")
		if nameable && (back[i].ID != d.ID || back[i].Patient != d.Patient) {
			rename[i], renaming = true, true
		} else {
			used[d.ID] = true
		}
	}
	if !renaming {
		return nil, docs, nil
	}
	out := make([]string, len(docs))
	next := map[string]int{}
	renamed := slices.Clone(docs)
	for i, d := range docs {
		if !rename[i] {
			continue
		}
		for out[i] == "" || used[out[i]] {
			next[d.Patient]++
			out[i] = fmt.Sprintf("%s-%02d", d.Patient, next[d.Patient])
		}
		used[out[i]] = true
		renamed[i].ID = out[i]
	}
	if back, err = readBack(f, renamed); err != nil {
		return nil, nil, err
	}
	for i, id := range out {
		if id != "" && (back[i].ID != id || back[i].Patient != docs[i].Patient) {
			return nil, nil, fmt.Errorf("document %s: format %s reads its archive id %q back as %s of patient %s, not of patient %s",
				docs[i].ID, f.Name, id, back[i].ID, back[i].Patient, docs[i].Patient)
		}
	}
	return out, renamed, nil
}
