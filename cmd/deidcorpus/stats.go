package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"deidcorpus/pipeline/phi"
	"deidcorpus/pipeline/stats"
	"deidcorpus/store"
)

func init() {
	register(&command{
		name:    "stats",
		summary: "PHI distribution of a corpus (Stubbs & Uzuner Table 3 layout), or two corpora compared (Deleger Table 3)",
		args: "--corpus NAME [--set gold] [--by category,type,split,note-type] [--json]\n" +
			"       deidcorpus stats --corpus A [--set gold] --compare B [--compare-set gold] [--by category|type] [--json]",
		examples: []string{
			"deidcorpus stats --corpus demo",
			"deidcorpus stats --corpus demo --set system-crf1 --by type,note-type --json",
			"deidcorpus stats --corpus meddocan-train --compare meddocan-dev --by type",
			"deidcorpus stats --corpus demo --compare demo-twin --compare-set gold --by category --json",
		},
		setup: setupStats,
	})
}

func setupStats(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "corpus to count (required); with --compare, the reference corpus A")
	set := fs.String("set", "gold", "annotation set to count")
	compare := fs.String("compare", "", "corpus B to compare with --corpus: Pearson chi-square of their PHI per group, B's token and PHI out-of-vocabulary rates against A, both name-pattern tables")
	compareSet := fs.String("compare-set", "gold", "annotation set of the --compare corpus")
	by := listFlag{}
	fs.Var(&by, "by", "`DIMENSIONS` to group by, comma-separated: category, type, split, note-type (default category,type,split); with --compare one of category, type (default type)")
	asJSON := fs.Bool("json", false, "print every figure as JSON")
	return func(ctx context.Context, args []string) error {
		if *corpus == "" {
			return usageErr("--corpus is required")
		}
		if len(args) > 0 {
			return usageErr("stats takes no arguments (see --corpus, --compare)")
		}
		if *compare != "" {
			return runCompare(ctx, e, *db, *corpus, *set, *compare, *compareSet, by, *asJSON)
		}
		compareSetGiven := false
		fs.Visit(func(f *flag.Flag) { compareSetGiven = compareSetGiven || f.Name == "compare-set" })
		if compareSetGiven {
			return usageErr("--compare-set needs --compare")
		}
		if len(by) == 0 {
			by = listFlag{"category", "type", "split"}
		}
		dims := make([]store.Dimension, len(by))
		for i, b := range by {
			d, err := store.ParseDimension(b)
			if err != nil {
				return usageErr("--by: %v", err)
			}
			if slices.Contains(dims[:i], d) {
				return usageErr("--by: %s is given twice", b)
			}
			dims[i] = d
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.stats", map[string]any{"corpus": *corpus, "set": *set})
		if err != nil {
			return err
		}
		defer st.Close()
		one, err := corpusStats(ctx, st, *corpus, *set, dims)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(e.stdout, one)
		}
		printStats(e.stdout, one.Statistics)
		printNoteTypes(e.stdout, one.Statistics)
		printPatterns(e.stdout, one.NamePatterns)
		return nil
	}
}

// oneCorpus is a corpus's statistics as --json prints them.
type oneCorpus struct {
	*store.Statistics
	PHIPerDocument float64              `json:"phiPerDocument"`
	ShareWithPHI   float64              `json:"shareOfDocumentsWithPHI"`
	NamePatterns   []stats.PatternCount `json:"namePatterns"`
}

func corpusStats(ctx context.Context, st *store.Store, corpus, set string, dims []store.Dimension) (*oneCorpus, error) {
	s, err := st.Statistics(ctx, corpus, set, dims)
	if err != nil {
		return nil, err
	}
	c, err := st.CorpusByName(ctx, corpus)
	if err != nil {
		return nil, err
	}
	pats, err := st.NamePatterns(ctx, c, set)
	if err != nil {
		return nil, err
	}
	return &oneCorpus{s, s.PHIPerDocument(), s.ShareWithPHI(), pats}, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// runCompare is stats --compare: B compared with A, laid out like Deleger et
// al.'s Table 3, then the chi-square tests, the OOV rates and the name
// patterns side by side.
func runCompare(ctx context.Context, e *env, db, a, setA, b, setB string, by listFlag, asJSON bool) error {
	dim := store.ByType
	switch {
	case len(by) > 1:
		return usageErr("--by: with --compare give one of category, type (not %s)", by.String())
	case len(by) == 1:
		d, err := store.ParseDimension(by[0])
		if err != nil || (d != store.ByCategory && d != store.ByType) {
			return usageErr("--by: with --compare give category or type, not %q", by[0])
		}
		dim = d
	}
	st, ctx, err := openStore(ctx, e, db, "cli.stats", map[string]any{"corpus": a, "set": setA, "compare": b, "compareSet": setB})
	if err != nil {
		return err
	}
	defer st.Close()
	cmp, err := st.CompareCorpora(ctx, store.CompareOptions{A: a, SetA: setA, B: b, SetB: setB, By: dim,
		Fields: store.CompareFields{A: "--corpus", SetA: "--set", B: "--compare", SetB: "--compare-set", By: "--by"}})
	if err != nil {
		return err
	}
	sa, err := corpusStats(ctx, st, a, setA, []store.Dimension{dim})
	if err != nil {
		return err
	}
	sb, err := corpusStats(ctx, st, b, setB, []store.Dimension{dim})
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, struct {
			A          *oneCorpus        `json:"a"`
			B          *oneCorpus        `json:"b"`
			Comparison *stats.Comparison `json:"comparison"`
		}{sa, sb, cmp})
	}
	printComparison(e.stdout, cmp)
	warnDisjointGroups(e, cmp)
	fmt.Fprintf(e.stdout, "\nA: %s\n", a)
	printNoteTypes(e.stdout, sa.Statistics)
	fmt.Fprintf(e.stdout, "\nB: %s\n", b)
	printNoteTypes(e.stdout, sb.Statistics)
	return nil
}

