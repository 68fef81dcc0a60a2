package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"entgo.io/ent/dialect"

	"deidcorpus/apperr"
	"deidcorpus/ent"
)

// Dimension is a grouping of the statistics.
type Dimension string

const (
	ByCategory Dimension = "category"
	ByType     Dimension = "type"
	BySplit    Dimension = "split"
	ByNoteType Dimension = "note_type"
)

// Dimensions lists every dimension in canonical order.
var Dimensions = []Dimension{ByCategory, ByType, BySplit, ByNoteType}

// column is the spans' column of a dimension (a span carries its
// document's split and note type).
func (d Dimension) column() (string, bool) {
	switch d {
	case ByCategory:
		return "category", true
	case ByType:
		return `"type"`, true
	case BySplit:
		return "split", true
	case ByNoteType:
		return "note_type", true
	}
	return "", false
}

// indexedPairs are the pairs of dimensions that lead an index of the spans
// after the annotation set, each followed by the text.
var indexedPairs = [][2]Dimension{{ByCategory, ByType}, {BySplit, ByNoteType}}

// ParseDimension accepts "category", "type", "split", "note-type"/"note_type".
func ParseDimension(s string) (Dimension, error) {
	d := Dimension(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_"))
	if _, ok := d.column(); !ok {
		return "", apperr.New(apperr.Invalid, "unknown statistics dimension %q (known: category, type, split, note-type)", s)
	}
	return d, nil
}

// Statistics is the PHI distribution of one annotation set of a corpus, in the
// shape of Stubbs & Uzuner Table 3 and Deleger Tables 3-4.
type Statistics struct {
	Corpus           string `json:"corpus"`
	AnnotationSet    string `json:"annotationSet"`
	Documents        int    `json:"documents"`
	Patients         int    `json:"patients"`
	Characters       int    `json:"characters"`
	Tokens           int    `json:"tokens"` // whitespace-separated
	Spans            int    `json:"spans"`
	UniqueSpans      int    `json:"uniqueSpans"`
	DocumentsWithPHI int    `json:"documentsWithPHI"`
	// Splits and NoteTypes count documents and tokens per split and per note
	// type (Boag Table 1, Deleger Table 1).
	Splits    []DocumentCount `json:"splits"`
	NoteTypes []DocumentCount `json:"noteTypes"`
	By        []Dimension     `json:"by"`
	Groups    []Group         `json:"groups"`
}

// DocumentCount is the size of one split or note type: a row of Boag et
// al.'s Table 1 (notes, notes with PHI, tokens, PHI instances).
type DocumentCount struct {
	Name             string `json:"name"`
	Documents        int    `json:"documents"`
	DocumentsWithPHI int    `json:"documentsWithPHI"`
	Tokens           int    `json:"tokens"` // whitespace-separated
	Spans            int    `json:"spans"`
	// Derived: spans per document, share of documents with a span, spans
	// per token (Boag's "PHI instances" percentage).
	PHIPerDocument float64 `json:"phiPerDocument"`
	ShareWithPHI   float64 `json:"shareOfDocumentsWithPHI"`
	PHIPerToken    float64 `json:"phiPerToken"`
}

// PHIPerDocument is the mean number of spans per document.
func (st *Statistics) PHIPerDocument() float64 {
	if st.Documents == 0 {
		return 0
	}
	return float64(st.Spans) / float64(st.Documents)
}

// ShareWithPHI is the fraction of documents holding at least one span.
func (st *Statistics) ShareWithPHI() float64 {
	if st.Documents == 0 {
		return 0
	}
	return float64(st.DocumentsWithPHI) / float64(st.Documents)
}

// Group is one row of the grouped counts; Keys follow Statistics.By.
type Group struct {
	Keys   []string `json:"keys"`
	Total  int      `json:"total"`
	Unique int      `json:"unique"` // distinct span texts
}

// Key returns the group's value for a dimension, and whether it is grouped by.
func (st *Statistics) Key(g Group, d Dimension) (string, bool) {
	for i, b := range st.By {
		if b == d {
			return g.Keys[i], true
		}
	}
	return "", false
}

// Statistics counts a corpus's PHI in one annotation set, grouped by the
// given dimensions. All counting happens in the database.
func (s *Store) Statistics(ctx context.Context, corpusName, setName string, by []Dimension) (*Statistics, error) {
	c, err := s.CorpusByName(ctx, corpusName)
	if err != nil {
		return nil, err
	}
	return s.statistics(ctx, c, setName, by)
}

// StatisticsByID is Statistics for a corpus given by id.
func (s *Store) StatisticsByID(ctx context.Context, corpusID int, setName string, by []Dimension) (*Statistics, error) {
	c, err := s.Client.Corpus.Get(ctx, corpusID)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no corpus with id %d", corpusID)
	}
	if err != nil {
		return nil, err
	}
	return s.statistics(ctx, c, setName, by)
}

