package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/document"
	"deidcorpus/ent/patient"
	"deidcorpus/ent/span"
	"deidcorpus/pipeline"
)

// The write of an import's batch, in one transaction: also how a layer of
// annotations (AddAnnotations) and a resynthesis's batches are written.

func getOrCreateSet(ctx context.Context, tx *ent.Tx, corpusID int, name, kind string) (*ent.AnnotationSet, error) {
	set, err := tx.AnnotationSet.Query().Where(annotationset.CorpusID(corpusID), annotationset.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		return tx.AnnotationSet.Create().SetCorpusID(corpusID).SetName(name).
			SetKind(annotationset.Kind(kind)).Save(ctx)
	}
	return set, err
}

// writeDocuments inserts docs and their spans into set. Existing documents
// conflict unless replace is set; a replaced document whose text is unchanged
// keeps its other annotation layers, one whose text changed loses them, since
// their offsets no longer hold. With resume set, a document already there
// with the same text and spans is counted and left as it is.
func (s *Store) writeDocuments(ctx context.Context, tx *ent.Tx, corpusID, setID int, docs []pipeline.Document, opt ImportOptions, res *ImportResult) error {
	found, err := lookupExisting(ctx, tx.Client(), corpusID, setID, docs, opt.Resume)
	if err != nil {
		return err
	}
	// A batch a resumed import finds written changes nothing: the corpus's
	// cached statistics stay valid.
	if len(docs) == 0 || len(found.done) < len(docs) {
		if err := s.bumpContentVersion(ctx, tx, corpusID); err != nil {
			return err
		}
	}
	if !opt.Replace {
		var conflicts firstIDs
		if conflicts.add(found.conflicts(docs)...); conflicts.n > 0 {
			return conflictError(opt, conflicts)
		}
	}
	docs = found.skipDone(docs, res)
	patients, err := patientIDs(ctx, tx, corpusID, docs)
	if err != nil {
		return err
	}
	rows, fresh, err := s.keepOrReplace(ctx, tx, docs, found, opt, res)
	if err != nil {
		return err
	}
	if err := deleteLayer(ctx, tx, setID, found.layered); err != nil {
		return err
	}
	if err := insertDocuments(ctx, tx, corpusID, fresh, patients, rows, len(docs), opt); err != nil {
		return err
	}
	return s.insertDocumentSpans(ctx, tx, setID, docs, rows, res)
}

// skipDone counts the documents a resumed import finds written, and
// returns the others.
func (e *existingDocs) skipDone(docs []pipeline.Document, res *ImportResult) []pipeline.Document {
	if len(e.done) == 0 {
		return docs
	}
	return slices.DeleteFunc(slices.Clone(docs), func(d pipeline.Document) bool {
		if e.done[d.ID] {
			delete(e.layered, e.old[d.ID].ID) // its spans stay
			res.Documents++
			res.Spans += len(d.Spans)
			if len(d.Spans) == 0 {
				res.WithoutSpans++
			}
			return true
		}
		return false
	})
}

// writtenRow is a document's row, and the split and note type each of its
// spans carries a copy of.
type writtenRow struct {
	id              int
	split, noteType string
}

