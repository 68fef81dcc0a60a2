package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"entgo.io/ent/dialect"

	"deidcorpus/ent"
	"deidcorpus/ent/artifact"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/migrate"
	"deidcorpus/ent/model"
	"deidcorpus/pipeline/surrogate"
)

// Data upgrades: what a database made by an earlier version needs besides
// ent's schema migration (new tables and columns), as one ordered list of
// named steps. Each is applied once, in order, and recorded in stepsTable;
// a new database records them all without running them. A database from
// before the record has none recorded and runs every step, so each step
// finds for itself whether its old shape is there and does nothing where it
// is not. A step that writes through ent runs in one transaction with its
// record; one that moves data in several transactions (or changes columns)
// is recorded after them, and one cut short runs again whole at the next
// start, which each such step allows.

// stepsTable records the data upgrades applied to the database.
const stepsTable = "schema_steps"

// step is one data upgrade. Exactly one of raw and tx is set.
type step struct {
	name string
	// early: before ent's schema migration, which drops the columns it
	// reads (on SQLite, by rebuilding their table without them).
	early bool
	// needed, when set, says before any step runs whether the database has
	// the step's old shape, which the schema migration erases.
	needed func(s *Store, ctx context.Context) (bool, error)
	// raw runs the step in transactions of its own; secretsGone tells that
	// it removed clear-text secrets, whose freed pages are then compacted.
	raw func(s *Store, ctx context.Context) (secretsGone bool, err error)
	// tx runs the step in the transaction that records it.
	tx func(ctx context.Context, tx *ent.Tx) error
}

// steps are the data upgrades, in the order they are applied; a new one is
// appended.
var steps = []step{
	{name: "encrypt-legacy-mappings", early: true, raw: (*Store).encryptLegacyMappings},
	{name: "set-aside-release-content", early: true, raw: (*Store).setAsideReleaseContent},
	{name: "copy-documents-to-spans", needed: (*Store).spansLackCopies, raw: (*Store).copyDocumentsToSpans},
	{name: "move-release-content", raw: (*Store).moveReleaseContent},
	{name: "mark-surrogate-corpora", tx: markSurrogateCorpora},
	{name: "mark-checked-corpora", tx: markCheckedCorpora},
	{name: "link-models-to-corpora", tx: linkModelsToCorpora},
	{name: "seal-check-reports", raw: (*Store).sealLegacyCheckReports},
	{name: "type-corpus-state", tx: typeCorpusState},
	{name: "seal-external-endpoints", raw: (*Store).sealExternalEndpoints},
}

// migrate brings the database's schema and data up to date: the early
// steps not yet applied, ent's schema migration, installed (the caller's
// hooks on the client), then the other steps. The caller holds the
// migration lock (LockMigrations).
func (s *Store) migrate(ctx context.Context, installed func()) error {
	existing, err := s.hasTable(ctx, "corpora")
	if err != nil {
		return err
	}
	if _, err := s.DB.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+stepsTable+
		` (name varchar(255) PRIMARY KEY NOT NULL, applied_at timestamp NOT NULL)`); err != nil {
		return fmt.Errorf("create the table of data upgrades: %w", err)
	}
	todo := map[string]bool{} // the steps to run; the others not recorded are recorded only
	if existing {
		applied, err := s.appliedSteps(ctx)
		if err != nil {
			return err
		}
		for _, st := range steps {
			todo[st.name] = !applied[st.name]
			if todo[st.name] && st.needed != nil {
				if todo[st.name], err = st.needed(s, ctx); err != nil {
					return fmt.Errorf("upgrade the database's data (step %s): %w", st.name, err)
				}
				if !todo[st.name] {
					if err := recordStep(ctx, s.DB, s.rebind, st.name); err != nil {
						return err
					}
				}
			}
		}
	}
	compact := false
	run := func(early bool) error {
		for _, st := range steps {
			switch {
			case st.early != early || existing && !todo[st.name]:
				continue
			case !existing:
				if err := recordStep(ctx, s.DB, s.rebind, st.name); err != nil {
					return err
				}
				continue
			}
			gone, err := s.applyStep(ctx, st)
			if err != nil {
				return fmt.Errorf("upgrade the database's data (step %s): %w", st.name, err)
			}
			compact = compact || gone
		}
		return nil
	}
	if err := run(true); err != nil {
		return err
	}
	if err := s.Client.Schema.Create(ctx, migrate.WithDropIndex(true)); err != nil {
		return fmt.Errorf("migrate database schema: %w", err)
	}
	installed()
	if err := run(false); err != nil {
		return err
	}
	if compact {
		if err := s.compact(ctx); err != nil {
			return fmt.Errorf("compact the database: %w", err)
		}
	}
	return nil
}