func (s *Store) statistics(ctx context.Context, c *ent.Corpus, setName string, by []Dimension) (*Statistics, error) {
	set, err := s.AnnotationSet(ctx, c, setName)
	if err != nil {
		return nil, err
	}
	key := statsKey(set.ID, by)
	if st, ok := s.statsCache.get(c.ID, c.ContentVersion, key); ok {
		return st, nil
	}
	st, err := s.countStatistics(ctx, c, set, by)
	if err != nil {
		return nil, err
	}
	s.statsCache.put(c.ID, c.ContentVersion, key, st)
	return st, nil
}

// countStatistics counts what Statistics returns, in the database.
func (s *Store) countStatistics(ctx context.Context, c *ent.Corpus, set *ent.AnnotationSet, by []Dimension) (*Statistics, error) {
	st := &Statistics{Corpus: c.Name, AnnotationSet: set.Name, By: by, Groups: []Group{}}
	cols := make([]string, len(by))
	seen := map[Dimension]bool{}
	for i, d := range by {
		col, ok := d.column()
		if !ok || seen[d] {
			return nil, apperr.New(apperr.Invalid, "bad or repeated statistics dimension %q", d)
		}
		seen[d] = true
		cols[i] = col
	}
	// The counts are independent queries, each a scan of its own index; on
	// SQLite they run side by side on connections that read one snapshot.
	tasks := []readTask{
		func(ctx context.Context, q querier) error { return s.documentCounts(ctx, q, st, c.ID, set.ID) },
		func(ctx context.Context, q querier) error {
			// Distinct texts over the whole set: an ordered scan of the
			// (annotation_set_id, text) index.
			err := q.QueryRowContext(ctx, s.rebind(`SELECT COUNT(DISTINCT text) FROM spans WHERE annotation_set_id = ?`), set.ID).
				Scan(&st.UniqueSpans)
			if err != nil {
				return fmt.Errorf("count spans: %w", err)
			}
			err = q.QueryRowContext(ctx, s.rebind(`SELECT COUNT(*) FROM patients WHERE corpus_id = ?`), c.ID).Scan(&st.Patients)
			if err != nil {
				return fmt.Errorf("count patients: %w", err)
			}
			return nil
		},
	}
	var setup readTask
	var pair [2]string // the columns of an indexed pair, in the index's order
	if len(by) == 2 && s.Dialect == dialect.SQLite {
		for _, p := range indexedPairs {
			if seen[p[0]] && seen[p[1]] {
				pair[0], _ = p[0].column()
				pair[1], _ = p[1].column()
			}
		}
	}
	switch {
	case len(by) == 0:
	case pair[0] != "":
		// Per pair of values, as many small queries as there are pairs: each
		// counts one range of the (annotation_set_id, a, b, text, ...)
		// index, and COUNT(DISTINCT) over a range ordered by text compares
		// neighbours instead of filling a temporary B-tree, which a GROUP BY
		// over the whole set does.
		// The pairs are listed inside the snapshot the counts read.
		setup = func(ctx context.Context, q querier) error {
			values, err := s.valuePairs(ctx, q, set.ID, pair[0], pair[1])
			if err != nil {
				return err
			}
			st.Groups = make([]Group, len(values))
			for i, v := range values {
				g := &st.Groups[i]
				g.Keys = []string{v[0], v[1]}
				if cols[0] != pair[0] {
					g.Keys[0], g.Keys[1] = v[1], v[0]
				}
				args := []any{set.ID, v[0], v[1]}
				where := ` FROM spans WHERE annotation_set_id = ? AND ` + pair[0] + ` = ? AND ` + pair[1] + ` = ?`
				tasks = append(tasks,
					func(ctx context.Context, q querier) error {
						return q.QueryRowContext(ctx, `SELECT COUNT(*)`+where, args...).Scan(&g.Total)
					},
					func(ctx context.Context, q querier) error {
						return q.QueryRowContext(ctx, `SELECT COUNT(DISTINCT text)`+where, args...).Scan(&g.Unique)
					})
			}
			return nil
		}
	default:
		list := strings.Join(cols, ", ")
		query := "SELECT " + list + ", COUNT(*), COUNT(DISTINCT text) FROM spans" +
			" WHERE annotation_set_id = ? GROUP BY " + list + " ORDER BY " + list
		// The grouping is the longest query: it goes first.
		tasks = append([]readTask{func(ctx context.Context, q querier) error {
			groups, err := scanGroups(ctx, q, s.rebind(query), len(by), set.ID)
			st.Groups = groups
			return err
		}}, tasks...)
	}
	if err := s.readConcurrently(ctx, setup, func() []readTask { return tasks }); err != nil {
		return nil, err
	}
	if pair[0] != "" {
		slices.SortFunc(st.Groups, func(a, b Group) int { return slices.Compare(a.Keys, b.Keys) })
	}
	return st, nil
}