// keepOrReplace keeps the rows of the documents the corpus has with the
// same text (moved where a replacing import gives them another split or
// note type), deletes those whose text changed, and returns the rows kept,
// by external id, and the documents to write anew, those deleted among
// them, where the import names a place or where they were.
func (s *Store) keepOrReplace(ctx context.Context, tx *ent.Tx, docs []pipeline.Document, found *existingDocs, opt ImportOptions,
	res *ImportResult) (map[string]writtenRow, []pipeline.Document, error) {
	var fresh []pipeline.Document
	keep := map[string]int{} // external id -> existing row id, text unchanged
	for _, d := range docs {
		o, ok := found.old[d.ID]
		switch {
		case !ok:
			fresh = append(fresh, d)
		case o.Checksum == checksum(d.Text):
			keep[d.ID] = o.ID
			if found.layered[o.ID] {
				res.Replaced++
			}
			if opt.Replace {
				moved, err := s.moveDocument(ctx, tx, o, d)
				if err != nil {
					return nil, nil, err
				}
				if moved {
					res.Moved++
				}
			}
		default:
			if err := tx.Document.DeleteOneID(o.ID).Exec(ctx); err != nil {
				return nil, nil, err
			}
			// Written anew, where the import names a place or where it was.
			split, noteType := placeOf(o, d)
			d.Split, d.NoteType = string(split), noteType
			fresh = append(fresh, d)
			res.Replaced++
		}
	}
	// Each span carries a copy of its document's split and note type: a kept
	// document's are the row's (moved above, if the import moved it).
	rows := make(map[string]writtenRow, len(docs))
	for id, r := range keep {
		rows[id] = writtenRow{r, string(found.old[id].Split), found.old[id].NoteType}
	}
	return rows, fresh, nil
}

// deleteLayer deletes the spans the set has on the documents layered.
func deleteLayer(ctx context.Context, tx *ent.Tx, setID int, layered map[int]bool) error {
	ids := make([]int, 0, len(layered))
	for id := range layered {
		ids = append(ids, id)
	}
	for start := 0; start < len(ids); start += docBatch {
		_, err := tx.Span.Delete().
			Where(span.AnnotationSetID(setID), span.DocumentIDIn(ids[start:min(start+docBatch, len(ids))]...)).Exec(ctx)
		if err != nil {
			return err
		}
	}
	return nil
}