// warnDisjointGroups tells, on stderr, when the two corpora have no PHI
// group in common: their tag sets differ (MEDDOCAN's FECHAS against i2b2's
// DATE), and every row compares a label with nothing.
func warnDisjointGroups(e *env, c *stats.Comparison) {
	if c.A.Spans == 0 || c.B.Spans == 0 {
		return // one side has no PHI at all: nothing to say about labels
	}
	for _, g := range c.Groups {
		if g.A.Total > 0 && g.B.Total > 0 {
			return
		}
	}
	if len(c.Groups) > 0 {
		fmt.Fprintf(e.stderr, "note: %s and %s share no PHI %s: their labels differ, so each row compares a label with nothing; "+
			"derive one onto the other's tag set first (deidcorpus derive --mapping, built-in: %s)\n",
			c.A.Corpus, c.B.Corpus, c.By, strings.Join(phi.BuiltinMappings(), ", "))
	}
}

// printComparison renders a comparison like Deleger et al.'s Table 3: per
// group each corpus's total and unique count, then B's standardized
// residual, its p against the other groups, and B's PHI OOV rate.
func printComparison(w io.Writer, c *stats.Comparison) {
	for _, s := range []struct {
		k string
		s stats.SideSummary
	}{{"A", c.A}, {"B", c.B}} {
		fmt.Fprintf(w, "%s: corpus %s, annotation set %s: %d documents, %d tokens (%d distinct), %d PHI (%d distinct case-folded texts)\n",
			s.k, s.s.Corpus, s.s.AnnotationSet, s.s.Documents, s.s.Tokens, s.s.Vocabulary, s.s.Spans, s.s.PHITexts)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 4, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "PHI %s\tA total\tA unique\tB total\tB unique\tA share\tB share\tResidual\tp\tB PHI OOV\t\n", c.By)
	for _, g := range c.Groups {
		label := g.Group
		if c.By == stats.ByType && g.Category != g.Group { // an open tag set's label is said once
			label = g.Category + ": " + g.Group
		}
		mark := ""
		if math.Abs(g.Residual) >= 1.96 {
			mark = " *"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.2f%%\t%.2f%%\t%+.2f%s\t%s\t%.1f%%\t\n", label, g.A.Total, g.A.Unique, g.B.Total, g.B.Unique,
			100*g.A.Share, 100*g.B.Share, g.Residual, mark, pValue(g.P), 100*g.PHIOOVRate)
	}
	fmt.Fprintf(tw, "Total\t%d\t%d\t%d\t%d\t\t\t\t%s\t%.1f%%\t\n", c.A.Spans, c.A.PHITexts, c.B.Spans, c.B.PHITexts, pValue(c.ChiSquare.P), 100*c.OOV.PHIRate)
	tw.Flush()
	fmt.Fprintln(w, "(unique: distinct span texts; Total unique: distinct case-folded texts. Residual: B's adjusted standardized\n"+
		" residual, * beyond ±1.96; p: that group against all others, 2 x 2, uncorrected)")
	fmt.Fprintln(w)
	chi := func(name string, cs stats.ChiSquare) {
		fmt.Fprintf(w, "%s: chi-square %.4f, dof %d, p %s (n %d, %d groups", name, cs.Statistic, cs.DOF, pValue(cs.P), cs.N, cs.Groups)
		if len(cs.Dropped) > 0 {
			fmt.Fprintf(w, "; dropped, absent from both: %s", strings.Join(cs.Dropped, ", "))
		}
		if cs.SmallExpected > 0 {
			fmt.Fprintf(w, "; %d cells expected below 5, smallest %.2f: the approximation is rough", cs.SmallExpected, cs.MinExpected)
		}
		fmt.Fprintln(w, ")")
	}
	chi("PHI totals by "+c.By, c.ChiSquare)
	chi("Unique PHI by "+c.By, c.ChiSquareUnique)
	o := c.OOV
	fmt.Fprintf(w, "Token OOV: %.2f%% of B's tokens (%d of %d) are no token of A; %.2f%% of its distinct tokens (%d of %d)\n",
		100*o.TokenRate, o.OOVTokens, o.Tokens, 100*o.TokenTypeRate, o.OOVTokenTypes, o.TokenTypes)
	fmt.Fprintf(w, "PHI OOV: %.2f%% of B's spans (%d of %d) have a text no span of A has; %.2f%% of its distinct texts (%d of %d)\n",
		100*o.PHIRate, o.OOVSpans, o.Spans, 100*o.PHITypeRate, o.OOVPHITexts, o.PHITexts)
	fmt.Fprintln(w, "(whitespace tokens and span texts compared case-folded)")

	fmt.Fprintf(w, "\nName patterns (Yeniterzi et al. Table 7): %d name spans in A, %d in B\n", c.A.NameSpans, c.B.NameSpans)
	tw = tabwriter.NewWriter(w, 4, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Pattern\tTokens\tA\tB\t")
	for _, p := range c.NamePatterns {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", p.Pattern, p.Tokens, p.A, p.B)
	}
	fmt.Fprintf(tw, "Total\t\t%d\t%d\t\n", c.A.NameSpans, c.B.NameSpans)
	tw.Flush()
}

func pValue(p float64) string {
	if p < 0.0001 {
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.4f", p)
}

// printNoteTypes renders the notes per note type like Boag et al.'s Table 1.
func printNoteTypes(w io.Writer, st *store.Statistics) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 4, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Note type\tNotes\tContain PHI\tTokens\tPHI instances\tPHI per note\t")
	row := func(name string, n store.DocumentCount) {
		fmt.Fprintf(tw, "%s\t%d\t%d (%.2f%%)\t%d\t%d (%.2f%%)\t%.2f\t\n", name, n.Documents, n.DocumentsWithPHI, 100*n.ShareWithPHI,
			n.Tokens, n.Spans, 100*n.PHIPerToken, n.PHIPerDocument)
	}
	for _, n := range st.NoteTypes {
		name := n.Name
		if name == "" {
			name = "(none)"
		}
		row(name, n)
	}
	row("Total", store.DocumentCount{Documents: st.Documents, DocumentsWithPHI: st.DocumentsWithPHI, Tokens: st.Tokens, Spans: st.Spans,
		ShareWithPHI: st.ShareWithPHI(), PHIPerToken: ratio(st.Spans, st.Tokens), PHIPerDocument: st.PHIPerDocument()})
	tw.Flush()
}

// printPatterns renders one corpus's name-pattern table.
func printPatterns(w io.Writer, pats []stats.PatternCount) {
	n := 0
	for _, p := range pats {
		n += p.Count
	}
	fmt.Fprintf(w, "\nName patterns (Yeniterzi et al. Table 7): %d name spans\n", n)
	tw := tabwriter.NewWriter(w, 4, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Pattern\tTokens\tCount\t")
	for _, p := range pats {
		fmt.Fprintf(tw, "%s\t%d\t%d\t\n", p.Pattern, p.Tokens, p.Count)
	}
	tw.Flush()
}

// printStats renders the grouped counts as a table: one row per label (the
// dimensions other than split), one column per split when grouped by split,
// then the total and the unique count, like Stubbs & Uzuner Table 3. The
// label is in columns of their own, each with its header: the PHI label
// ("NAME: PATIENT", a category or a type) and the note type.
func printStats(w io.Writer, st *store.Statistics) {
	set := st.AnnotationSet
	if st.Split != "" {
		set += " (split " + st.Split + ", which it tagged)"
	}
	fmt.Fprintf(w, "Corpus %s, annotation set %s: %d documents, %d patients, %d characters, %d tokens\n",
		st.Corpus, set, st.Documents, st.Patients, st.Characters, st.Tokens)
	fmt.Fprintf(w, "%d PHI (%d unique), %.2f per document, %.1f%% of documents with PHI\n\n",
		st.Spans, st.UniqueSpans, st.PHIPerDocument(), 100*st.ShareWithPHI())

	bySplit := slices.Contains(st.By, store.BySplit)
	byCategory, byType := slices.Contains(st.By, store.ByCategory), slices.Contains(st.By, store.ByType)
	byNoteType := slices.Contains(st.By, store.ByNoteType)
	var headers []string
	// Without a PHI dimension the PHI column still heads the rows: one
	// row, "PHI", unless the note types are the rows.
	phiColumn := byCategory || byType || !byNoteType
	if phiColumn {
		if byType && !byCategory {
			headers = append(headers, "PHI type")
		} else {
			headers = append(headers, "PHI category") // Stubbs & Uzuner's, over NAME: PATIENT too
		}
	}
	if byNoteType {
		headers = append(headers, "Note type")
	}
	labelOf := func(g store.Group) []string {
		var cells []string
		if phiColumn {
			var parts []string
			for _, d := range []store.Dimension{store.ByCategory, store.ByType} {
				// An open tag set's label is its category and its type
				// ("CALLE: CALLE"): said once.
				if k, ok := st.Key(g, d); ok && !slices.Contains(parts, k) {
					parts = append(parts, k)
				}
			}
			label := strings.Join(parts, ": ")
			if label == "" {
				label = "PHI"
			}
			cells = append(cells, label)
		}
		if byNoteType {
			nt, _ := st.Key(g, store.ByNoteType)
			if nt == "" {
				nt = "(none)"
			}
			cells = append(cells, nt)
		}
		return cells
	}

	var splits []string
	type row struct {
		label         []string
		perSplit      map[string]int
		total, unique int
	}
	rows := map[string]*row{}
	var order []string
	for _, g := range st.Groups {
		label := labelOf(g)
		key := strings.Join(label, "\t")
		r := rows[key]
		if r == nil {
			r = &row{label: label, perSplit: map[string]int{}}
			rows[key] = r
			order = append(order, key)
		}
		if sp, ok := st.Key(g, store.BySplit); ok {
			if !slices.Contains(splits, sp) {
				splits = append(splits, sp)
			}
			r.perSplit[sp] += g.Total
		}
		r.total += g.Total
		// Unique counts do not add across splits, so the column is shown only
		// when not grouping by split.
		r.unique += g.Unique
	}
	splitOrder := map[string]int{"train": 0, "dev": 1, "test": 2, "unassigned": 3}
	slices.SortFunc(splits, func(a, b string) int { return splitOrder[a] - splitOrder[b] })
	if phiColumn {
		rank, known := labelRank()
		// In i2b2 2014's order when every label is one of its own; another tag
		// set's labels (MEDDOCAN's HOSPITAL among them) stay in name order.
		if !slices.ContainsFunc(order, func(k string) bool { return !known(rows[k].label[0]) }) {
			slices.SortStableFunc(order, func(a, b string) int { return rank(rows[a].label[0]) - rank(rows[b].label[0]) })
		}
	}

	tw := tabwriter.NewWriter(w, 4, 8, 2, ' ', tabwriter.AlignRight)
	header := strings.Join(headers, "\t") + "\t"
	for _, sp := range splits {
		header += "# in " + sp + "\t"
	}
	header += "Total\t"
	if !bySplit {
		header += "Unique\t"
	}
	fmt.Fprintln(tw, header)
	sum := map[string]int{}
	for _, key := range order {
		r := rows[key]
		line := key + "\t"
		for _, sp := range splits {
			line += fmt.Sprintf("%d\t", r.perSplit[sp])
			sum[sp] += r.perSplit[sp]
		}
		line += fmt.Sprintf("%d\t", r.total)
		if !bySplit {
			line += fmt.Sprintf("%d\t", r.unique)
		}
		fmt.Fprintln(tw, line)
	}
	blank := strings.Repeat("\t", len(headers)) // the summary rows' label cells
	total := "Total # of tags" + blank
	avg := "Average PHI per document" + blank
	docsIn := map[string]int{}
	for _, s := range st.Splits {
		docsIn[s.Name] = s.Documents
	}
	for _, sp := range splits {
		total += fmt.Sprintf("%d\t", sum[sp])
		avg += fmt.Sprintf("%.2f\t", ratio(sum[sp], docsIn[sp]))
	}
	total += fmt.Sprintf("%d\t", st.Spans)
	avg += fmt.Sprintf("%.2f\t", st.PHIPerDocument())
	if !bySplit {
		total += fmt.Sprintf("%d\t", st.UniqueSpans)
		avg += "\t"
	}
	fmt.Fprintln(tw, total)
	fmt.Fprintln(tw, avg)
	tw.Flush()

}

// labelRank orders "CATEGORY: TYPE" labels as the i2b2 2014 tag set lists
// them (other labels last), and says which labels it knows.
func labelRank() (rank func(string) int, known func(string) bool) {
	pos := map[string]int{}
	i := 0
	for _, c := range phi.I2B2().Categories {
		pos[c.Name] = i
		i++
		for _, t := range c.Types {
			pos[c.Name+": "+t] = i
			pos[t] = i
			i++
		}
	}
	rank = func(label string) int {
		if p, ok := pos[label]; ok {
			return p
		}
		return i
	}
	known = func(label string) bool {
		_, ok := pos[label]
		return ok || label == "PHI"
	}
	return rank, known
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
