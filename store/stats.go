package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

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

// column is the SQL expression of a dimension.
func (d Dimension) column() (string, bool) {
	switch d {
	case ByCategory:
		return "s.category", true
	case ByType:
		return `s."type"`, true
	case BySplit:
		return "d.split", true
	case ByNoteType:
		return "d.note_type", true
	}
	return "", false
}

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

// DocumentCount is the size of one split or note type.
type DocumentCount struct {
	Name      string `json:"name"`
	Documents int    `json:"documents"`
	Tokens    int    `json:"tokens"`
	Spans     int    `json:"spans"`
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
	set, err := s.annotationSet(ctx, c, setName)
	if err != nil {
		return nil, err
	}
	st := &Statistics{Corpus: c.Name, AnnotationSet: set.Name, By: by, Groups: []Group{}}
	row := func(query string, args []any, dest ...any) error {
		return s.DB.QueryRowContext(ctx, s.rebind(query), args...).Scan(dest...)
	}
	if err := row(`SELECT COUNT(*) FROM patients WHERE corpus_id = ?`, []any{c.ID}, &st.Patients); err != nil {
		return nil, fmt.Errorf("count patients: %w", err)
	}
	// Distinct texts over the whole set: an ordered scan of the
	// (annotation_set_id, text) index.
	if err := row(`SELECT COUNT(DISTINCT text) FROM spans WHERE annotation_set_id = ?`,
		[]any{set.ID}, &st.UniqueSpans); err != nil {
		return nil, fmt.Errorf("count spans: %w", err)
	}
	if err := s.documentCounts(ctx, st, c.ID, set.ID); err != nil {
		return nil, err
	}
	if len(by) == 0 {
		return st, nil
	}

	cols := make([]string, len(by))
	join := ""
	seen := map[Dimension]bool{}
	for i, d := range by {
		col, ok := d.column()
		if !ok || seen[d] {
			return nil, apperr.New(apperr.Invalid, "bad or repeated statistics dimension %q", d)
		}
		seen[d] = true
		cols[i] = col
		if d == BySplit || d == ByNoteType {
			join = " JOIN documents d ON d.id = s.document_id"
		}
	}
	list := strings.Join(cols, ", ")
	query := "SELECT " + list + ", COUNT(*), COUNT(DISTINCT s.text) FROM spans s" + join +
		" WHERE s.annotation_set_id = ? GROUP BY " + list + " ORDER BY " + list
	rows, err := s.DB.QueryContext(ctx, s.rebind(query), set.ID)
	if err != nil {
		return nil, fmt.Errorf("group spans: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		g := Group{Keys: make([]string, len(by))}
		dest := make([]any, 0, len(by)+2)
		for i := range g.Keys {
			dest = append(dest, &g.Keys[i])
		}
		dest = append(dest, &g.Total, &g.Unique)
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		st.Groups = append(st.Groups, g)
	}
	return st, rows.Err()
}

// documentCounts fills in the document totals, the spans per document, and
// the per-split and per-note-type counts from one pass over the corpus's
// documents, grouped by split and note type in the database (a handful of
// rows) and summed here. Each document's span count is one seek in the
// (document_id, annotation_set_id) index, done once: MATERIALIZED keeps the
// planner from evaluating the subquery again for every aggregate that uses it.
func (s *Store) documentCounts(ctx context.Context, st *Statistics, corpusID, setID int) error {
	query := `WITH d AS MATERIALIZED (
		SELECT d.split, d.note_type, d.token_count, d.char_count,
			(SELECT COUNT(*) FROM spans s WHERE s.document_id = d.id AND s.annotation_set_id = ?) AS n
		FROM documents d WHERE d.corpus_id = ?)
	SELECT split, note_type, COUNT(*), SUM(token_count), SUM(char_count), SUM(n), SUM(CASE WHEN n > 0 THEN 1 ELSE 0 END)
	FROM d GROUP BY split, note_type`
	rows, err := s.DB.QueryContext(ctx, s.rebind(query), setID, corpusID)
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
	}
	for rows.Next() {
		var split, noteType string
		var dc DocumentCount
		var chars, withPHI int
		if err := rows.Scan(&split, &noteType, &dc.Documents, &dc.Tokens, &chars, &dc.Spans, &withPHI); err != nil {
			return err
		}
		st.Documents += dc.Documents
		st.Tokens += dc.Tokens
		st.Characters += chars
		st.Spans += dc.Spans
		st.DocumentsWithPHI += withPHI
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
		out = append(out, *dc)
	}
	slices.SortFunc(out, func(a, b DocumentCount) int { return strings.Compare(a.Name, b.Name) })
	return out
}
