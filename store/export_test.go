package store

import (
	"context"
	"testing"

	"deidcorpus/ent"
	"deidcorpus/pipeline/stats"
	"deidcorpus/pipeline/surrogate"
)

// CountStatistics is Statistics without either cache: what the benchmarks time.
func (s *Store) CountStatistics(ctx context.Context, corpusName, setName string, by []Dimension) (*Statistics, error) {
	c, err := s.CorpusByName(ctx, corpusName)
	if err != nil {
		return nil, err
	}
	set, err := s.AnnotationSet(ctx, c, setName)
	if err != nil {
		return nil, err
	}
	return s.countStatistics(ctx, c, set, by)
}

// SetSpanRun makes the statistics' distinct counts write a sorted run to
// their temporary file every n spans of a scan; the returned function
// restores the default.
func SetSpanRun(n int) (restore func()) {
	old := spanRun
	spanRun = n
	return func() { spanRun = old }
}

// SetIDsPerQuery makes the reads of a list of patients ask for n at a time;
// the returned function restores the default.
func SetIDsPerQuery(n int) (restore func()) {
	old := idsPerQuery
	idsPerQuery = n
	return func() { idsPerQuery = old }
}

// SetNamesHeld makes NamePatterns hold n distinct names at a time; the
// returned function restores the default.
func SetNamesHeld(n int) (restore func()) {
	old := namesHeld
	namesHeld = n
	return func() { namesHeld = old }
}

// SetChunkSize makes stored files' chunks n bytes, so that a
// test's small file spans several.
func (s *Store) SetChunkSize(n int) { s.chunkSize = n }

// SetMappingBatch makes FinishResynthesis save n corpus-scope mappings a
// transaction; the returned function restores the default.
func SetMappingBatch(n int) (restore func()) {
	old := mappingBatch
	mappingBatch = n
	return func() { mappingBatch = old }
}

// SetMappingReadBatch makes the reads of stored mappings take n rows at a
// time; the returned function restores the default.
func SetMappingReadBatch(n int) (restore func()) {
	old := mappingReadBatch
	mappingReadBatch = n
	return func() { mappingReadBatch = old }
}

// SaveMappings stores mappings as a job that saved them and stopped would
// have left them.
func (s *Store) SaveMappings(ctx context.Context, sourceID, jobID int, ms []surrogate.Mapping) error {
	ring, err := s.KeyRing()
	if err != nil {
		return err
	}
	return s.withTx(ctx, func(tx *ent.Tx) error { return s.saveMappings(ctx, tx, ring, sourceID, jobID, ms) })
}

// KeepStatistics stores a result in the database as a count made at version
// would: what a slow counter of an older version does after a newer one.
func (s *Store) KeepStatistics(ctx context.Context, setID, version int, by []Dimension, st *Statistics) {
	s.keepMeasure(ctx, setID, version, statisticsMeasure(joinDimensions(by)), st)
}

// Rebind is rebind, for tests' own SQL.
func (s *Store) Rebind(query string) string { return s.rebind(query) }

// CountComparison is CompareCorpora without the results kept in the
// database: what the benchmarks time.
func (s *Store) CountComparison(ctx context.Context, opt CompareOptions) (*stats.Comparison, error) {
	return s.compareCorpora(ctx, opt, false)
}

// SetImportKeep sets how much text an import's check keeps (importKeep)
// until the test ends: 0 makes every import read its input twice.
func SetImportKeep(t testing.TB, n int) {
	old := importKeep
	importKeep = n
	t.Cleanup(func() { importKeep = old })
}
