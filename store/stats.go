package store

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/internal/extsort"
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
	Corpus        string `json:"corpus"`
	AnnotationSet string `json:"annotationSet"`
	// Split is the one split the set covers, for a tagging run's output of
	// one split: only its documents (and their patients) are counted, as
	// the others were never tagged. Empty: the set covers the corpus.
	Split            string `json:"split,omitempty"`
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
// given dimensions: the documents are counted in the database, the spans
// as one scan of the set streams by (countStatistics).
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
	dims := joinDimensions(by)
	key := fmt.Sprint(set.ID, ":", dims)
	if st, ok := s.statsCache.get(c.ID, c.ContentVersion, key); ok {
		return st, nil
	}
	st := &Statistics{}
	measure := statisticsMeasure(dims)
	kept, err := s.keptMeasure(ctx, set.ID, c.ContentVersion, measure, st)
	if err != nil {
		return nil, err
	}
	if !kept {
		if st, err = s.countStatistics(ctx, c, set, by); err != nil {
			return nil, err
		}
		s.keepMeasure(ctx, set.ID, c.ContentVersion, measure, st)
	}
	s.statsCache.put(c.ID, c.ContentVersion, key, st)
	return st, nil
}

// countStatistics counts what Statistics returns: the documents in the
// database, the spans in a scan of the set counted here (spanCount), cut
// into ranges of ids that connections read side by side.
func (s *Store) countStatistics(ctx context.Context, c *ent.Corpus, set *ent.AnnotationSet, by []Dimension) (*Statistics, error) {
	st := &Statistics{Corpus: c.Name, AnnotationSet: set.Name, Split: coveredSplit(set), By: by, Groups: []Group{}}
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
	// The counts are independent reads; on SQLite they run side by side on
	// connections that read one snapshot. Each fills its own part of st or
	// of counts.
	tasks := []readTask{
		func(ctx context.Context, q querier) error { return s.documentCounts(ctx, q, st, c.ID, set.ID) },
		func(ctx context.Context, q querier) (err error) {
			st.Patients, err = s.countPatients(ctx, q, c.ID, st.Split)
			return err
		},
	}
	count := newSpanCount()
	defer count.close()
	setup := func(ctx context.Context, q querier) error {
		ranges, err := s.idRanges(ctx, q, set.ID)
		if err != nil {
			return err
		}
		for _, r := range ranges {
			tasks = append(tasks, func(ctx context.Context, q querier) error {
				sc := count.scan()
				if err := s.eachSpan(ctx, q, set.ID, r, cols, sc.add); err != nil {
					return err
				}
				return sc.err
			})
		}
		return nil
	}
	if err := s.readConcurrently(ctx, setup, func() []readTask { return tasks }); err != nil {
		return nil, err
	}
	var err error
	if st.UniqueSpans, err = count.count(); err != nil {
		return nil, err
	}
	if len(cols) > 0 {
		st.Groups = count.groupCounts()
	}
	return st, nil
}

// CountPatients counts the patients of a corpus's split ("" for every
// split) in the database, without reading their documents.
func (s *Store) CountPatients(ctx context.Context, c *ent.Corpus, split string) (int, error) {
	if split != "" {
		sp, err := normalizeSplit(split)
		if err != nil {
			return 0, err
		}
		split = string(sp)
	}
	var n int
	err := s.readOnce(ctx, func(ctx context.Context, q querier) (err error) {
		n, err = s.countPatients(ctx, q, c.ID, split)
		return err
	})
	return n, err
}

func (s *Store) countPatients(ctx context.Context, q querier, corpusID int, split string) (int, error) {
	query, args := `SELECT COUNT(*) FROM patients WHERE corpus_id = ?`, []any{corpusID}
	if split != "" {
		query = `SELECT COUNT(DISTINCT patient_id) FROM documents WHERE corpus_id = ? AND split = ?`
		args = append(args, split)
	}
	var n int
	if err := q.QueryRowContext(ctx, s.rebind(query), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count patients: %w", err)
	}
	return n, nil
}

// idRange is a range of row ids, both ends included.
type idRange [2]int64

// allIDs is the range of every id.
var allIDs = idRange{math.MinInt64, math.MaxInt64}

// idRanges cuts the ids of a set's spans into as many ranges as a read
// spreads over: one, every id, on PostgreSQL, whose reads share one
// transaction.
func (s *Store) idRanges(ctx context.Context, q querier, setID int) ([]idRange, error) {
	n := int64(1)
	if s.readDB != nil {
		n = int64(readers())
	}
	if n == 1 {
		return []idRange{allIDs}, nil
	}
	// Two seeks: SQLite answers MIN and MAX in one query by a scan.
	var lo, hi int64
	err := q.QueryRowContext(ctx, s.rebind(`SELECT id FROM spans WHERE annotation_set_id = ? ORDER BY id LIMIT 1`), setID).Scan(&lo)
	if err == nil {
		err = q.QueryRowContext(ctx, s.rebind(`SELECT id FROM spans WHERE annotation_set_id = ? ORDER BY id DESC LIMIT 1`), setID).Scan(&hi)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read spans: %w", err)
	}
	step := (hi-lo)/n + 1
	var out []idRange
	for from := lo; ; from += step {
		if hi-from < step {
			return append(out, idRange{from, hi}), nil
		}
		out = append(out, idRange{from, from + step - 1})
	}
}

