package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/pipeline/stats"
)

// CompareOptions names the two annotation sets a comparison reads (B is
// compared with A, the reference) and how their spans are grouped.
type CompareOptions struct {
	A, SetA, B, SetB string
	By               Dimension // ByCategory or ByType
	// Fields names the options in error messages as the caller's user
	// knows them (command-line flags); GraphQL's argument names by default.
	Fields CompareFields
}

// CompareFields are the names of CompareOptions' fields in error messages.
type CompareFields struct{ A, SetA, B, SetB, By string }

var graphQLCompareFields = CompareFields{A: "a", SetA: "setA", B: "b", SetB: "setB", By: "by"}

// CompareCorpora compares two corpora's annotation sets: Pearson's
// chi-square over their PHI per group, B's out-of-vocabulary rates against A
// (tokens and span texts) and both name-pattern tables (see stats.Compare).
//
// Per corpus it makes two passes, all four side by side on one snapshot:
// the documents' texts, streamed row by row through a vocabulary that keeps
// only distinct case-folded tokens, and the spans, streamed in the order they
// were written into the counts per group, the distinct texts and the names.
// The result is kept in the database (see statscache.go) for the two
// corpora's content versions.
func (s *Store) CompareCorpora(ctx context.Context, opt CompareOptions) (*stats.Comparison, error) {
	return s.compareCorpora(ctx, opt, true)
}

// compareCorpora is CompareCorpora, reading and keeping the result in the
// database when kept is set.
func (s *Store) compareCorpora(ctx context.Context, opt CompareOptions, kept bool) (*stats.Comparison, error) {
	f := opt.Fields
	if f == (CompareFields{}) {
		f = graphQLCompareFields
	}
	if opt.By != ByCategory && opt.By != ByType {
		return nil, apperr.New(apperr.Invalid, "%s: a comparison groups spans by category or type, not %q", f.By, opt.By)
	}
	type side struct {
		c    *ent.Corpus
		set  *ent.AnnotationSet
		side *stats.Side
	}
	open := func(name, setName, fc, fs string) (*side, error) {
		c, err := s.CorpusByName(ctx, name)
		if err != nil {
			return nil, fieldError(fc, err)
		}
		set, err := s.AnnotationSet(ctx, c, setName)
		if err != nil {
			return nil, fieldError(fs, err)
		}
		sd, err := stats.NewSide(c.Name, set.Name, string(opt.By))
		if err != nil {
			return nil, apperr.Wrap(apperr.Invalid, err)
		}
		return &side{c, set, sd}, nil
	}
	a, err := open(opt.A, opt.SetA, f.A, f.SetA)
	if err != nil {
		return nil, err
	}
	a.side.Reference = true
	b, err := open(opt.B, opt.SetB, f.B, f.SetB)
	if err != nil {
		return nil, err
	}
	// Kept on A, for A's version, under a measure naming B's.
	measure := fmt.Sprintf("comparison by %s with annotation set %d at version %d", opt.By, b.set.ID, b.c.ContentVersion)
	if kept {
		var cmp stats.Comparison
		if ok, err := s.keptMeasure(ctx, a.set.ID, a.c.ContentVersion, measure, &cmp); ok || err != nil {
			return &cmp, err
		}
	}
	// The texts are the longest reads: they go first. A side's two tasks
	// fill disjoint parts of it, so they may run at once.
	tasks := []readTask{
		func(ctx context.Context, q querier) error {
			return s.streamTexts(ctx, q, a.c.ID, coveredSplit(a.set), a.side)
		},
		func(ctx context.Context, q querier) error {
			return s.streamTexts(ctx, q, b.c.ID, coveredSplit(b.set), b.side)
		},
		func(ctx context.Context, q querier) error { return s.streamSpans(ctx, q, a.set.ID, a.side) },
		func(ctx context.Context, q querier) error { return s.streamSpans(ctx, q, b.set.ID, b.side) },
	}
	if err := s.readConcurrently(ctx, nil, func() []readTask { return tasks }); err != nil {
		return nil, err
	}
	cmp, err := stats.Compare(a.side, b.side)
	if err == nil && kept {
		// The comparisons with B's earlier versions are stale for good.
		stale := fmt.Sprintf("comparison by %s with annotation set %d at version %%", opt.By, b.set.ID)
		if _, err := s.DB.ExecContext(ctx, s.rebind(`DELETE FROM statistics_results
			WHERE annotation_set_id = ? AND measure LIKE ? AND measure <> ?`), a.set.ID, stale, measure); err != nil {
			s.logger.Warn("drop the stale comparisons", "annotation set", a.set.ID, "err", err)
		}
		s.keepMeasure(ctx, a.set.ID, a.c.ContentVersion, measure, cmp)
	}
	return cmp, err
}

// fieldError names the option an error is about, keeping its code.
func fieldError(field string, err error) error {
	if code := apperr.CodeOf(err); code != apperr.Internal {
		return apperr.New(code, "%s: %s", field, err)
	}
	return err
}

