package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/annotationset"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/document"
	"deidcorpus/ent/patient"
	"deidcorpus/ent/predicate"
	"deidcorpus/internal/seqs"
	"deidcorpus/pipeline"
)

// normalizeSplit validates a split name.
func normalizeSplit(s string) (document.Split, error) {
	if s == "" {
		return document.SplitUnassigned, nil
	}
	sp := document.Split(strings.ToLower(s))
	if err := document.SplitValidator(sp); err != nil {
		return "", apperr.New(apperr.Invalid, "unknown split %q (known: %s)", s, strings.Join(pipeline.Splits, ", "))
	}
	return sp, nil
}

// checksum is the hex SHA-256 of a text.
func checksum(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// whitespaceTokens counts whitespace-separated tokens, the unit the papers'
// corpus tables use.
func whitespaceTokens(text string) int { return len(strings.Fields(text)) }

func charCount(text string) int { return utf8.RuneCountInString(text) }

// CorpusByName returns the named corpus or a not_found error.
func (s *Store) CorpusByName(ctx context.Context, name string) (*ent.Corpus, error) {
	c, err := s.Client.Corpus.Query().Where(corpus.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, auth.NoCorpus(ctx, s.Client, name)
	}
	return c, err
}

// AnnotationSet returns a corpus's named annotation set, a not_found error,
// or a conflict while a job is still writing the set (BeginAnnotations).
func (s *Store) AnnotationSet(ctx context.Context, c *ent.Corpus, name string) (*ent.AnnotationSet, error) {
	set, err := s.Client.AnnotationSet.Query().
		Where(annotationset.CorpusID(c.ID), annotationset.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "corpus %q has no annotation set %q", c.Name, name)
	}
	if err != nil {
		return nil, err
	}
	return set, refuseWriting(c, set)
}

// LoadDocuments returns a corpus's documents with the spans of one annotation
// set, ordered by patient and record order. An empty set name loads text only.
func (s *Store) LoadDocuments(ctx context.Context, c *ent.Corpus, setName string) ([]pipeline.Document, error) {
	return s.LoadSplit(ctx, c, setName, "")
}

// LoadSplit is LoadDocuments restricted to one split ("" for every
// document); the database does the restricting.
func (s *Store) LoadSplit(ctx context.Context, c *ent.Corpus, setName, split string) ([]pipeline.Document, error) {
	var docs []pipeline.Document
	err := s.EachBatch(ctx, c, setName, split, readBatch, func(batch []pipeline.Document) error {
		docs = append(docs, batch...)
		return nil
	})
	return docs, err
}

// readBatch is how many documents a batched read holds at a time.
const readBatch = 500

// EachBatch calls fn with the documents LoadSplit returns, in its order
// (patient, record order, external id), about n at a time and never
// splitting a patient's records across two calls: memory holds two batches
// (the next is read while fn works on one) and the corpus's document ids,
// whatever the size of the corpus. It reads no snapshot: a document deleted
// during the read is left out, one added is not read.
func (s *Store) EachBatch(ctx context.Context, c *ent.Corpus, setName, split string, n int, fn func([]pipeline.Document) error) error {
	return s.EachBatchOf(ctx, c, setName, split, nil, n, fn)
}

// EachBatchOf is EachBatch over the documents of some patients only (their
// ids, a group of PatientGroups); nil patients means every patient.
func (s *Store) EachBatchOf(ctx context.Context, c *ent.Corpus, setName, split string, patients []int, n int, fn func([]pipeline.Document) error) error {
	var set *ent.AnnotationSet
	if setName != "" {
		var err error
		if set, err = s.AnnotationSet(ctx, c, setName); err != nil {
			return err
		}
	}
	var order []docRef
	var err error
	if patients == nil {
		order, _, err = s.documentOrder(ctx, c, split)
	} else {
		order, err = s.patientsDocumentOrder(ctx, c, split, patients)
	}
	if err != nil {
		return err
	}
	// A job's reads overlap its work and writes: the next batch is read
	// while fn has the last.
	return seqs.Ahead(ctx, func(ctx context.Context, send func([]pipeline.Document) error) error {
		for start := 0; start < len(order); {
			end := min(start+n, len(order))
			for end < len(order) && order[end].patient == order[end-1].patient {
				end++
			}
			batch, err := s.loadBatch(ctx, order[start:end], set)
			if err != nil {
				return err
			}
			if err := send(batch); err != nil {
				return err
			}
			start = end
		}
		return nil
	}, fn)
}