// textHash names a span text in the distinct counts: two 64-bit hashes of
// it under independent seeds. Two distinct texts share one with odds of
// about n²/2¹²⁹ among n texts, which no corpus comes near, and a span costs
// the counts 24 bytes in memory and 20 in their temporary file, whatever its
// text's length (see spanCount).
type textHash [2]uint64

var textSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func hashText(text []byte) textHash {
	return textHash{maphash.Bytes(textSeeds[0], text), maphash.Bytes(textSeeds[1], text)}
}

// spanCount counts spans per group of some columns and their distinct texts,
// over the set and per group, in memory that does not grow with the set:
// each scan counts its spans per group and gives each span's text hash and
// group to a sorter of its own (spanScan), which writes sorted runs of
// spanRun pairs, each pair once, to a temporary file as they fill; count
// merges the scans' runs in order, where the pairs of one text, and of one
// text in one group, come next to each other.
type spanCount struct {
	mu     sync.Mutex
	groups map[string]*groupCount // by the group's values, each ended by a NUL
	list   []*groupCount          // by index
	scans  []*spanScan
}

type groupCount struct {
	keys          []string
	index         uint32
	total, unique int
}

// textInGroup is one span in the distinct counts: its text's hash and its
// group's index.
type textInGroup struct {
	text  textHash
	group uint32
}

// compareTextInGroup orders pairs by text, then group. It is most of the
// sorting's time: the hashes' first halves almost always differ, and
// cmp.Or would compare every field.
func compareTextInGroup(a, b textInGroup) int {
	switch {
	case a.text[0] != b.text[0]:
		return cmp.Compare(a.text[0], b.text[0])
	case a.text[1] != b.text[1]:
		return cmp.Compare(a.text[1], b.text[1])
	}
	return cmp.Compare(a.group, b.group)
}

// textInGroupOrder writes a pair as 20 bytes, once per run.
var textInGroupOrder = extsort.Order[textInGroup]{
	Compare:  compareTextInGroup,
	Distinct: true,
	Append: func(buf []byte, v textInGroup) []byte {
		buf = binary.LittleEndian.AppendUint64(buf, v.text[0])
		buf = binary.LittleEndian.AppendUint64(buf, v.text[1])
		return binary.LittleEndian.AppendUint32(buf, v.group)
	},
	Decode: func(r *bufio.Reader) (textInGroup, error) {
		var b [20]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return textInGroup{}, err
		}
		return textInGroup{textHash{binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint64(b[8:])},
			binary.LittleEndian.Uint32(b[16:])}, nil
	},
}

// spanRun is how many spans a scan holds before it writes them, sorted, to
// its temporary file: 6 MiB of pairs. A scan of a million notes' 17 million
// spans on two connections writes 66 runs, at most 340 MB.
var spanRun = 1 << 18

func newSpanCount() *spanCount {
	return &spanCount{groups: map[string]*groupCount{}}
}

// spanScan is one scan's part of a spanCount: add is the function the scan
// calls with each span (see eachSpan): its text and the values of the
// columns. It remembers the groups it met.
type spanScan struct {
	c      *spanCount
	met    map[string]*groupCount
	key    []byte
	sorter *extsort.Sorter[textInGroup]
	totals []int // spans by group index
	err    error // the first the sorter returned: the scan's spans are not all counted
}

// scan starts a scan's part.
func (c *spanCount) scan() *spanScan {
	sc := &spanScan{c: c, met: map[string]*groupCount{}, sorter: extsort.New("statistics: distinct span texts", spanRun, textInGroupOrder)}
	c.mu.Lock()
	c.scans = append(c.scans, sc)
	c.mu.Unlock()
	return sc
}

func (sc *spanScan) add(text []byte, values [][]byte) {
	if sc.err != nil {
		return
	}
	var g uint32
	if len(values) > 0 {
		sc.key = sc.key[:0]
		for _, v := range values {
			sc.key = append(append(sc.key, v...), 0)
		}
		gc := sc.met[string(sc.key)]
		if gc == nil {
			gc = sc.c.group(sc.key, values)
			sc.met[string(sc.key)] = gc
		}
		g = gc.index
		if int(g) >= len(sc.totals) {
			sc.totals = append(sc.totals, make([]int, int(g)+1-len(sc.totals))...)
		}
		sc.totals[g]++
	}
	sc.err = sc.sorter.Add(textInGroup{hashText(text), g})
}

