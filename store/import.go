package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"entgo.io/ent/dialect"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/document"
	"deidcorpus/ent/patient"
	"deidcorpus/ent/span"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/phi"
)

// ImportOptions say where imported documents go.
type ImportOptions struct {
	Corpus string
	// TagSet is the tag set of a new corpus ("" means open); for an existing
	// corpus it must be empty or equal to the corpus's.
	TagSet string
	Format string // default "i2b2"
	// Split overrides the split the files give; "" keeps theirs.
	Split string
	Set   string // annotation set for the files' spans; default "gold"
	// Kind of a new annotation set; default "gold" for the set named gold,
	// "annotator" otherwise.
	Kind    string
	Replace bool
	// Provenance of a new corpus; default {"source": "import", "format": ...}.
	Provenance map[string]any
	// CorpusKind of a new corpus: "original" (the default) or "surrogate"
	// (text whose PHI was already replaced, which researchers may see). For
	// an existing corpus it must be empty or equal to the corpus's.
	CorpusKind string
	// Progress, if set, is called as documents are written.
	Progress func(done, total int)
}

// ImportResult tells what an import did.
type ImportResult struct {
	Corpus        *ent.Corpus
	CreatedCorpus bool
	Documents     int
	Spans         int
	Replaced      int
}

// defaults fills in and checks the options shared by every import.
func (opt *ImportOptions) defaults() error {
	if opt.Corpus == "" {
		return apperr.New(apperr.Invalid, "a corpus name is required")
	}
	if opt.Format == "" {
		opt.Format = "i2b2"
	}
	if opt.Set == "" {
		opt.Set = "gold"
	}
	if opt.Kind == "" {
		opt.Kind = "annotator"
		if opt.Set == "gold" {
			opt.Kind = "gold"
		}
	}
	if err := annotationset.KindValidator(annotationset.Kind(opt.Kind)); err != nil {
		return apperr.New(apperr.Invalid, "unknown annotation set kind %q", opt.Kind)
	}
	if opt.CorpusKind != "" && corpus.KindValidator(corpus.Kind(opt.CorpusKind)) != nil {
		return apperr.New(apperr.Invalid, "unknown corpus kind %q (original or surrogate)", opt.CorpusKind)
	}
	return nil
}

// batch sizes keep each INSERT well under SQLite's and PostgreSQL's limits on
// bound parameters.
const (
	docBatch  = 200
	spanBatch = 1000
)

// Import parses files and writes their documents into a corpus, creating the
// corpus and the annotation set when needed. It is all or nothing: every file
// is parsed and checked before anything is written, and the writes happen in
// one transaction.
func (s *Store) Import(ctx context.Context, opt ImportOptions, files []formats.File) (*ImportResult, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	format, err := formats.Lookup(opt.Format)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	existing, ts, tagset, err := s.importTarget(ctx, opt)
	if err != nil {
		return nil, err
	}
	docs, err := format.Read(files, formats.ReadOptions{Label: func(cat, typ string) (string, string, error) {
		return phi.Normalize(ts, cat, typ)
	}})
	if errors.Is(err, formats.ErrNoDocuments) {
		return nil, apperr.New(apperr.Invalid, "no %s documents in the given input", opt.Format)
	}
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	return s.importDocuments(ctx, opt, existing, tagset, docs)
}

// ImportDocuments writes documents that are already parsed (generated ones,
// or a pipeline's output) as Import does, checking their labels against the
// corpus's tag set and their spans against their text first.
func (s *Store) ImportDocuments(ctx context.Context, opt ImportOptions, docs []pipeline.Document) (*ImportResult, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	existing, ts, tagset, err := s.importTarget(ctx, opt)
	if err != nil {
		return nil, err
	}
	docs = slices.Clone(docs)
	for i := range docs {
		d := &docs[i]
		d.Spans = slices.Clone(d.Spans)
		for j := range d.Spans {
			sp := &d.Spans[j]
			if sp.Category, sp.Type, err = phi.Normalize(ts, sp.Category, sp.Type); err != nil {
				return nil, apperr.New(apperr.Invalid, "document %s: span %d: %v", d.ID, j, err)
			}
		}
		if err := d.Validate(false); err != nil {
			return nil, apperr.New(apperr.Invalid, "document %s: %v", d.ID, err)
		}
		d.FillText()
		d.SortSpans()
	}
	return s.importDocuments(ctx, opt, existing, tagset, docs)
}