// appliedSteps are the names of the steps the database records.
func (s *Store) appliedSteps(ctx context.Context) (map[string]bool, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT name FROM `+stepsTable)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out[name] = true
	}
	return out, rows.Err()
}

// applyStep runs a step and records it.
func (s *Store) applyStep(ctx context.Context, st step) (secretsGone bool, err error) {
	if st.tx != nil {
		return false, s.withTx(ctx, func(tx *ent.Tx) error {
			if err := st.tx(ctx, tx); err != nil {
				return err
			}
			return recordStep(ctx, tx, s.rebind, st.name)
		})
	}
	if secretsGone, err = st.raw(s, ctx); err != nil {
		return false, err
	}
	return secretsGone, recordStep(ctx, s.DB, s.rebind, st.name)
}

// execer runs a statement: the database, or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// recordStep records a step as applied.
func recordStep(ctx context.Context, db execer, rebind func(string) string, name string) error {
	_, err := db.ExecContext(ctx, rebind(`INSERT INTO `+stepsTable+` (name, applied_at) VALUES (?, ?)`), name, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("record data upgrade %s: %w", name, err)
	}
	return nil
}

// typeCorpusState gives corpora made before their origin, source and state
// were columns the values their provenance said them by, and takes the
// markers that code read ("inProgress", "unfinishedImport", "demoJobs") out
// of their provenance, which keeps what people read.
func typeCorpusState(ctx context.Context, tx *ent.Tx) error {
	cs, err := tx.Corpus.Query().Select(corpus.FieldID, corpus.FieldProvenance).All(ctx)
	if err != nil {
		return err
	}
	for _, c := range cs {
		prov := c.Provenance
		upd := tx.Corpus.UpdateOneID(c.ID).SetOrigin(legacyOrigin(prov))
		if from := intOf(prov["fromID"]); from != 0 && (prov["source"] == "resynthesis" || prov["source"] == "derived") {
			upd.SetSourceID(from)
		}
		if _, ok := prov["unfinishedImport"]; ok {
			upd.SetState(corpus.StateImporting)
		}
		if raw, ok := prov["inProgress"]; ok {
			b, err := json.Marshal(raw)
			if err != nil {
				return err
			}
			var m surrogate.RunState
			if err := json.Unmarshal(b, &m); err != nil {
				return fmt.Errorf("corpus %d: provenance inProgress: %w", c.ID, err)
			}
			if m.Job != 0 {
				upd.SetState(corpus.StateResynthesizing).SetResynthesis(&m)
			}
		}
		kept := maps.Clone(prov)
		for _, k := range []string{"inProgress", "unfinishedImport", "demoJobs"} {
			delete(kept, k)
		}
		if len(kept) != len(prov) {
			upd.SetProvenance(kept)
		}
		if err := upd.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// legacyOrigin is the origin a corpus's provenance said before origins were
// a column.
func legacyOrigin(prov map[string]any) corpus.Origin {
	switch prov["source"] {
	case "resynthesis":
		return corpus.OriginResynthesis
	case "derived":
		return corpus.OriginDerived
	case "created":
		return corpus.OriginCreated
	case "synth":
		if prov["demoJobs"] == true {
			return corpus.OriginDemo
		}
		return corpus.OriginSynth
	}
	return corpus.OriginImport
}

// legacyContentTable holds, while a database from before chunks is
// migrated, its releases' whole snapshots: set aside before the schema
// migration, which on SQLite rebuilds a table without the columns the schema
// lacks, and moved into chunks after it.
const legacyContentTable = "release_content_legacy"

// spansLackCopies tells whether the spans are of a database made before
// spans carried copies of their document's split and note type.
func (s *Store) spansLackCopies(ctx context.Context) (bool, error) {
	has, err := s.hasColumn(ctx, "spans", "split")
	return !has, err
}

// markSurrogateCorpora gives corpora made by resynthesis before corpora had
// a kind the surrogate kind (researchers see them by it).
func markSurrogateCorpora(ctx context.Context, tx *ent.Tx) error {
	rows, err := tx.Corpus.Query().Where(corpus.KindEQ(corpus.KindOriginal)).
		Select(corpus.FieldID, corpus.FieldProvenance).All(ctx)
	if err != nil {
		return err
	}
	for _, c := range rows {
		if c.Provenance["source"] == "resynthesis" {
			if err := tx.Corpus.UpdateOneID(c.ID).SetKind(corpus.KindSurrogate).Exec(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// markCheckedCorpora gives corpora made by resynthesis before corpora had a
// check status the status of the check their provenance records: a failed
// one quarantines them, as it would now.
func markCheckedCorpora(ctx context.Context, tx *ent.Tx) error {
	rows, err := tx.Corpus.Query().Where(corpus.CheckStatusEQ(corpus.CheckStatusNone)).
		Select(corpus.FieldID, corpus.FieldProvenance).All(ctx)
	if err != nil {
		return err
	}
	for _, c := range rows {
		check, _ := c.Provenance["check"].(map[string]any)
		if c.Provenance["source"] != "resynthesis" || check == nil {
			continue
		}
		upd := tx.Corpus.UpdateOneID(c.ID).SetCheckStatus(corpus.CheckStatusPassed)
		if ok, _ := check["ok"].(bool); !ok {
			upd.SetCheckStatus(corpus.CheckStatusFailed).SetCheckFindings(max(CheckFindings(check), 1))
		}
		if err := upd.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// linkModelsToCorpora gives models trained before models recorded their
// training corpus's id the id of the corpus of that name, if it still
// exists; the others stay hidden from annotators and researchers.
func linkModelsToCorpora(ctx context.Context, tx *ent.Tx) error {
	ms, err := tx.Model.Query().Where(model.TrainingCorpusIDIsNil(), model.KindEQ(model.KindCrf)).All(ctx)
	if err != nil {
		return err
	}
	for _, m := range ms {
		c, err := tx.Corpus.Query().Where(corpus.Name(m.TrainingCorpus)).Only(ctx)
		if ent.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := tx.Model.UpdateOneID(m.ID).SetTrainingCorpusID(c.ID).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// hasColumn says whether a table has a column (false if the table does not
// exist either).
func (s *Store) hasColumn(ctx context.Context, table, column string) (bool, error) {
	q := `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`
	if s.Dialect == dialect.Postgres {
		q = `SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = current_schema()
			AND table_name = $1 AND column_name = $2`
	}
	var n int
	if err := s.DB.QueryRowContext(ctx, q, table, column).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// hasTable reports whether the database has a table.
func (s *Store) hasTable(ctx context.Context, table string) (bool, error) {
	q := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	if s.Dialect == dialect.Postgres {
		q = `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1`
	}
	var n int
	if err := s.DB.QueryRowContext(ctx, q, table).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// encryptLegacyMappings encrypts the clear-text originals of a database made
// before encryption (surrogate_mappings has the column "original") into new
// columns and drops the clear-text column, in one transaction.
func (s *Store) encryptLegacyMappings(ctx context.Context) (secretsGone bool, err error) {
	if legacy, err := s.hasColumn(ctx, "surrogate_mappings", "original"); err != nil || !legacy {
		return false, err
	}
	r, err := s.KeyRing()
	if err != nil {
		return false, err
	}
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	blob := "blob"
	if s.Dialect == dialect.Postgres {
		blob = "bytea"
	}
	for _, q := range []string{
		`ALTER TABLE surrogate_mappings ADD COLUMN original_enc ` + blob + ` NULL`,
		`ALTER TABLE surrogate_mappings ADD COLUMN original_hash varchar(255) NOT NULL DEFAULT ''`,
		`ALTER TABLE surrogate_mappings ADD COLUMN key_id varchar(255) NOT NULL DEFAULT ''`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return false, err
		}
	}
	type row struct {
		id       int
		original string
	}
	var rows []row
	rs, err := tx.QueryContext(ctx, `SELECT id, original FROM surrogate_mappings`)
	if err != nil {
		return false, err
	}
	for rs.Next() {
		var x row
		if err := rs.Scan(&x.id, &x.original); err != nil {
			rs.Close()
			return false, err
		}
		rows = append(rows, x)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return false, err
	}
	update := s.rebind(`UPDATE surrogate_mappings SET original_enc = ?, original_hash = ?, key_id = ? WHERE id = ?`)
	for _, x := range rows {
		enc, hash, keyID := sealOriginal(r, x.original)
		if _, err := tx.ExecContext(ctx, update, enc, hash, keyID, x.id); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, `ALTER TABLE surrogate_mappings DROP COLUMN original`); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	s.logger.Info("encrypted the original values of the surrogate mappings", "mappings", len(rows), "key", r.Current())
	return true, nil
}

// sealLegacyCheckReports encrypts the check reports that a database from
// before sealed artifacts keeps in clear. Without a key
// (PostgreSQL not configured with one) it leaves them and says so.
func (s *Store) sealLegacyCheckReports(ctx context.Context) (secretsGone bool, err error) {
	as, err := s.Client.Artifact.Query().
		Where(artifact.KeyID(""), artifact.NameHasSuffix("-check-report.json")).All(ctx)
	if err != nil || len(as) == 0 {
		return false, err
	}
	r, err := s.KeyRing()
	if err != nil {
		s.logger.Warn("check reports stay in clear until a key is configured", "reports", len(as), "err", err)
		return false, nil
	}
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		for _, a := range as {
			if err := sealArtifact(ctx, tx, r, a, a.Data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	s.logger.Info("sealed the check reports kept in clear", "reports", len(as), "key", r.Current())
	return true, nil
}

// compact rewrites the database after clear-text originals went, so that
// no free page (or, on PostgreSQL, dead tuple) still holds them.
func (s *Store) compact(ctx context.Context) error {
	if s.Dialect == dialect.Postgres {
		_, err := s.DB.ExecContext(ctx, `VACUUM FULL surrogate_mappings, artifacts`)
		return err
	}
	if _, err := s.DB.ExecContext(ctx, `VACUUM`); err != nil {
		return err
	}
	_, err := s.DB.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// copyDocumentsToSpans gives the spans of a database made before spans
// carried copies of their document's split and note type those copies.
func (s *Store) copyDocumentsToSpans(ctx context.Context) (bool, error) {
	_, err := s.DB.ExecContext(ctx, `UPDATE spans SET split = d.split, note_type = d.note_type
		FROM documents d WHERE d.id = spans.document_id`)
	return false, err
}

// setAsideReleaseContent copies the releases' content column (a database from
// before chunks) into legacyContentTable and drops the column, in one
// transaction, before the schema migration.
func (s *Store) setAsideReleaseContent(ctx context.Context) (bool, error) {
	if whole, err := s.hasColumn(ctx, "releases", "content"); err != nil || !whole {
		return false, err
	}
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE `+legacyContentTable+` AS SELECT id, content FROM releases`); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `ALTER TABLE releases DROP COLUMN content`); err != nil {
		return false, err
	}
	return false, tx.Commit()
}

