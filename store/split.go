package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"deidcorpus/ent"
	"deidcorpus/ent/document"
	"deidcorpus/ent/patient"
	"deidcorpus/pipeline"
)

// Cutting an imported corpus into train, dev and test after the fact
// (deidcorpus split): a document's split, and the copy its spans of every
// set carry, change together, as a replacing import moves them
// (moveDocument).

// DocumentPlaces lists a corpus's documents with their patients and splits
// only (no text, no spans), by id.
func (s *Store) DocumentPlaces(ctx context.Context, c *ent.Corpus) ([]pipeline.Document, error) {
	names, err := s.patientNames(ctx, patient.CorpusID(c.ID))
	if err != nil {
		return nil, err
	}
	var rows []struct {
		ID         int    `json:"id"`
		PatientID  int    `json:"patient_id"`
		ExternalID string `json:"external_id"`
		Split      string `json:"split"`
	}
	if err := s.Client.Document.Query().Where(document.CorpusID(c.ID)).Order(ent.Asc(document.FieldID)).
		Select(document.FieldID, document.FieldPatientID, document.FieldExternalID, document.FieldSplit).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	out := make([]pipeline.Document, len(rows))
	for i, r := range rows {
		out[i] = pipeline.Document{ID: r.ExternalID, Patient: names[r.PatientID], Split: r.Split}
	}
	return out, nil
}

// SetSplits moves documents of a corpus (by external id) to splits, with
// their spans' copies, in one transaction; documents not named keep theirs.
// It writes an audit record saying how many moved where.
func (s *Store) SetSplits(ctx context.Context, c *ent.Corpus, splits map[string]string) error {
	bySplit := map[document.Split][]string{}
	for id, name := range splits {
		sp, err := normalizeSplit(name)
		if err != nil {
			return fmt.Errorf("document %s: %w", id, err)
		}
		bySplit[sp] = append(bySplit[sp], id)
	}
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		for sp, ids := range bySplit {
			slices.Sort(ids)
			for part := range slices.Chunk(ids, docBatch) {
				in := strings.TrimSuffix(strings.Repeat("?, ", len(part)), ", ")
				args := []any{string(sp), c.ID}
				for _, id := range part {
					args = append(args, id)
				}
				for _, q := range []string{
					`UPDATE spans SET split = ? WHERE document_id IN (SELECT id FROM documents WHERE corpus_id = ? AND external_id IN (` + in + `))`,
					`UPDATE documents SET split = ? WHERE corpus_id = ? AND external_id IN (` + in + `)`,
				} {
					if _, err := tx.ExecContext(ctx, s.rebind(q), args...); err != nil {
						return fmt.Errorf("move documents to split %s: %w", sp, err)
					}
				}
			}
		}
		return s.bumpContentVersion(ctx, tx, c.ID)
	})
	if err != nil {
		return err
	}
	var counts []string
	for _, sp := range pipeline.Splits {
		if n := len(bySplit[document.Split(sp)]); n > 0 {
			counts = append(counts, fmt.Sprintf("%d to %s", n, sp))
		}
	}
	detail := fmt.Sprintf("corpus %q: documents moved %s", c.Name, strings.Join(counts, ", "))
	if aerr := s.Audit(context.WithoutCancel(ctx), AuditRecord{Action: "write", Target: "corpus.split", Detail: detail}); aerr != nil {
		s.logger.Error("write audit log", "target", "corpus.split", "err", aerr)
	}
	return nil
}