// importTarget finds the corpus an import goes to (nil if it is new) and the
// tag set its labels are checked against.
func (s *Store) importTarget(ctx context.Context, opt ImportOptions) (*ent.Corpus, *phi.TagSet, string, error) {
	existing, err := s.Client.Corpus.Query().Where(corpus.Name(opt.Corpus)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return nil, nil, "", err
	}
	tagset := opt.TagSet
	if existing != nil {
		if tagset != "" && tagset != existing.Tagset {
			return nil, nil, "", apperr.New(apperr.Invalid, "corpus %q has tag set %s, not %s", opt.Corpus, existing.Tagset, tagset)
		}
		tagset = existing.Tagset
		if opt.CorpusKind != "" && opt.CorpusKind != string(existing.Kind) {
			return nil, nil, "", apperr.New(apperr.Invalid, "corpus %q is %s, not %s", opt.Corpus, existing.Kind, opt.CorpusKind)
		}
	}
	if tagset == "" {
		tagset = phi.Open
	}
	ts, ok := phi.Lookup(tagset)
	if !ok {
		return nil, nil, "", apperr.New(apperr.Invalid, "unknown tag set %q (known: %s)", tagset, strings.Join(phi.Names(), ", "))
	}
	return existing, ts, tagset, nil
}

func (s *Store) importDocuments(ctx context.Context, opt ImportOptions, existing *ent.Corpus, tagset string, docs []pipeline.Document) (*ImportResult, error) {
	var split *document.Split
	if opt.Split != "" {
		sp, err := normalizeSplit(opt.Split)
		if err != nil {
			return nil, err
		}
		split = &sp
	}
	for i := range docs {
		if split != nil {
			docs[i].Split = string(*split)
		} else if _, err := normalizeSplit(docs[i].Split); err != nil {
			return nil, apperr.New(apperr.Invalid, "document %s: %v", docs[i].ID, err)
		}
	}
	provenance := opt.Provenance
	if provenance == nil {
		provenance = map[string]any{"source": "import", "format": opt.Format}
	}
	res := &ImportResult{}
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		c := existing
		if c == nil {
			var err error
			create := tx.Corpus.Create().SetName(opt.Corpus).SetTagset(tagset).SetProvenance(provenance)
			if opt.CorpusKind != "" {
				create.SetKind(corpus.Kind(opt.CorpusKind))
			}
			c, err = create.Save(ctx)
			if err != nil {
				return err
			}
			res.CreatedCorpus = true
		}
		res.Corpus = c
		set, err := getOrCreateSet(ctx, tx, c.ID, opt.Set, opt.Kind)
		if err != nil {
			return err
		}
		return s.writeDocuments(ctx, tx, c.ID, set.ID, docs, opt, res)
	})
	if err != nil {
		return nil, err
	}
	// Reload outside the committed transaction so callers can follow edges.
	res.Corpus, err = s.Client.Corpus.Get(ctx, res.Corpus.ID)
	return res, err
}

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
// their offsets no longer hold.
func (s *Store) writeDocuments(ctx context.Context, tx *ent.Tx, corpusID, setID int, docs []pipeline.Document, opt ImportOptions, res *ImportResult) error {
	if err := s.bumpContentVersion(ctx, tx, corpusID); err != nil {
		return err
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	old := map[string]*ent.Document{}
	for start := 0; start < len(ids); start += docBatch {
		rows, err := tx.Document.Query().
			Where(document.CorpusID(corpusID), document.ExternalIDIn(ids[start:min(start+docBatch, len(ids))]...)).
			Select(document.FieldID, document.FieldExternalID, document.FieldChecksum, document.FieldSplit, document.FieldNoteType).All(ctx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			old[r.ExternalID] = r
		}
	}
	// A document that exists with the same text only gains this layer, unless
	// the layer already covers it; one whose text differs is replaced whole.
	var sameText []int
	for _, d := range docs {
		if o, ok := old[d.ID]; ok && o.Checksum == checksum(d.Text) {
			sameText = append(sameText, o.ID)
		}
	}
	layered := map[int]bool{}
	for start := 0; start < len(sameText); start += docBatch {
		ids, err := tx.Span.Query().
			Where(span.AnnotationSetID(setID), span.DocumentIDIn(sameText[start:min(start+docBatch, len(sameText))]...)).
			GroupBy(span.FieldDocumentID).Ints(ctx)
		if err != nil {
			return err
		}
		for _, id := range ids {
			layered[id] = true
		}
	}
	var conflicts []string
	for _, d := range docs {
		if o, ok := old[d.ID]; ok && (layered[o.ID] || o.Checksum != checksum(d.Text)) {
			conflicts = append(conflicts, d.ID)
		}
	}
	if len(conflicts) > 0 && !opt.Replace {
		sort.Strings(conflicts)
		more := ""
		if len(conflicts) > 5 {
			more = fmt.Sprintf(" and %d more", len(conflicts)-5)
			conflicts = conflicts[:5]
		}
		return apperr.New(apperr.Conflict, "corpus %q already has document(s) %s%s in set %q (use replace to overwrite)",
			opt.Corpus, strings.Join(conflicts, ", "), more, opt.Set)
	}

	patients, err := patientIDs(ctx, tx, corpusID, docs)
	if err != nil {
		return err
	}

	var fresh []pipeline.Document
	keep := map[string]int{} // external id -> existing row id, text unchanged
	for _, d := range docs {
		o, ok := old[d.ID]
		switch {
		case !ok:
			fresh = append(fresh, d)
		case o.Checksum == checksum(d.Text):
			keep[d.ID] = o.ID
			if layered[o.ID] {
				res.Replaced++
			}
		default:
			if err := tx.Document.DeleteOneID(o.ID).Exec(ctx); err != nil {
				return err
			}
			fresh = append(fresh, d)
			res.Replaced++
		}
	}
	replacedIDs := make([]int, 0, len(layered))
	for id := range layered {
		replacedIDs = append(replacedIDs, id)
	}
	for start := 0; start < len(replacedIDs); start += docBatch {
		_, err := tx.Span.Delete().
			Where(span.AnnotationSetID(setID), span.DocumentIDIn(replacedIDs[start:min(start+docBatch, len(replacedIDs))]...)).Exec(ctx)
		if err != nil {
			return err
		}
	}

	// Each span carries a copy of its document's split and note type: a kept
	// document's are the row's, which this import does not change.
	type docRow struct {
		id              int
		split, noteType string
	}
	rows := make(map[string]docRow, len(docs))
	for id, r := range keep {
		rows[id] = docRow{r, string(old[id].Split), old[id].NoteType}
	}
	total := len(docs)
	done := len(keep)
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
			builders[i] = b
		}
		created, err := tx.Document.CreateBulk(builders...).Save(ctx)
		if err != nil {
			return err
		}
		for _, r := range created {
			rows[r.ExternalID] = docRow{r.ID, string(r.Split), r.NoteType}
		}
		done += len(chunk)
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}

	// Spans go in as raw multi-row INSERTs: ent's bulk builders cost more than
	// SQLite's own work here (a builder, a mutation and a spec per span).
	args := make([]any, 0, spanBatch*spanColumns)
	for _, d := range docs {
		row := rows[d.ID]
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
	res.Documents = len(docs)
	return s.insertSpans(ctx, tx, args)
}