// moveReleaseContent moves the snapshots set aside by setAsideReleaseContent
// into chunks, one release a transaction, then drops the table that held
// them, after the schema migration; an interrupted run resumes where it
// stopped.
func (s *Store) moveReleaseContent(ctx context.Context) (bool, error) {
	if aside, err := s.hasTable(ctx, legacyContentTable); err != nil || !aside {
		return false, err
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT id FROM `+legacyContentTable)
	if err != nil {
		return false, err
	}
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return false, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	for _, id := range ids {
		if err := s.moveOneReleaseContent(ctx, id); err != nil {
			return false, fmt.Errorf("release %d: %w", id, err)
		}
	}
	_, err = s.DB.ExecContext(ctx, `DROP TABLE `+legacyContentTable)
	return false, err
}

// moveOneReleaseContent writes one release's set-aside snapshot as chunks,
// names their key in the release row and deletes the set-aside copy, in one
// transaction. Raw SQL: releases refuse updates through ent (they are
// immutable), and this one's content does not change, only where it lives.
func (s *Store) moveOneReleaseContent(ctx context.Context, id int) error {
	q := func(sqlite, postgres string) string {
		if s.Dialect == dialect.Postgres {
			return postgres
		}
		return sqlite
	}
	var content []byte
	err := s.DB.QueryRowContext(ctx, q(`SELECT content FROM `+legacyContentTable+` WHERE id = ?`,
		`SELECT content FROM `+legacyContentTable+` WHERE id = $1`), id).Scan(&content)
	if err != nil {
		return err
	}
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	insert := q(`INSERT INTO release_chunks (content_key, seq, data, created_at) VALUES (?, ?, ?, ?)`,
		`INSERT INTO release_chunks (content_key, seq, data, created_at) VALUES ($1, $2, $3, $4)`)
	w := newChunkWriter(s.chunkSize, func(key string, seq int, data []byte) error {
		_, err := tx.ExecContext(ctx, insert, key, seq, data, time.Now())
		return err
	})
	if _, err := w.Write(content); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, q(`UPDATE releases SET content_key = ? WHERE id = ?`, `UPDATE releases SET content_key = $1 WHERE id = $2`), w.key, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, q(`DELETE FROM `+legacyContentTable+` WHERE id = ?`, `DELETE FROM `+legacyContentTable+` WHERE id = $1`), id); err != nil {
		return err
	}
	return tx.Commit()
}