// streamTexts feeds every document's text of a corpus to a side, one row at
// a time into one reused buffer; those of one split only for a set that
// covers one (see coveredSplit).
func (s *Store) streamTexts(ctx context.Context, q querier, corpusID int, split string, sd *stats.Side) error {
	seal, err := s.corpusSeal(ctx, corpusID)
	if err != nil {
		return err
	}
	query, args := `SELECT text FROM documents WHERE corpus_id = ?`, []any{corpusID}
	if split != "" {
		query, args = query+` AND split = ?`, append(args, split)
	}
	rows, err := q.QueryContext(ctx, s.rebind(query), args...)
	if err != nil {
		return fmt.Errorf("read texts: %w", err)
	}
	defer rows.Close()
	var text sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&text); err != nil {
			return err
		}
		plain, err := seal.open(fieldDocText, text)
		if err != nil {
			return err
		}
		sd.AddDocument(plain)
	}
	return rows.Err()
}

// streamSpans feeds a set's spans to a side: one scan of the set, in the
// order the spans were written.
func (s *Store) streamSpans(ctx context.Context, q querier, setID int, sd *stats.Side) error {
	return s.eachSpan(ctx, q, setID, allIDs, []string{"category", `"type"`}, func(text []byte, l [][]byte) {
		sd.AddSpan(l[0], l[1], text)
	})
}

// Labels lists the labels (category, type) of one annotation set of a
// corpus, from the (annotation_set_id, category, type) index: no span's
// text is read.
func (s *Store) Labels(ctx context.Context, c *ent.Corpus, setName string) ([][2]string, error) {
	set, err := s.AnnotationSet(ctx, c, setName)
	if err != nil {
		return nil, err
	}
	var labels [][2]string
	err = s.readOnce(ctx, func(ctx context.Context, q querier) error {
		labels, err = s.setLabels(ctx, q, set.ID)
		return err
	})
	return labels, err
}

func (s *Store) setLabels(ctx context.Context, q querier, setID int) ([][2]string, error) {
	rows, err := q.QueryContext(ctx, s.rebind(`SELECT DISTINCT category, "type" FROM spans WHERE annotation_set_id = ?`), setID)
	if err != nil {
		return nil, fmt.Errorf("list labels: %w", err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var l [2]string
		if err := rows.Scan(&l[0], &l[1]); err != nil {
			return nil, fmt.Errorf("list labels: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// namesHeld is how many distinct names NamePatterns holds at a time (a few
// MB; a million synthetic notes' distinct names took 51 MB held at once).
var namesHeld = 1 << 16

// NamePatterns is the name-pattern table (Yeniterzi et al. Table 7) of one
// annotation set of a corpus: every span of a name label (stats.IsName)
// reduced to its pattern, counted. In one snapshot the database lists the
// set's labels (along the (annotation_set_id, category, type) index) and
// then reads the texts of the names' labels alone. The table is kept in the
// database, like the statistics, for the corpus's content version.
func (s *Store) NamePatterns(ctx context.Context, c *ent.Corpus, setName string) ([]stats.PatternCount, error) {
	set, err := s.AnnotationSet(ctx, c, setName)
	if err != nil {
		return nil, err
	}
	var patterns []stats.PatternCount
	if kept, err := s.keptMeasure(ctx, set.ID, c.ContentVersion, namePatternsMeasure, &patterns); kept || err != nil {
		return patterns, err
	}
	// Each distinct name's pattern is worked out once per namesHeld names
	// read: the names are counted, then their patterns, and let go.
	names, counts := map[string]int{}, map[string]int{}
	flush := func() {
		for n, c := range names {
			counts[stats.NamePattern(n)] += c
		}
		clear(names)
	}
	seal, err := s.setSeal(ctx, set.ID)
	if err != nil {
		return nil, err
	}
	err = s.readOnce(ctx, func(ctx context.Context, q querier) error {
		labels, err := s.setLabels(ctx, q, set.ID)
		if err != nil {
			return err
		}
		var or []string
		args := []any{set.ID}
		for _, l := range labels {
			if stats.IsName(l[0], l[1]) {
				or = append(or, `(category = ? AND "type" = ?)`)
				args = append(args, l[0], l[1])
			}
		}
		if len(or) == 0 {
			return nil
		}
		rows, err := q.QueryContext(ctx, s.rebind(`SELECT text FROM spans WHERE annotation_set_id = ? AND (`+strings.Join(or, " OR ")+`)`), args...)
		if err != nil {
			return fmt.Errorf("read names: %w", err)
		}
		defer rows.Close()
		var text sql.RawBytes
		for rows.Next() {
			if err := rows.Scan(&text); err != nil {
				return fmt.Errorf("read names: %w", err)
			}
			name, err := seal.open(fieldSpanText, text)
			if err != nil {
				return err
			}
			names[string(name)]++
			if len(names) >= namesHeld {
				flush()
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	flush()
	patterns = stats.PatternCounts(counts)
	s.keepMeasure(ctx, set.ID, c.ContentVersion, namePatternsMeasure, patterns)
	return patterns, nil
}