// insertDocuments creates the rows of the documents fresh, adding each to
// rows, and reports progress over the batch's total documents.
func insertDocuments(ctx context.Context, tx *ent.Tx, corpusID int, fresh []pipeline.Document, patients map[string]int,
	rows map[string]writtenRow, total int, opt ImportOptions) error {
	done := len(rows)
	for start := 0; start < len(fresh); start += docBatch {
		chunk := fresh[start:min(start+docBatch, len(fresh))]
		builders := make([]*ent.DocumentCreate, len(chunk))
		for i, d := range chunk {
			sp, _ := normalizeSplit(d.Split) // validated by Import
			b := tx.Document.Create().
				SetCorpusID(corpusID).SetPatientID(patients[d.Patient]).
				SetExternalID(d.ID).SetRecordOrder(d.RecordOrder).SetNoteType(d.NoteType).
				SetSplit(sp).SetText(d.Text).
				SetCharCount(charCount(d.Text)).SetTokenCount(whitespaceTokens(d.Text)).
				SetChecksum(checksum(d.Text))
			if !d.Created.IsZero() {
				b.SetCreated(d.Created)
			}
			if !opt.importedAt.IsZero() {
				b.SetImportedAt(opt.importedAt)
			}
			builders[i] = b
		}
		created, err := tx.Document.CreateBulk(builders...).Save(ctx)
		if err != nil {
			return err
		}
		for _, r := range created {
			rows[r.ExternalID] = writtenRow{r.ID, string(r.Split), r.NoteType}
		}
		done += len(chunk)
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	return nil
}

// insertDocumentSpans inserts the spans of docs, whose rows are in rows, into
// the set, and counts the documents and spans written.
//
// Spans go in as raw multi-row INSERTs: ent's bulk builders cost more than
// SQLite's own work here (a builder, a mutation and a spec per span).
func (s *Store) insertDocumentSpans(ctx context.Context, tx *ent.Tx, setID int, docs []pipeline.Document, rows map[string]writtenRow, res *ImportResult) error {
	args := make([]any, 0, spanBatch*len(spanInsert.columns))
	for _, d := range docs {
		row := rows[d.ID]
		if len(d.Spans) == 0 {
			res.WithoutSpans++
		}
		for _, sp := range d.Spans {
			if sp.Start < 0 || sp.End < 0 {
				return apperr.New(apperr.Invalid, "document %s: span %s: negative offset", d.ID, sp.Label())
			}
			args = append(args, row.id, setID, sp.Start, sp.End, sp.Text, sp.Category, sp.Type, sp.Comment, sp.ID, row.split, row.noteType)
			res.Spans++
			if len(args) == cap(args) {
				if err := s.insertSpans(ctx, tx, args); err != nil {
					return err
				}
				args = args[:0]
			}
		}
	}
	res.Documents += len(docs)
	return s.insertSpans(ctx, tx, args)
}

// spanInsert writes spans as rows of 11 arguments each (document, set, start,
// end, text, category, type, comment, source id, and the document's split and
// note type).
var spanInsert = rowInsert{table: "spans",
	columns: []string{"document_id", "annotation_set_id", `"start"`, `"end"`, "text", "category", `"type"`, "comment", "source_id", "split", "note_type"},
	seal:    &rowSeal{set: 1, fields: map[int]string{4: fieldSpanText, 7: fieldSpanNote, 8: fieldSpanSource}}}

// insertSpans writes spans given as rows of spanInsert's arguments.
func (s *Store) insertSpans(ctx context.Context, tx *ent.Tx, args []any) error {
	if err := s.insertRows(ctx, tx, &spanInsert, args); err != nil {
		return fmt.Errorf("insert spans: %w", err)
	}
	return nil
}

// patientIDs returns the row id of every patient the documents name,
// creating the missing ones.
func patientIDs(ctx context.Context, tx *ent.Tx, corpusID int, docs []pipeline.Document) (map[string]int, error) {
	ids := map[string]int{}
	var names []string
	for _, d := range docs {
		if _, ok := ids[d.Patient]; !ok {
			ids[d.Patient] = 0
			names = append(names, d.Patient)
		}
	}
	for start := 0; start < len(names); start += docBatch {
		rows, err := tx.Patient.Query().
			Where(patient.CorpusID(corpusID), patient.ExternalIDIn(names[start:min(start+docBatch, len(names))]...)).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			ids[r.ExternalID] = r.ID
		}
	}
	var missing []*ent.PatientCreate
	for _, n := range names {
		if n == "" {
			return nil, apperr.New(apperr.Invalid, "a document has no patient id")
		}
		if ids[n] == 0 {
			missing = append(missing, tx.Patient.Create().SetCorpusID(corpusID).SetExternalID(n))
		}
	}
	for start := 0; start < len(missing); start += docBatch {
		rows, err := tx.Patient.CreateBulk(missing[start:min(start+docBatch, len(missing))]...).Save(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			ids[r.ExternalID] = r.ID
		}
	}
	return ids, nil
}

// existingDocs is what a batch of documents finds in its corpus.
type existingDocs struct {
	old     map[string]*ent.Document // by external id
	layered map[int]bool             // row ids that have spans in the set
	done    map[string]bool          // external ids already imported with the same text and spans (resume)
}