// PatientGroups cuts the patients of a corpus's split ("" for all) into
// groups that weigh about n each, in EachBatch's order, and says how many
// documents each group has: the parts of a job that several workers share.
// A patient weighs weight(its name), or its documents when weight is nil
// (a job that rewrites only some notes weighs the patients by those).
func (s *Store) PatientGroups(ctx context.Context, c *ent.Corpus, split string, n int, weight func(patient string) int) (groups [][]int, docs []int, err error) {
	order, names, err := s.documentOrder(ctx, c, split)
	if err != nil {
		return nil, nil, err
	}
	load := 0 // the last group's weight
	for i, r := range order {
		first := i == 0 || r.patient != order[i-1].patient // a patient's documents are together
		if i == 0 || first && load >= n {
			groups, docs, load = append(groups, nil), append(docs, 0), 0
		}
		g := len(groups) - 1
		if first {
			groups[g] = append(groups[g], r.patient)
			if weight != nil {
				load += weight(names[r.patient])
			}
		}
		if weight == nil {
			load++
		}
		docs[g]++
	}
	return groups, docs, nil
}

// splitWhere selects the documents of a corpus's split ("" for all).
func splitWhere(c *ent.Corpus, split string) ([]predicate.Document, error) {
	return withSplit([]predicate.Document{document.CorpusID(c.ID)}, split)
}

// withSplit adds to where the predicate of a split ("" for every split).
func withSplit(where []predicate.Document, split string) ([]predicate.Document, error) {
	if split != "" {
		sp, err := normalizeSplit(split)
		if err != nil {
			return nil, err
		}
		where = append(where, document.SplitEQ(sp))
	}
	return where, nil
}

// docRef is a document's place in a batched read.
type docRef struct{ id, patient int }

// docRow is what documentOrder reads of a document to order it.
type docRow struct {
	ID          int    `json:"id"`
	PatientID   int    `json:"patient_id"`
	RecordOrder int    `json:"record_order"`
	ExternalID  string `json:"external_id"`
}

// documentOrder lists a corpus's documents of a split ("" for all) in
// EachBatch's order, and the names of the corpus's patients by id.
func (s *Store) documentOrder(ctx context.Context, c *ent.Corpus, split string) ([]docRef, map[int]string, error) {
	where, err := splitWhere(c, split)
	if err != nil {
		return nil, nil, err
	}
	names, err := s.patientNames(ctx, patient.CorpusID(c.ID))
	if err != nil {
		return nil, nil, err
	}
	order, err := s.orderDocuments(ctx, where, names)
	return order, names, err
}

// patientsDocumentOrder is documentOrder for the documents of some patients
// of the corpus. The documents are found by the patients alone: beside the
// corpus, SQLite's planner would read every document of the corpus instead
// of the patients' (a tag job's part listed 105,052 documents for its 2,000).
// The patients are asked for idsPerQuery at a time: a resynthesis part
// holds a share of the corpus's patients, past what one statement may bind
// (32,766 variables in SQLite).
func (s *Store) patientsDocumentOrder(ctx context.Context, c *ent.Corpus, split string, patients []int) ([]docRef, error) {
	names := map[int]string{}
	var rows []docRow
	for part := range slices.Chunk(patients, idsPerQuery) {
		some, err := s.patientNames(ctx, patient.CorpusID(c.ID), patient.IDIn(part...))
		if err != nil {
			return nil, err
		}
		maps.Copy(names, some)
		where, err := withSplit([]predicate.Document{document.PatientIDIn(part...)}, split)
		if err != nil {
			return nil, err
		}
		more, err := s.documentRows(ctx, where)
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
	}
	for _, p := range patients {
		if _, ok := names[p]; !ok {
			return nil, apperr.New(apperr.Invalid, "the patients to read are not all patients of corpus %q", c.Name)
		}
	}
	return sortedRefs(rows, names), nil
}

