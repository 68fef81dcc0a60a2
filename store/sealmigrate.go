package store

import (
	"context"
	"database/sql"
	"fmt"

	"deidcorpus/internal/keys"
)

// sealOriginalCorpora seals the note and span text of every original corpus
// of a database made before sealing (a corpus not surrogate, without a data
// key), one transaction per corpus, each giving the corpus its data key with
// the rows it seals: a corpus is either sealed whole or in clear whole. It
// needs the key ring, and fails without one (saying what to configure)
// rather than leave originals in clear.
func (s *Store) sealOriginalCorpora(ctx context.Context) (secretsGone bool, err error) {
	var ids []int
	rows, err := s.DB.QueryContext(ctx, `SELECT id FROM corpora WHERE kind <> 'surrogate' AND (data_key IS NULL OR data_key_id = '') ORDER BY id`)
	if err != nil {
		return false, err
	}
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return false, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return false, err
	}
	r, err := s.KeyRing()
	if err != nil {
		return false, fmt.Errorf("%d original corpora are to be sealed at rest: %w", len(ids), err)
	}
	for _, id := range ids {
		if err := s.sealCorpus(ctx, r, id); err != nil {
			return false, fmt.Errorf("seal corpus %d: %w", id, err)
		}
	}
	s.seals.mu.Lock()
	s.seals.corpora = nil // read again: the corpora have their keys now
	s.seals.mu.Unlock()
	s.logger.Info("sealed the original corpora's note and span text at rest", "corpora", len(ids), "key", r.Current())
	return true, nil
}

// sealBatch is how many rows sealCorpus reads at a time.
const sealBatch = 2000

// sealCorpus seals one corpus's rows and gives it its data key.
func (s *Store) sealCorpus(ctx context.Context, r *keys.Ring, id int) error {
	key, wrapped, keyID := newDataKey(r)
	c, err := newCorpusSeal(id, key)
	if err != nil {
		return err
	}
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	err = sealRowsOf(ctx, tx, s.rebind(`SELECT id, text FROM documents WHERE corpus_id = ? AND id > ? ORDER BY id LIMIT `+fmt.Sprint(sealBatch)),
		s.rebind(`UPDATE documents SET text = ? WHERE id = ?`), id, []string{fieldDocText}, c)
	if err != nil {
		return err
	}
	err = sealRowsOf(ctx, tx, s.rebind(`SELECT s.id, s.text, s.comment, s.source_id FROM spans s
		JOIN annotation_sets a ON a.id = s.annotation_set_id WHERE a.corpus_id = ? AND s.id > ? ORDER BY s.id LIMIT `+fmt.Sprint(sealBatch)),
		s.rebind(`UPDATE spans SET text = ?, comment = ?, source_id = ? WHERE id = ?`), id,
		[]string{fieldSpanText, fieldSpanNote, fieldSpanSource}, c)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE corpora SET data_key = ?, data_key_id = ? WHERE id = ?`), wrapped, keyID, id); err != nil {
		return err
	}
	return tx.Commit()
}

// sealRowsOf seals, a batch at a time, the fields of the rows that read
// selects (the row's id, then the fields) with update (the fields, then
// the id).
func sealRowsOf(ctx context.Context, tx *sql.Tx, read, update string, corpusID int, fields []string, c *corpusSeal) error {
	last := 0
	for {
		type row struct {
			id     int
			values []any
		}
		var batch []row
		rows, err := tx.QueryContext(ctx, read, corpusID, last)
		if err != nil {
			return err
		}
		for rows.Next() {
			vals := make([]string, len(fields))
			dest := []any{new(int)}
			for i := range vals {
				dest = append(dest, &vals[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return err
			}
			x := row{id: *dest[0].(*int)}
			for i, v := range vals {
				x.values = append(x.values, c.seal(fields[i], v))
			}
			batch = append(batch, x)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		for _, x := range batch {
			if _, err := tx.ExecContext(ctx, update, append(x.values, x.id)...); err != nil {
				return err
			}
		}
		last = batch[len(batch)-1].id
	}
}
