package store

import "context"

// CountStatistics is Statistics without the cache: what the benchmarks time.
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

// SetChunkSize makes stored files' chunks n bytes, so that a
// test's small file spans several.
func (s *Store) SetChunkSize(n int) { s.chunkSize = n }