// idsPerQuery is how many ids a query binds at most.
var idsPerQuery = 10000

// patientNames maps the ids of the patients matching where to their
// external ids.
func (s *Store) patientNames(ctx context.Context, where ...predicate.Patient) (map[int]string, error) {
	var pats []struct {
		ID         int    `json:"id"`
		ExternalID string `json:"external_id"`
	}
	if err := s.Client.Patient.Query().Where(where...).
		Select(patient.FieldID, patient.FieldExternalID).Scan(ctx, &pats); err != nil {
		return nil, err
	}
	names := make(map[int]string, len(pats))
	for _, p := range pats {
		names[p.ID] = p.ExternalID
	}
	return names, nil
}

// orderDocuments lists the documents matching where, ordered by their
// patient's external id (names), record order and external id. The order is
// made here, not by the database, so that it is the byte order of the ids
// on SQLite and PostgreSQL alike, whatever a database's collation.
func (s *Store) orderDocuments(ctx context.Context, where []predicate.Document, names map[int]string) ([]docRef, error) {
	rows, err := s.documentRows(ctx, where)
	if err != nil {
		return nil, err
	}
	return sortedRefs(rows, names), nil
}

// documentRows reads what orderDocuments sorts the documents by.
func (s *Store) documentRows(ctx context.Context, where []predicate.Document) ([]docRow, error) {
	var rows []docRow
	err := s.Client.Document.Query().Where(where...).
		Select(document.FieldID, document.FieldPatientID, document.FieldRecordOrder, document.FieldExternalID).
		Scan(ctx, &rows)
	return rows, err
}

// sortedRefs sorts documents by patient (external id), record order and
// external id.
func sortedRefs(rows []docRow, names map[int]string) []docRef {
	slices.SortFunc(rows, func(a, b docRow) int {
		return cmp.Or(cmp.Compare(names[a.PatientID], names[b.PatientID]), cmp.Compare(a.RecordOrder, b.RecordOrder),
			cmp.Compare(a.ExternalID, b.ExternalID))
	})
	out := make([]docRef, len(rows))
	for i, r := range rows {
		out[i] = docRef{r.ID, r.PatientID}
	}
	return out
}

// loadBatch loads documents, in the order of refs, with their spans of set
// (none for a nil set).
func (s *Store) loadBatch(ctx context.Context, refs []docRef, set *ent.AnnotationSet) ([]pipeline.Document, error) {
	ids := make([]int, len(refs))
	index := make(map[int]int, len(refs))
	for i, r := range refs {
		ids[i] = r.id
		index[r.id] = i
	}
	rows, err := s.Client.Document.Query().Where(document.IDIn(ids...)).WithPatient().All(ctx)
	if err != nil {
		return nil, err
	}
	docs := make([]pipeline.Document, len(refs))
	for _, r := range rows {
		docs[index[r.ID]] = toPipeline(r)
	}
	if set != nil {
		if err := s.loadSpans(ctx, set.ID, ids, func(doc int, sp pipeline.Span) {
			d := &docs[index[doc]]
			d.Spans = append(d.Spans, sp)
		}); err != nil {
			return nil, err
		}
	}
	if len(rows) < len(refs) {
		// Documents deleted since the read began (their corpus deleted, a
		// document replaced) are left out; their spans went with them.
		docs = slices.DeleteFunc(docs, func(d pipeline.Document) bool { return d.ID == "" })
	}
	return docs, nil
}

