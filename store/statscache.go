package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"deidcorpus/ent"
)

// Statistics are kept at two levels, each valid while its corpus's content
// version stays the one it was counted at: in this process (statsCache), and
// in the database (statistics_results), where every process on it and every
// later one finds them. A cache miss at both costs one scan of the set.
//
// statsCache keeps the statistics of corpora in this process. Every
// transaction that writes a corpus's patients, documents or spans bumps the
// version in the corpus's row (bumpContentVersion), so a result is stale as
// soon as the write commits, whichever process made it: a reader reads the
// version before it counts, and its counts are at least that recent. A deleted
// corpus's results are never read again: corpus ids are not reused (SQLite's
// AUTOINCREMENT, PostgreSQL's sequences).
type statsCache struct {
	mu      sync.Mutex
	corpora map[int]*corpusStats
}

// corpusStats are the cached results of one corpus at one content version,
// by annotation set and dimensions.
type corpusStats struct {
	version int
	results map[string]*Statistics
}

// maxCachedCorpora bounds the cache: past it, everything is dropped (deleted
// corpora's results would otherwise stay for the process's life).
const maxCachedCorpora = 1000

// joinDimensions names a grouping: "category,type", "" for none.
func joinDimensions(by []Dimension) string {
	names := make([]string, len(by))
	for i, d := range by {
		names[i] = string(d)
	}
	return strings.Join(names, ",")
}

// get returns a copy of the cached result, if there is one for the version.
func (c *statsCache) get(corpusID, version int, key string) (*Statistics, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := c.corpora[corpusID]
	if cs == nil || cs.version != version || cs.results[key] == nil {
		return nil, false
	}
	return cs.results[key].clone(), true
}

// put keeps a copy of a result counted at version, unless results of a newer
// version are kept already.
func (c *statsCache) put(corpusID, version int, key string, st *Statistics) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := c.corpora[corpusID]
	switch {
	case cs != nil && cs.version > version:
		return
	case cs == nil || cs.version < version:
		if c.corpora == nil || len(c.corpora) >= maxCachedCorpora {
			c.corpora = map[int]*corpusStats{}
		}
		cs = &corpusStats{version: version, results: map[string]*Statistics{}}
		c.corpora[corpusID] = cs
	}
	cs.results[key] = st.clone()
}

// clone copies a result deeply, so that a caller may change what it got.
func (st *Statistics) clone() *Statistics {
	out := *st
	out.Splits = slices.Clone(st.Splits)
	out.NoteTypes = slices.Clone(st.NoteTypes)
	out.By = slices.Clone(st.By)
	out.Groups = slices.Clone(st.Groups)
	for i := range out.Groups {
		out.Groups[i].Keys = slices.Clone(out.Groups[i].Keys)
	}
	return &out
}

// bumpContentVersion marks, in tx, that the corpus's content changes: the
// statistics cached at its current version are stale once tx commits. Raw
// SQL, like the span inserts it comes with: the row filters and hooks of an
// update through ent are not for this bookkeeping.
func (s *Store) bumpContentVersion(ctx context.Context, tx *ent.Tx, corpusID int) error {
	_, err := tx.ExecContext(ctx, s.rebind(`UPDATE corpora SET content_version = content_version + 1 WHERE id = ?`), corpusID)
	if err != nil {
		return fmt.Errorf("bump the corpus's content version: %w", err)
	}
	return nil
}

// statisticsMeasure names the statistics grouped by some dimensions among
// the measures kept in the database.
func statisticsMeasure(dims string) string { return "statistics by " + dims }

// namePatternsMeasure names the name patterns among the measures kept.
const namePatternsMeasure = "name patterns"

// keptMeasure reads into v the set's measure as the database keeps it, and
// tells whether there was one counted at version.
func (s *Store) keptMeasure(ctx context.Context, setID, version int, measure string, v any) (bool, error) {
	var result []byte
	err := s.reader().QueryRowContext(ctx, s.rebind(`SELECT result FROM statistics_results
		WHERE annotation_set_id = ? AND measure = ? AND content_version = ?`), setID, measure, version).Scan(&result)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the kept %s: %w", measure, err)
	}
	if err := json.Unmarshal(result, v); err != nil {
		return false, fmt.Errorf("read the kept %s of annotation set %d: %w", measure, setID, err)
	}
	return true, nil
}

// keepMeasure stores the set's measure v, counted at version, unless the
// database keeps one of a newer version. A failure is logged, not returned:
// the caller has its result, and the next caller counts it again.
func (s *Store) keepMeasure(ctx context.Context, setID, version int, measure string, v any) {
	result, err := json.Marshal(v)
	if err == nil {
		_, err = s.DB.ExecContext(ctx, s.rebind(`INSERT INTO statistics_results
			(annotation_set_id, measure, content_version, result, counted_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (annotation_set_id, measure) DO UPDATE SET content_version = excluded.content_version,
				result = excluded.result, counted_at = excluded.counted_at
			WHERE statistics_results.content_version < excluded.content_version`),
			setID, measure, version, result, time.Now())
	}
	if err != nil {
		s.logger.Warn("keep the "+measure, "annotation set", setID, "err", err)
	}
}
