package store

import (
	"context"

	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
)

// importingCorpus is the creation of the corpus an import makes: marked
// importing until its last batch commits (finishImport), so that a process
// killed meanwhile leaves a corpus that says so.
func importingCorpus(tx *ent.Tx, opt ImportOptions, tagset string, prov map[string]any) *ent.CorpusCreate {
	create := tx.Corpus.Create().SetName(opt.Corpus).SetTagset(tagset).SetProvenance(prov).SetState(corpus.StateImporting)
	if opt.Origin != "" {
		create.SetOrigin(opt.Origin)
	}
	if opt.SourceID != 0 {
		create.SetSourceID(opt.SourceID)
	}
	return create
}

// finishImport marks the import that made c (or completed it) finished.
func finishImport(ctx context.Context, client *ent.Client, c *ent.Corpus) error {
	return client.Corpus.UpdateOneID(c.ID).SetState(corpus.StateReady).Exec(ctx)
}

// unfinishedImport reports whether the import that made c has not finished.
func unfinishedImport(c *ent.Corpus) bool { return c.State == corpus.StateImporting }