// group returns the group of the values, joined in key.
func (c *spanCount) group(key []byte, values [][]byte) *groupCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[string(key)]
	if g == nil {
		g = &groupCount{keys: make([]string, len(values)), index: uint32(len(c.list))}
		for i, v := range values {
			g.keys[i] = string(v)
		}
		c.groups[string(key)] = g
		c.list = append(c.list, g)
	}
	return g
}

// count merges the scans' pairs, once every scan is done: it returns the
// number of distinct texts and fills in each group's counts.
func (c *spanCount) count() (int, error) {
	var cursors []*extsort.Cursor[textInGroup]
	for _, sc := range c.scans {
		if sc.err != nil {
			return 0, sc.err
		}
		for g, n := range sc.totals {
			c.list[g].total += n
		}
		if cur := sc.sorter.Cursor(); cur.Next() {
			cursors = append(cursors, cur)
		} else if err := cur.Err(); err != nil {
			return 0, err
		}
	}
	unique := 0
	var last textInGroup
	for first := true; len(cursors) > 0; first = false {
		m := 0 // the cursor at the least pair: a few scans, so a linear search
		for i := 1; i < len(cursors); i++ {
			if compareTextInGroup(cursors[i].Value(), cursors[m].Value()) < 0 {
				m = i
			}
		}
		v := cursors[m].Value()
		if first || v.text != last.text {
			unique++
		}
		if len(c.list) > 0 {
			if first || v != last {
				c.list[v.group].unique++
			}
		}
		last = v
		if !cursors[m].Next() {
			if err := cursors[m].Err(); err != nil {
				return 0, err
			}
			cursors = slices.Delete(cursors, m, m+1)
		}
	}
	return unique, nil
}

// close removes the scans' temporary files.
func (c *spanCount) close() {
	for _, sc := range c.scans {
		sc.sorter.Close()
	}
}

// groupCounts are the groups in order of their keys, once counted.
func (c *spanCount) groupCounts() []Group {
	out := make([]Group, 0, len(c.list))
	for _, g := range c.list {
		out = append(out, Group{Keys: g.keys, Total: g.total, Unique: g.unique})
	}
	slices.SortFunc(out, func(a, b Group) int { return slices.Compare(a.Keys, b.Keys) })
	return out
}

// eachSpan calls fn for every span of a set whose id lies in ids, in no
// order the caller may rely on (on SQLite, along the annotation_set_id
// index: the order they were written), with its text
// and the values of cols. The bytes are the driver's, valid during the call
// only. Only what is asked crosses from the database: with modernc's SQLite
// a column read costs about as much as the row's lookup.
func (s *Store) eachSpan(ctx context.Context, q querier, setID int, ids idRange, cols []string, fn func(text []byte, values [][]byte)) error {
	seal, err := s.setSeal(ctx, setID)
	if err != nil {
		return err
	}
	query := `SELECT text`
	for _, c := range cols {
		query += ", " + c
	}
	rows, err := q.QueryContext(ctx, s.rebind(query+` FROM spans WHERE annotation_set_id = ? AND id BETWEEN ? AND ?`), setID, ids[0], ids[1])
	if err != nil {
		return fmt.Errorf("read spans: %w", err)
	}
	defer rows.Close()
	raw := make([]sql.RawBytes, 1+len(cols))
	dest := make([]any, len(raw))
	for i := range raw {
		dest[i] = &raw[i]
	}
	values := make([][]byte, len(cols))
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("read spans: %w", err)
		}
		for i := range values {
			values[i] = raw[1+i]
		}
		text, err := seal.open(fieldSpanText, raw[0])
		if err != nil {
			return err
		}
		fn(text, values)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read spans: %w", err)
	}
	return nil
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
	where, args := "corpus_id = ?", []any{corpusID}
	if st.Split != "" {
		where, args = where+" AND split = ?", append(args, st.Split)
	}
	query := `WITH d AS MATERIALIZED (
		SELECT id, split, note_type, token_count, char_count FROM documents WHERE ` + where + ` ORDER BY id),
	c AS MATERIALIZED (
		SELECT d.*, (SELECT COUNT(*) FROM spans s WHERE s.document_id = d.id AND s.annotation_set_id = ?) AS n FROM d)
	SELECT split, note_type, COUNT(*), SUM(token_count), SUM(char_count), SUM(n), SUM(CASE WHEN n > 0 THEN 1 ELSE 0 END)
	FROM c GROUP BY split, note_type`
	rows, err := q.QueryContext(ctx, s.rebind(query), append(args, setID)...)
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

// coveredSplit is the one split a set covers, when it is a tagging run's
// output of one split (its provenance names the split as the user gave it,
// "Test" for test), else "".
func coveredSplit(set *ent.AnnotationSet) string {
	if set.Provenance["source"] != "tagging" {
		return ""
	}
	split, _ := set.Provenance["split"].(string)
	if split == "" {
		return ""
	}
	sp, err := normalizeSplit(split)
	if err != nil {
		return "" // not a split the job could have tagged: count the corpus
	}
	return string(sp)
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
