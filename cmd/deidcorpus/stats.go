package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"deidcorpus/pipeline/phi"
	"deidcorpus/store"
)

func init() {
	register(&command{
		name:    "stats",
		summary: "PHI distribution of a corpus (Stubbs & Uzuner Table 3 layout)",
		args:    "--corpus NAME [--set gold] [--by category,type,split,note-type] [--json]",
		examples: []string{
			"deidcorpus stats --corpus demo",
			"deidcorpus stats --corpus demo --set system-crf1 --by type,note-type --json",
		},
		setup: setupStats,
	})
}

func setupStats(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "corpus to count (required)")
	set := fs.String("set", "gold", "annotation set to count")
	by := listFlag{}
	fs.Var(&by, "by", "dimensions to group by, comma-separated: category, type, split, note-type (default category,type,split)")
	asJSON := fs.Bool("json", false, "print every figure as JSON")
	return func(ctx context.Context, args []string) error {
		if *corpus == "" {
			return usageErr("--corpus is required")
		}
		if len(by) == 0 {
			by = listFlag{"category", "type", "split"}
		}
		dims := make([]store.Dimension, len(by))
		for i, b := range by {
			d, err := store.ParseDimension(b)
			if err != nil {
				return err
			}
			dims[i] = d
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.stats", map[string]any{"corpus": *corpus, "set": *set})
		if err != nil {
			return err
		}
		defer st.Close()
		stats, err := st.Statistics(ctx, *corpus, *set, dims)
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(struct {
				*store.Statistics
				PHIPerDocument float64 `json:"phiPerDocument"`
				ShareWithPHI   float64 `json:"shareOfDocumentsWithPHI"`
			}{stats, stats.PHIPerDocument(), stats.ShareWithPHI()})
		}
		printStats(e.stdout, stats)
		return nil
	}
}

// printStats renders the grouped counts as a table: one row per label (the
// dimensions other than split), one column per split when grouped by split,
// then the total and the unique count, like Stubbs & Uzuner Table 3.
func printStats(w io.Writer, st *store.Statistics) {
	fmt.Fprintf(w, "Corpus %s, annotation set %s: %d documents, %d patients, %d characters, %d tokens\n",
		st.Corpus, st.AnnotationSet, st.Documents, st.Patients, st.Characters, st.Tokens)
	fmt.Fprintf(w, "%d PHI (%d unique), %.2f per document, %.1f%% of documents with PHI\n\n",
		st.Spans, st.UniqueSpans, st.PHIPerDocument(), 100*st.ShareWithPHI())

	_, bySplit := st.Key(store.Group{Keys: make([]string, len(st.By))}, store.BySplit)
	var splits []string
	type row struct {
		label         string
		perSplit      map[string]int
		total, unique int
	}
	rows := map[string]*row{}
	var order []string
	for _, g := range st.Groups {
		var parts []string
		for i, d := range st.By {
			if d != store.BySplit {
				parts = append(parts, g.Keys[i])
			}
		}
		label := strings.Join(parts, ": ")
		if label == "" {
			label = "PHI"
		}
		r := rows[label]
		if r == nil {
			r = &row{label: label, perSplit: map[string]int{}}
			rows[label] = r
			order = append(order, label)
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
	rank := labelRank()
	slices.SortStableFunc(order, func(a, b string) int { return rank(a) - rank(b) })

	tw := tabwriter.NewWriter(w, 4, 8, 2, ' ', tabwriter.AlignRight)
	header := "PHI category\t"
	for _, sp := range splits {
		header += "# in " + sp + "\t"
	}
	header += "Total\t"
	if !bySplit {
		header += "Unique\t"
	}
	fmt.Fprintln(tw, header)
	sum := map[string]int{}
	for _, label := range order {
		r := rows[label]
		line := r.label + "\t"
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
	total := "Total # of tags\t"
	avg := "Average PHI per document\t"
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

	if len(st.NoteTypes) > 1 || (len(st.NoteTypes) == 1 && st.NoteTypes[0].Name != "") {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 4, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "Note type\tDocuments\tTokens\tPHI\t")
		for _, n := range st.NoteTypes {
			name := n.Name
			if name == "" {
				name = "(none)"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", name, n.Documents, n.Tokens, n.Spans)
		}
		tw.Flush()
	}
}

// labelRank orders "CATEGORY: TYPE" labels as the i2b2 2014 tag set lists
// them; other labels follow in the order the database returned them.
func labelRank() func(string) int {
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
	return func(label string) int {
		if p, ok := pos[label]; ok {
			return p
		}
		return i
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