// valuePairs lists the distinct values of the columns (a, b) of a set's
// spans in order by skipping through the (annotation_set_id, a, b, ...)
// index: a seek per pair, not a scan of the spans.
func (s *Store) valuePairs(ctx context.Context, q querier, setID int, a, b string) ([][2]string, error) {
	var out [][2]string
	var va, vb string
	err := q.QueryRowContext(ctx, s.rebind(`SELECT `+a+`, `+b+` FROM spans WHERE annotation_set_id = ?
		ORDER BY `+a+`, `+b+` LIMIT 1`), setID).Scan(&va, &vb)
	for err == nil {
		out = append(out, [2]string{va, vb})
		err = q.QueryRowContext(ctx, s.rebind(`SELECT `+b+` FROM spans WHERE annotation_set_id = ? AND `+a+` = ? AND `+b+` > ?
			ORDER BY `+b+` LIMIT 1`), setID, va, vb).Scan(&vb)
		if errors.Is(err, sql.ErrNoRows) {
			err = q.QueryRowContext(ctx, s.rebind(`SELECT `+a+`, `+b+` FROM spans WHERE annotation_set_id = ? AND `+a+` > ?
				ORDER BY `+a+`, `+b+` LIMIT 1`), setID, va).Scan(&va, &vb)
		}
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("list the values of %s and %s: %w", a, b, err)
	}
	return out, nil
}

func scanGroups(ctx context.Context, q querier, query string, keys int, args ...any) ([]Group, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("group spans: %w", err)
	}
	defer rows.Close()
	groups := []Group{}
	for rows.Next() {
		g := Group{Keys: make([]string, keys)}
		dest := make([]any, 0, keys+2)
		for i := range g.Keys {
			dest = append(dest, &g.Keys[i])
		}
		dest = append(dest, &g.Total, &g.Unique)
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	return groups, rows.Err()
}

// documentCounts fills in the document totals, the spans per document, and
// the per-split and per-note-type counts from one pass over the corpus's
// documents, grouped by split and note type in the database (a handful of
// rows) and summed here. The documents come from the covering (corpus_id,
// split, note_type, token_count, char_count) index, never touching the rows
// that hold the text, sorted by id so that each document's span count, one
// seek in the (document_id, annotation_set_id) index, lands next to the last
// one instead of at random (in index order it took four times as long).
// MATERIALIZED keeps the planner from evaluating the subquery again for every
// aggregate that uses it.
func (s *Store) documentCounts(ctx context.Context, q querier, st *Statistics, corpusID, setID int) error {
	query := `WITH d AS MATERIALIZED (
		SELECT id, split, note_type, token_count, char_count FROM documents WHERE corpus_id = ? ORDER BY id),
	c AS MATERIALIZED (
		SELECT d.*, (SELECT COUNT(*) FROM spans s WHERE s.document_id = d.id AND s.annotation_set_id = ?) AS n FROM d)
	SELECT split, note_type, COUNT(*), SUM(token_count), SUM(char_count), SUM(n), SUM(CASE WHEN n > 0 THEN 1 ELSE 0 END)
	FROM c GROUP BY split, note_type`
	rows, err := q.QueryContext(ctx, s.rebind(query), corpusID, setID)
	if err != nil {
		return fmt.Errorf("count documents: %w", err)
	}
	defer rows.Close()
	splits, noteTypes := map[string]*DocumentCount{}, map[string]*DocumentCount{}
	add := func(m map[string]*DocumentCount, name string, dc DocumentCount) {
		if m[name] == nil {
			m[name] = &DocumentCount{Name: name}
		}
		m[name].Documents += dc.Documents
		m[name].Tokens += dc.Tokens
		m[name].Spans += dc.Spans
		m[name].DocumentsWithPHI += dc.DocumentsWithPHI
	}
	for rows.Next() {
		var split, noteType string
		var dc DocumentCount
		var chars int
		if err := rows.Scan(&split, &noteType, &dc.Documents, &dc.Tokens, &chars, &dc.Spans, &dc.DocumentsWithPHI); err != nil {
			return err
		}
		st.Documents += dc.Documents
		st.Tokens += dc.Tokens
		st.Characters += chars
		st.Spans += dc.Spans
		st.DocumentsWithPHI += dc.DocumentsWithPHI
		add(splits, split, dc)
		add(noteTypes, noteType, dc)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	st.Splits, st.NoteTypes = sortedCounts(splits), sortedCounts(noteTypes)
	return nil
}

func sortedCounts(m map[string]*DocumentCount) []DocumentCount {
	out := make([]DocumentCount, 0, len(m))
	for _, dc := range m {
		dc.PHIPerDocument = ratio(dc.Spans, dc.Documents)
		dc.ShareWithPHI = ratio(dc.DocumentsWithPHI, dc.Documents)
		dc.PHIPerToken = ratio(dc.Spans, dc.Tokens)
		out = append(out, *dc)
	}
	slices.SortFunc(out, func(a, b DocumentCount) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// copyDocumentsToSpans gives the spans of a database made before spans
// carried copies of their document's split and note type those copies.
func (s *Store) copyDocumentsToSpans(ctx context.Context) error {
	_, err := s.DB.ExecContext(ctx, `UPDATE spans SET split = d.split, note_type = d.note_type
		FROM documents d WHERE d.id = spans.document_id`)
	return err
}