// spanColumns is the number of columns insertSpans writes per span.
const spanColumns = 11

// insertSpans writes spans given as spanColumns arguments each (document,
// set, start, end, text, category, type, comment, source id, and the
// document's split and note type) in one INSERT.
func (s *Store) insertSpans(ctx context.Context, tx *ent.Tx, args []any) error {
	if len(args) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, s.spanInsert(len(args)/spanColumns), args...); err != nil {
		return fmt.Errorf("insert spans: %w", err)
	}
	return nil
}

// spanInsert returns the INSERT statement for n spans in the store's
// placeholder style; the full-batch statement is built once.
func (s *Store) spanInsert(n int) string {
	build := func() string {
		var b strings.Builder
		b.WriteString(`INSERT INTO spans (document_id, annotation_set_id, "start", "end", text, category, "type", comment, source_id, split, note_type) VALUES `)
		p := 0
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for j := range spanColumns {
				if j > 0 {
					b.WriteString(", ")
				}
				p++
				if s.Dialect == dialect.Postgres {
					b.WriteByte('$')
					b.WriteString(strconv.Itoa(p))
				} else {
					b.WriteByte('?')
				}
			}
			b.WriteByte(')')
		}
		return b.String()
	}
	if n != spanBatch {
		return build()
	}
	s.spanInsertOnce.Do(func() { s.spanInsertFull = build() })
	return s.spanInsertFull
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

// AlreadyImported reports whether every document of files is in the corpus
// with the same text and has spans in the set: how a retried import job tells
// that its earlier attempt committed before its worker died.
func (s *Store) AlreadyImported(ctx context.Context, opt ImportOptions, files []formats.File) (bool, error) {
	if err := opt.defaults(); err != nil {
		return false, err
	}
	format, err := formats.Lookup(opt.Format)
	if err != nil {
		return false, apperr.Wrap(apperr.Invalid, err)
	}
	c, err := s.CorpusByName(ctx, opt.Corpus)
	if err != nil {
		return false, nil
	}
	docs, err := format.Read(files, formats.ReadOptions{AllowOverlap: true})
	if err != nil {
		return false, apperr.Wrap(apperr.Invalid, err)
	}
	set, err := s.AnnotationSet(ctx, c, opt.Set)
	if err != nil {
		return false, nil
	}
	for _, d := range docs {
		row, err := s.Client.Document.Query().Where(document.CorpusID(c.ID), document.ExternalID(d.ID)).Only(ctx)
		if ent.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if row.Checksum != checksum(d.Text) {
			return false, nil
		}
		if len(d.Spans) > 0 {
			n, err := s.Client.Span.Query().Where(span.DocumentID(row.ID), span.AnnotationSetID(set.ID)).Count(ctx)
			if err != nil || n != len(d.Spans) {
				return false, err
			}
		}
	}
	return true, nil
}