// lookupExisting finds which of docs the corpus already has, and which of
// those have spans in the set (setID 0 for a set not made yet); with
// resume, also which hold exactly the document's text and spans.
func lookupExisting(ctx context.Context, client *ent.Client, corpusID, setID int, docs []pipeline.Document, resume bool) (*existingDocs, error) {
	found := &existingDocs{old: map[string]*ent.Document{}, layered: map[int]bool{}, done: map[string]bool{}}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	for start := 0; start < len(ids); start += docBatch {
		rows, err := client.Document.Query().
			Where(document.CorpusID(corpusID), document.ExternalIDIn(ids[start:min(start+docBatch, len(ids))]...)).
			Select(document.FieldID, document.FieldExternalID, document.FieldChecksum, document.FieldSplit, document.FieldNoteType).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			found.old[r.ExternalID] = r
		}
	}
	if setID == 0 {
		return found, nil
	}
	// A document that exists with the same text only gains this layer, unless
	// the layer already covers it; one whose text differs is replaced whole.
	var sameText []int
	for _, d := range docs {
		if o, ok := found.old[d.ID]; ok && o.Checksum == checksum(d.Text) {
			sameText = append(sameText, o.ID)
		}
	}
	for start := 0; start < len(sameText); start += docBatch {
		chunk := sameText[start:min(start+docBatch, len(sameText))]
		if !resume {
			ids, err := client.Span.Query().
				Where(span.AnnotationSetID(setID), span.DocumentIDIn(chunk...)).
				GroupBy(span.FieldDocumentID).Ints(ctx)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				found.layered[id] = true
			}
			continue
		}
		spans, err := client.Span.Query().Where(span.AnnotationSetID(setID), span.DocumentIDIn(chunk...)).All(ctx)
		if err != nil {
			return nil, err
		}
		have := map[int][]pipeline.Span{}
		for _, sp := range spans {
			found.layered[sp.DocumentID] = true
			have[sp.DocumentID] = append(have[sp.DocumentID], toPipelineSpan(sp))
		}
		for _, d := range docs {
			o, ok := found.old[d.ID]
			if !ok || !found.layered[o.ID] || o.Checksum != checksum(d.Text) || !sameSpans(have[o.ID], d.Spans) {
				continue
			}
			// Done only where this import would leave it: a replacing one
			// that moves it has not, until it has moved it.
			if split, noteType := placeOf(o, d); split == o.Split && noteType == o.NoteType {
				found.done[d.ID] = true
			}
		}
	}
	return found, nil
}

// moveDocument gives a document kept by a replacing import (its text
// unchanged) the split and note type the import gives it, where it gives
// one, and the copies its spans of every layer carry: o is the row, which
// it updates. It reports whether anything changed.
func (s *Store) moveDocument(ctx context.Context, tx *ent.Tx, o *ent.Document, d pipeline.Document) (bool, error) {
	split, noteType := placeOf(o, d)
	if split == o.Split && noteType == o.NoteType {
		return false, nil
	}
	for _, q := range []string{
		`UPDATE documents SET split = ?, note_type = ? WHERE id = ?`,
		`UPDATE spans SET split = ?, note_type = ? WHERE document_id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, s.rebind(q), string(split), noteType, o.ID); err != nil {
			return false, fmt.Errorf("move document %s to split %s, note type %q: %w", d.ID, split, noteType, err)
		}
	}
	o.Split, o.NoteType = split, noteType
	return true, nil
}

// placeOf is the split and note type a replacing import gives a document
// whose row is o: those it names, else the row's. The split is valid
// (Import checks it).
func placeOf(o *ent.Document, d pipeline.Document) (document.Split, string) {
	split, noteType := o.Split, o.NoteType
	if d.Split != "" {
		split, _ = normalizeSplit(d.Split)
	}
	if d.NoteType != "" {
		noteType = d.NoteType
	}
	return split, noteType
}

// sameSpans reports whether a and b hold the same spans in any order.
func sameSpans(a, b []pipeline.Span) bool {
	if len(a) != len(b) {
		return false
	}
	order := func(x, y pipeline.Span) int {
		return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.End, y.End), strings.Compare(x.Type, y.Type),
			strings.Compare(x.Category, y.Category), strings.Compare(x.Text, y.Text), strings.Compare(x.ID, y.ID),
			strings.Compare(x.Comment, y.Comment))
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, order)
	slices.SortFunc(b, order)
	return slices.Equal(a, b)
}

// conflicts lists the documents of docs that exist with another text or
// with spans in the set, those already imported aside.
func (e *existingDocs) conflicts(docs []pipeline.Document) []string {
	var out []string
	for _, d := range docs {
		if o, ok := e.old[d.ID]; ok && !e.done[d.ID] && (e.layered[o.ID] || o.Checksum != checksum(d.Text)) {
			out = append(out, d.ID)
		}
	}
	return out
}

// newText lists the documents of docs that the corpus does not hold, or
// holds with other text.
func (e *existingDocs) newText(docs []pipeline.Document) []string {
	var out []string
	for _, d := range docs {
		if o, ok := e.old[d.ID]; !ok || o.Checksum != checksum(d.Text) {
			out = append(out, d.ID)
		}
	}
	return out
}
