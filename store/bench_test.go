package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"deidcorpus/ent/migrate"
	"deidcorpus/internal/shared"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// BenchmarkImportMEDDOCAN imports MEDDOCAN train (500 notes, ~11k spans) into
// a fresh SQLite store per iteration. The files are read once; opening the
// empty store (schema creation) is outside the timer, parsing is inside, since
// Import parses.
func BenchmarkImportMEDDOCAN(b *testing.B) {
	files, err := formats.ReadPaths(shared.Path(b, "meddocan-i2b2/train"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var docs, spans int
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s := storetest.Open(b, storetest.SQLite)
		b.StartTimer()
		res, err := s.Import(ctx, store.ImportOptions{Corpus: "meddocan", TagSet: "i2b2-2014", Split: "train"}, files)
		if err != nil {
			b.Fatal(err)
		}
		docs += res.Documents
		spans += res.Spans
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(docs)/sec, "docs/s")
	b.ReportMetric(float64(spans)/sec, "spans/s")
}

// The generated corpus of BenchmarkStatistics100k.
const (
	genDocs    = 100_000
	genSpans   = 2_500_000
	genCorpus  = "synthetic-100k"
	genVersion = "stats100k-v1" // bump when the generator changes
)

// BenchmarkStatistics100k times the counting of Statistics (the cache left
// out, but for the "cached" case) on a generated corpus of 100,000 notes and
// 2.5 million gold spans in SQLite. The database is built once and cached in
// os.TempDir (see statsDB); the first run takes a minute or so.
func BenchmarkStatistics100k(b *testing.B) {
	ctx := context.Background()
	s, err := store.Open(ctx, statsDB(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, v := range []struct {
		name   string
		by     []store.Dimension
		cached bool
	}{
		{"by=category,type", []store.Dimension{store.ByCategory, store.ByType}, false},
		{"by=split,note-type", []store.Dimension{store.BySplit, store.ByNoteType}, false},
		{"by=category,type,split", []store.Dimension{store.ByCategory, store.ByType, store.BySplit}, false},
		{"by=note-type", []store.Dimension{store.ByNoteType}, false},
		{"by=none", nil, false},
		{"by=category,type/cached", []store.Dimension{store.ByCategory, store.ByType}, true},
	} {
		count := s.CountStatistics
		if v.cached {
			count = s.Statistics
		}
		b.Run(v.name, func(b *testing.B) {
			if v.cached { // times hits only
				if _, err := s.Statistics(ctx, genCorpus, "gold", v.by); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				st, err := count(ctx, genCorpus, "gold", v.by)
				if err != nil {
					b.Fatal(err)
				}
				if st.Documents != genDocs || st.Spans != genSpans {
					b.Fatalf("corpus has %d documents and %d spans, want %d and %d", st.Documents, st.Spans, genDocs, genSpans)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
		})
	}
}

// statsDB returns the path of the generated SQLite corpus, building it when no
// cached copy exists. The cache key covers the generator's version and the
// store's schema, so a new index or column rebuilds it; the file is built
// under a temporary name and renamed, so concurrent runs do not see half a
// corpus.
func statsDB(b *testing.B) string {
	b.Helper()
	return cachedDB(b, genVersion, func(ctx context.Context, path string) error {
		return buildStatsDB(ctx, path, genSpec{genCorpus, 100_000})
	})
}

// cachedDB returns the path of a generated SQLite database built by build,
// cached in os.TempDir under version and the store's schema.
func cachedDB(b *testing.B, version string, build func(context.Context, string) error) string {
	b.Helper()
	h := sha256.New()
	fmt.Fprint(h, version)
	for _, t := range migrate.Tables {
		fmt.Fprint(h, t.Name)
		for _, c := range t.Columns {
			fmt.Fprint(h, c.Name, c.Type, c.Nullable)
		}
		for _, ix := range t.Indexes {
			fmt.Fprint(h, ix.Name, ix.Unique)
			for _, c := range ix.Columns {
				fmt.Fprint(h, c.Name)
			}
		}
	}
	path := filepath.Join(os.TempDir(), "deidcorpus-"+version+"-"+hex.EncodeToString(h.Sum(nil))[:12]+".db")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	start := time.Now()
	if err := build(context.Background(), tmp); err != nil {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(tmp + suffix)
		}
		b.Fatalf("build generated corpus: %v", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %s in %s", path, time.Since(start).Round(time.Second))
	return path
}

// buildStatsDB writes the generated corpus with multi-row INSERTs in one
// transaction, with the spans' and documents' secondary indexes dropped during
// the load and rebuilt afterwards (sorting once beats 2.5 million random index
// inserts). The corpus and its annotation set go through the store, so they get
// the schema's defaults.
// genSpec is one generated corpus: its name and generator seed.
type genSpec struct {
	name string
	seed uint64
}

func buildStatsDB(ctx context.Context, path string, specs ...genSpec) error {
	s, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer s.Close()
	type made struct {
		corpus, set int
		seed        uint64
	}
	var corpora []made
	for _, spec := range specs {
		c, err := s.Client.Corpus.Create().SetName(spec.name).SetTagset("i2b2-2014").Save(ctx)
		if err != nil {
			return err
		}
		set, err := s.Client.AnnotationSet.Create().SetCorpusID(c.ID).SetName("gold").Save(ctx)
		if err != nil {
			return err
		}
		corpora = append(corpora, made{c.ID, set.ID, spec.seed})
	}

	conn, err := s.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA cache_size = -262144"); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()

	var indexes []string
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_master
		WHERE type = 'index' AND tbl_name IN ('documents', 'spans') AND sql IS NOT NULL`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			rows.Close()
			return err
		}
		names = append(names, name)
		indexes = append(indexes, ddl)
	}
	rows.Close()
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, `DROP INDEX "`+n+`"`); err != nil {
			return err
		}
	}

	for _, m := range corpora {
		if err := insertGenerated(ctx, tx, m.corpus, m.set, m.seed); err != nil {
			return err
		}
	}
	for _, ddl := range indexes {
		if _, err := tx.ExecContext(ctx, ddl); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// insertGenerated writes one generated corpus's patients, documents and
// spans in tx.
func insertGenerated(ctx context.Context, tx *sql.Tx, corpusID, setID int, seed uint64) error {
	c := struct{ ID int }{corpusID}
	set := struct{ ID int }{setID}
	g := newGenerator(seed)
	now := time.Now().UTC()
	patientID := map[int]int64{}
	for p := range g.patients {
		res, err := tx.ExecContext(ctx, `INSERT INTO patients (corpus_id, external_id) VALUES (?, ?)`, c.ID, fmt.Sprint(p+1))
		if err != nil {
			return err
		}
		if patientID[p], err = res.LastInsertId(); err != nil {
			return err
		}
	}

	const docRows, spanRows = 200, 500
	docInsert := multiInsert(`INSERT INTO documents (corpus_id, patient_id, external_id, record_order, note_type,
		created, split, text, char_count, token_count, checksum, imported_at) VALUES `, 12, docRows)
	const spanCols = 11
	spanInsert := multiInsert(`INSERT INTO spans (document_id, annotation_set_id, "start", "end", text,
		category, "type", comment, source_id, split, note_type) VALUES `, spanCols, spanRows)
	docStmt, err := tx.PrepareContext(ctx, docInsert+" RETURNING id")
	if err != nil {
		return err
	}
	defer docStmt.Close()
	spanStmt, err := tx.PrepareContext(ctx, spanInsert)
	if err != nil {
		return err
	}
	defer spanStmt.Close()

	var docArgs, spanArgs []any
	var pending []genDoc // documents in docArgs, waiting for their row ids
	flushSpans := func(all bool) error {
		for len(spanArgs) >= spanCols*spanRows || (all && len(spanArgs) > 0) {
			n := min(len(spanArgs), spanCols*spanRows)
			var err error
			if n == spanCols*spanRows {
				_, err = spanStmt.ExecContext(ctx, spanArgs[:n]...)
			} else {
				_, err = tx.ExecContext(ctx, multiInsert(spanInsert[:strings.Index(spanInsert, "VALUES ")+7], spanCols, n/spanCols), spanArgs[:n]...)
			}
			if err != nil {
				return fmt.Errorf("insert spans: %w", err)
			}
			spanArgs = append(spanArgs[:0], spanArgs[n:]...)
		}
		return nil
	}
	flushDocs := func() error {
		if len(pending) == 0 {
			return nil
		}
		var rows *sql.Rows
		var err error
		if len(pending) == docRows {
			rows, err = docStmt.QueryContext(ctx, docArgs...)
		} else {
			rows, err = tx.QueryContext(ctx, multiInsert(docInsert[:strings.Index(docInsert, "VALUES ")+7], 12, len(pending))+" RETURNING id", docArgs...)
		}
		if err != nil {
			return fmt.Errorf("insert documents: %w", err)
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) != len(pending) {
			return fmt.Errorf("inserted %d documents, got %d ids", len(pending), len(ids))
		}
		for i, d := range pending {
			for _, sp := range d.spans {
				spanArgs = append(spanArgs, ids[i], set.ID, sp.start, sp.end, sp.text, sp.category, sp.typ, "", sp.id, d.split, d.noteType)
			}
		}
		docArgs, pending = docArgs[:0], pending[:0]
		return flushSpans(false)
	}
	for i := range genDocs {
		d := g.document(i)
		sum := sha256.Sum256([]byte(d.text))
		docArgs = append(docArgs, c.ID, patientID[d.patient], d.id, d.order, d.noteType,
			d.created, d.split, d.text, len([]rune(d.text)), len(strings.Fields(d.text)), hex.EncodeToString(sum[:]), now)
		pending = append(pending, d)
		if len(pending) == docRows {
			if err := flushDocs(); err != nil {
				return err
			}
		}
	}
	if err := flushDocs(); err != nil {
		return err
	}
	if err := flushSpans(true); err != nil {
		return err
	}
	return nil
}

// multiInsert appends n placeholder tuples of width columns to prefix.
func multiInsert(prefix string, width, n int) string {
	tuple := "(" + strings.Repeat("?, ", width-1) + "?)"
	return prefix + strings.Repeat(tuple+", ", n-1) + tuple
}

// The generator: i2b2 2014 types in roughly the proportions of Stubbs &
// Uzuner's Table 3, texts drawn from pools sized so that unique counts are
// realistic (few distinct states and ages, many distinct names and record
// numbers), 2-6 notes per patient, splits by patient.

type genSpan struct {
	id, text, category, typ string
	start, end              int
}

type genDoc struct {
	id, noteType, split string
	patient, order      int
	created             time.Time
	text                string
	spans               []genSpan
}

type generator struct {
	rng       *rand.Rand
	types     []string // one entry per unit of weight
	category  map[string]string
	first     []string
	last      []string
	places    []string
	patients  int
	docOf     []int // document index -> patient
	orderOf   []int
	spanCount []int
}

var genTypes = []struct {
	category, typ string
	weight        int
}{
	{"DATE", "DATE", 12487}, {"NAME", "DOCTOR", 4797}, {"NAME", "PATIENT", 2195}, {"LOCATION", "HOSPITAL", 2312},
	{"AGE", "AGE", 1997}, {"ID", "MEDICALRECORD", 1033}, {"LOCATION", "CITY", 654}, {"CONTACT", "PHONE", 524},
	{"LOCATION", "STATE", 504}, {"ID", "IDNUM", 456}, {"PROFESSION", "PROFESSION", 413}, {"NAME", "USERNAME", 356},
	{"LOCATION", "ZIP", 352}, {"LOCATION", "STREET", 352}, {"LOCATION", "DEPARTMENT", 279}, {"LOCATION", "ORGANIZATION", 206},
	{"LOCATION", "COUNTRY", 183}, {"LOCATION", "ROOM", 110}, {"LOCATION", "LOCATION-OTHER", 17}, {"ID", "DEVICE", 15},
	{"CONTACT", "FAX", 12}, {"CONTACT", "EMAIL", 5}, {"CONTACT", "URL", 3}, {"ID", "HEALTHPLAN", 2}, {"ID", "BIOID", 1},
	{"ID", "ACCOUNT", 1}, {"ID", "LICENSE", 1}, {"ID", "VEHICLE", 1}, {"ID", "SSN", 1}, {"OTHER", "OTHER", 20},
}

var (
	genNoteTypes = []string{"discharge summary", "progress note", "radiology report", "clinic letter",
		"operative note", "emergency department note", "nursing note", "pathology report"}
	genFiller = []string{"Patient seen for follow-up of hypertension and diabetes. ", "No acute distress. ",
		"Vitals stable, afebrile overnight. ", "Continue metformin 500 mg twice daily. ",
		"Chest x-ray shows no acute process. ", "Plan discussed with the family. ", "Labs reviewed: creatinine 1.1. ",
		"Will follow up in clinic. ", "History of coronary artery disease status post stent. "}
	genSyllables = []string{"an", "ber", "ca", "del", "ek", "fo", "gar", "hil", "is", "jo", "ka", "lin", "mo",
		"nor", "ol", "pe", "quin", "ra", "sa", "tor", "ul", "ven", "wi", "yo", "zel"}
	genMonths = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September",
		"October", "November", "December"}
	genProfessions = []string{"teacher", "nurse", "engineer", "farmer", "lawyer", "electrician", "accountant",
		"retired machinist", "student", "truck driver", "chef", "pharmacist"}
	genStates = []string{"MA", "Massachusetts", "NH", "RI", "CT", "NY", "Maine", "VT", "FL", "CA", "Texas", "Ohio"}
)

func newGenerator(seed uint64) *generator {
	g := &generator{rng: rand.New(rand.NewPCG(2014, seed)), category: map[string]string{}}
	for _, t := range genTypes {
		g.category[t.typ] = t.category
		for range t.weight {
			g.types = append(g.types, t.typ)
		}
	}
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(genSyllables[g.rng.IntN(len(genSyllables))])
		}
		s := b.String()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	for range 400 {
		g.first = append(g.first, word(2))
	}
	for range 3000 {
		g.last = append(g.last, word(2+g.rng.IntN(2)))
	}
	for range 800 {
		g.places = append(g.places, word(2+g.rng.IntN(2)))
	}
	// Patients with 2-6 notes each until there are genDocs notes.
	for len(g.docOf) < genDocs {
		n := min(2+g.rng.IntN(5), genDocs-len(g.docOf))
		for o := range n {
			g.docOf = append(g.docOf, g.patients)
			g.orderOf = append(g.orderOf, o+1)
		}
		g.patients++
	}
	// 10-40 spans per note, paired so the total is exactly genSpans.
	g.spanCount = make([]int, genDocs)
	for i := 0; i < genDocs; i += 2 {
		d := g.rng.IntN(31) - 15
		g.spanCount[i], g.spanCount[i+1] = genSpans/genDocs+d, genSpans/genDocs-d
	}
	return g
}

func (g *generator) name() string {
	return g.first[g.rng.IntN(len(g.first))] + " " + g.last[g.rng.IntN(len(g.last))]
}

func (g *generator) spanText(typ string) string {
	r := g.rng
	switch typ {
	case "DATE":
		switch r.IntN(3) {
		case 0:
			return fmt.Sprintf("%d/%d/%d", 1+r.IntN(12), 1+r.IntN(28), 2060+r.IntN(40))
		case 1:
			return fmt.Sprintf("%s %d", genMonths[r.IntN(12)], 1+r.IntN(28))
		default:
			return fmt.Sprintf("%02d/%02d", 1+r.IntN(12), 1+r.IntN(28))
		}
	case "DOCTOR":
		if r.IntN(2) == 0 {
			return "Dr. " + g.last[r.IntN(len(g.last))]
		}
		return g.name()
	case "PATIENT":
		return g.name()
	case "USERNAME":
		return strings.ToLower(g.first[r.IntN(len(g.first))][:1] + g.last[r.IntN(len(g.last))])
	case "HOSPITAL":
		return g.places[r.IntN(200)] + " Medical Center"
	case "AGE":
		return fmt.Sprint(18 + r.IntN(80))
	case "CITY", "STREET", "ORGANIZATION", "COUNTRY", "LOCATION-OTHER", "DEPARTMENT":
		p := g.places[r.IntN(len(g.places))]
		switch typ {
		case "STREET":
			return fmt.Sprintf("%d %s Street", 1+r.IntN(999), p)
		case "DEPARTMENT":
			return p + " Unit"
		}
		return p
	case "STATE":
		return genStates[r.IntN(len(genStates))]
	case "PROFESSION":
		return genProfessions[r.IntN(len(genProfessions))]
	case "ROOM":
		return fmt.Sprintf("Room %d", 100+r.IntN(900))
	case "ZIP":
		return fmt.Sprintf("%05d", r.IntN(100000))
	case "PHONE", "FAX":
		return fmt.Sprintf("(%03d) %03d-%04d", 200+r.IntN(800), r.IntN(1000), r.IntN(10000))
	case "EMAIL":
		return strings.ToLower(g.last[r.IntN(len(g.last))]) + "@example.org"
	case "URL":
		return "www." + strings.ToLower(g.places[r.IntN(len(g.places))]) + ".org"
	case "OTHER":
		return "the " + g.places[r.IntN(len(g.places))] + " group"
	}
	return fmt.Sprintf("%07d", r.IntN(10_000_000)) // identifiers
}

// document generates note i: filler sentences with PHI between them, the
// spans' offsets in code points of the text.
func (g *generator) document(i int) genDoc {
	p := g.docOf[i]
	d := genDoc{
		id:       fmt.Sprintf("%d-%02d", p+1, g.orderOf[i]),
		patient:  p,
		order:    g.orderOf[i],
		noteType: genNoteTypes[g.rng.IntN(len(genNoteTypes))],
		created:  time.Date(2070, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour),
	}
	switch h := p % 20; {
	case h < 14:
		d.split = "train"
	case h < 16:
		d.split = "dev"
	default:
		d.split = "test"
	}
	var b strings.Builder
	pos := 0 // code points; the text is ASCII
	for k := range g.spanCount[i] {
		f := genFiller[g.rng.IntN(len(genFiller))]
		b.WriteString(f)
		pos += len(f)
		typ := g.types[g.rng.IntN(len(g.types))]
		text := g.spanText(typ)
		b.WriteString(text)
		d.spans = append(d.spans, genSpan{id: fmt.Sprintf("P%d", k), text: text, category: g.category[typ],
			typ: typ, start: pos, end: pos + len(text)})
		pos += len(text)
		b.WriteString(". ")
		pos += 2
	}
	d.text = b.String()
	return d
}

// BenchmarkCompare100k times CompareCorpora between two generated corpora of
// 100,000 notes and 2.5 million gold spans each (the generator of
// BenchmarkStatistics100k under two seeds: the same filler text, other names,
// places and numbers), by type, in SQLite: every text streamed through the
// vocabularies, every span grouped. The database is built once and cached in
// os.TempDir (a couple of minutes the first time).
func BenchmarkCompare100k(b *testing.B) {
	ctx := context.Background()
	path := cachedDB(b, "compare100k-v1", func(ctx context.Context, path string) error {
		return buildStatsDB(ctx, path, genSpec{"generated-a", 100_000}, genSpec{"generated-b", 7})
	})
	s, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, by := range []store.Dimension{store.ByType, store.ByCategory} {
		b.Run("by="+string(by), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := s.CountComparison(ctx, store.CompareOptions{A: "generated-a", SetA: "gold", B: "generated-b", SetB: "gold", By: by})
				if err != nil {
					b.Fatal(err)
				}
				if c.A.Documents != genDocs || c.B.Spans != genSpans {
					b.Fatalf("%d documents, %d spans; want %d, %d", c.A.Documents, c.B.Spans, genDocs, genSpans)
				}
				if b.N == 1 {
					b.Logf("chi-square %.1f (dof %d, p %.3g), token OOV %.4f, PHI OOV %.4f, %d and %d name spans",
						c.ChiSquare.Statistic, c.ChiSquare.DOF, c.ChiSquare.P, c.OOV.TokenRate, c.OOV.PHIRate, c.A.NameSpans, c.B.NameSpans)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
		})
	}
}