// loadSpans calls fn with each span of a set in some documents, by document,
// start and end. It reads the columns a pipeline.Span holds and nothing else,
// and gives the spans of one label the same strings: a batched job reads
// spans by the million, and ent's rows cost a quarter more CPU (19 against
// 15 s in a resynthesis of 105,052 notes).
func (s *Store) loadSpans(ctx context.Context, setID int, docIDs []int, fn func(doc int, sp pipeline.Span)) error {
	if len(docIDs) == 0 {
		return nil
	}
	args := make([]any, 0, len(docIDs)+1)
	args = append(args, setID)
	for _, id := range docIDs {
		args = append(args, id)
	}
	seal, err := s.setSeal(ctx, setID)
	if err != nil {
		return err
	}
	rows, err := s.reader().QueryContext(ctx, s.rebind(`SELECT document_id, "start", "end", text, category, "type", comment, source_id
		FROM spans WHERE annotation_set_id = ? AND document_id IN (?`+strings.Repeat(", ?", len(docIDs)-1)+`)
		ORDER BY document_id, "start", "end", id`), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	labels := map[string]string{} // each category and type once
	label := func(b sql.RawBytes) string {
		if l, ok := labels[string(b)]; ok { // no allocation for the lookup
			return l
		}
		l := string(b)
		labels[l] = l
		return l
	}
	var category, typ sql.RawBytes // their buffers reused from row to row
	for rows.Next() {
		var doc int
		var sp pipeline.Span
		if err := rows.Scan(&doc, &sp.Start, &sp.End, &sp.Text, &category, &typ, &sp.Comment, &sp.ID); err != nil {
			return err
		}
		sp.Category, sp.Type = label(category), label(typ)
		if seal != nil {
			if err := seal.openPipelineSpan(&sp); err != nil {
				return err
			}
		}
		fn(doc, sp)
	}
	return rows.Err()
}

func toPipeline(r *ent.Document) pipeline.Document {
	d := pipeline.Document{
		ID:          r.ExternalID,
		RecordOrder: r.RecordOrder,
		NoteType:    r.NoteType,
		Text:        r.Text,
	}
	if r.Split != document.SplitUnassigned {
		d.Split = string(r.Split)
	}
	if r.Created != nil {
		d.Created = *r.Created
	}
	if r.Edges.Patient != nil {
		d.Patient = r.Edges.Patient.ExternalID
	}
	return d
}

func toPipelineSpan(sp *ent.Span) pipeline.Span {
	return pipeline.Span{
		ID:       sp.SourceID,
		Start:    sp.Start,
		End:      sp.End,
		Text:     sp.Text,
		Category: sp.Category,
		Type:     sp.Type,
		Comment:  sp.Comment,
	}
}

// splitCount is a row of a count of documents by split.
type splitCount struct {
	Split string `json:"split"`
	Count int    `json:"count"`
}

// NoDocumentsIn is the error of a job that found no documents in a split of
// a corpus. It says where the corpus's documents are, so that a user whose
// import gave no split (every note unassigned) learns what to pass.
func (s *Store) NoDocumentsIn(ctx context.Context, c *ent.Corpus, split string) error {
	var rows []splitCount
	err := s.Client.Document.Query().Where(document.CorpusID(c.ID)).GroupBy(document.FieldSplit).
		Aggregate(ent.Count()).Scan(ctx, &rows)
	msg := fmt.Sprintf("corpus %q has no documents in split %q", c.Name, cmp.Or(split, "all"))
	if err != nil || len(rows) == 0 {
		return apperr.New(apperr.Invalid, "%s", msg)
	}
	slices.SortFunc(rows, func(a, b splitCount) int {
		return cmp.Compare(slices.Index(pipeline.Splits, a.Split), slices.Index(pipeline.Splits, b.Split))
	})
	var where []string
	for _, r := range rows {
		where = append(where, fmt.Sprintf("%s %d", r.Split, r.Count))
	}
	hint := `; choose one of these splits or "all"`
	if len(rows) == 1 && rows[0].Split == string(document.SplitUnassigned) {
		hint = `: its import gave no split; use split "all", or import again with --split (or a split per document)`
	}
	return apperr.New(apperr.Invalid, "%s (its documents: %s)%s", msg, strings.Join(where, ", "), hint)
}
