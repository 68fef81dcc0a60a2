package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"deidcorpus/pipeline/evaluate"
	"deidcorpus/store"
)

// annotate: the annotation GraphQL operations (graph/annotation.graphqls) on
// the command line: assignDocuments, annotationQueue, each set's progress
// and agreement, under the same rules and audit records.
func init() {
	register(&command{
		name:    "annotate",
		summary: "set annotation up: assign notes to annotators, list a queue, follow progress, measure agreement",
		subs: []*command{{
			name: "assign",
			summary: "give annotators a batch of a corpus's notes (by patients, split, note type, count), each in a set " +
				"BATCH:ACCOUNT, optionally pre-annotated from a run's set (curators)",
			args: "--corpus C --set BATCH --annotators A,B (--patients P,... | --split S | --note-type T | --count N) [--preannotate-from SET] [--open]",
			examples: []string{
				"deidcorpus annotate assign --corpus notes --set batch-1 --annotators ann,bob --split dev --count 20",
				"deidcorpus annotate assign --corpus notes --set batch-2 --annotators ann --patients 101,102 --preannotate-from crf-1-run",
			},
			setup: setupAnnotateAssign,
		}, {
			name:    "queue",
			summary: "the notes of a set not done yet: the ones a built-in model is least sure of first with --model, else in order",
			args:    "--corpus C --set SET [--annotator A] [--model M] [--first N]",
			examples: []string{
				"deidcorpus annotate queue --corpus notes --set batch-1:ann --model crf-1 --first 5",
				"deidcorpus annotate queue --corpus notes --set batch-1 --annotator ann",
			},
			setup: setupAnnotateQueue,
		}, {
			name:     "status",
			summary:  "each annotator's progress: notes done of those assigned, in progress and to do",
			args:     "--corpus C [--batch BATCH] [--annotator A]",
			examples: []string{"deidcorpus annotate status --corpus notes", "deidcorpus annotate status --corpus notes --batch batch-1 --json"},
			setup:    setupAnnotateStatus,
		}, {
			name: "agreement",
			summary: "inter-annotator agreement of each pair of sets: the scorer's strict F1 of one against the other " +
				"over the notes both hold, overall and per type",
			args: "--corpus C (--sets A,B[,...] | --batch BATCH) [--by-type]",
			examples: []string{
				"deidcorpus annotate agreement --corpus notes --batch batch-1",
				"deidcorpus annotate agreement --corpus notes --sets batch-1:ann,gold --by-type",
			},
			setup: setupAnnotateAgreement,
		}},
	})
}

// annotateFlags are the flags every annotate subcommand has: the database,
// the corpus and --json.
func annotateFlags(e *env, fs *flag.FlagSet) (db, corpus *string, asJSON *bool) {
	db = dbFlag(fs, e)
	corpus = fs.String("corpus", "", "the corpus (required)")
	asJSON = fs.Bool("json", false, "print JSON")
	return db, corpus, asJSON
}

// needCorpus refuses positional arguments and a missing --corpus.
func needCorpus(name, corpus string, args []string) error {
	if len(args) > 0 {
		return usageErr("annotate %s takes flags only (got %q)", name, strings.Join(args, " "))
	}
	if corpus == "" {
		return usageErr("annotate %s needs --corpus", name)
	}
	return nil
}

func setupAnnotateAssign(e *env, fs *flag.FlagSet) action {
	db, corpus, asJSON := annotateFlags(e, fs)
	batch := fs.String("set", "", "the batch's name (required); each annotator's set is named BATCH:ACCOUNT")
	var annotators, patients listFlag
	fs.Var(&annotators, "annotators", "annotator accounts, assigned the corpus by an admin (users assign), comma-separated or repeated (required)")
	fs.Var(&patients, "patients", "the notes of these patients (their ids in the source), comma-separated or repeated")
	split := fs.String("split", "", "the notes of this split (train, dev, test or unassigned)")
	noteType := fs.String("note-type", "", "the notes of this note type")
	count := fs.Int("count", 0, fmt.Sprintf("at most this many of the matching notes, the first imported (1 to %d); alone, the corpus's first notes", store.MaxAssign))
	preannotate := fs.String("preannotate-from", "", "a set of the corpus (a tagging run's output) whose spans each new note starts with; empty sets without it")
	open := fs.Bool("open", false, "open annotation: the annotators also read the corpus's other sets (gold, each other's); without it they are blind")
	return func(ctx context.Context, args []string) error {
		if err := needCorpus("assign", *corpus, args); err != nil {
			return err
		}
		switch {
		case *batch == "":
			return usageErr("annotate assign needs --set, the batch's name")
		case len(annotators) == 0:
			return usageErr("annotate assign needs --annotators")
		case *count < 0 || *count > store.MaxAssign:
			return usageErr("--count %d is out of range: assign 1 to %d notes at a time", *count, store.MaxAssign)
		case len(patients) == 0 && *split == "" && *noteType == "" && *count == 0:
			return usageErr("annotate assign needs the notes: --patients, --split, --note-type or --count")
		}
		// The same rule as GraphQL's assignDocuments; the store writes
		// the assignment's own audit record.
		st, ctx, err := openStore(ctx, e, *db, "Mutation.assignDocuments", map[string]any{"input": map[string]any{"corpus": *corpus}})
		if err != nil {
			return err
		}
		defer st.Close()
		if _, err := st.AssignDocuments(ctx, store.Assignment{Corpus: *corpus, Set: *batch, Annotators: annotators,
			Patients: patients, Split: *split, NoteType: *noteType, Limit: *count, PreannotateFrom: *preannotate, Open: *open}); err != nil {
			return err
		}
		progress, err := st.AnnotatorsProgress(ctx, *corpus, *batch)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(e.stdout, progress)
		}
		from := ""
		if *preannotate != "" {
			from = fmt.Sprintf(", pre-annotated from set %q", *preannotate)
		}
		fmt.Fprintf(e.stdout, "assigned batch %q of corpus %q to %s%s\n", *batch, *corpus, strings.Join(annotators, ", "), from)
		return writeProgress(e.stdout, progress)
	}
}

// writeProgress prints annotators' sets with their notes by status.
func writeProgress(w io.Writer, progress []store.AnnotatorProgress) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ANNOTATOR\tSET\tDONE\tIN PROGRESS\tTODO\tREADS")
	for _, p := range progress {
		reads := "own set (blind)"
		if p.Open {
			reads = "all sets (open)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%d\t%s\n", p.Annotator, p.Set, p.Done, p.Total, p.InProgress, p.Todo, reads)
	}
	return tw.Flush()
}

func setupAnnotateQueue(e *env, fs *flag.FlagSet) action {
	db, corpus, asJSON := annotateFlags(e, fs)
	set := fs.String("set", "", "the annotation set (batch-1:ann, gold), or with --annotator the batch (required)")
	annotator := fs.String("annotator", "", "the annotator whose set of the batch --set names (its set is BATCH:ANNOTATOR)")
	modelName := fs.String("model", "", "a built-in (crf) model: the notes it is least sure of first (scored now, about as long as tagging them)")
	first := fs.Int("first", 20, fmt.Sprintf("how many notes to list (1 to %d)", store.MaxPage))
	return func(ctx context.Context, args []string) error {
		if err := needCorpus("queue", *corpus, args); err != nil {
			return err
		}
		if *set == "" {
			return usageErr("annotate queue needs --set")
		}
		if *first < 1 || *first > store.MaxPage {
			return usageErr("--first %d is out of range: list 1 to %d notes", *first, store.MaxPage)
		}
		name := *set
		if *annotator != "" {
			if strings.Contains(name, ":") {
				return usageErr("--set %s names an annotator's set already: give --annotator with the batch's name only", name)
			}
			name += ":" + *annotator
		}
		// The same rule as GraphQL's annotationQueue.
		st, ctx, err := openStore(ctx, e, *db, "Query.annotationQueue", map[string]any{"corpus": *corpus, "model": *modelName})
		if err != nil {
			return err
		}
		defer st.Close()
		var queue []*store.QueuedDocument
		if *modelName != "" {
			queue, err = st.AnnotationQueue(ctx, *corpus, name, *modelName, *first)
		} else {
			queue, err = st.OpenQueue(ctx, *corpus, name, *first)
		}
		if err != nil {
			return err
		}
		type queued struct {
			Document    string  `json:"document"`
			ID          int     `json:"id"`
			Split       string  `json:"split"`
			NoteType    string  `json:"note_type"`
			Status      string  `json:"status"`
			Tokens      int     `json:"tokens,omitempty"`
			Uncertainty float64 `json:"uncertainty,omitempty"`
		}
		rows := make([]queued, len(queue))
		for i, q := range queue {
			rows[i] = queued{Document: q.Document.ExternalID, ID: q.Document.ID, Split: string(q.Document.Split),
				NoteType: q.Document.NoteType, Status: string(q.Status), Tokens: q.Tokens, Uncertainty: q.Entropy}
		}
		if *asJSON {
			return writeJSON(e.stdout, rows)
		}
		if len(rows) == 0 {
			fmt.Fprintf(e.stdout, "set %q has no notes left to annotate\n", name)
			return nil
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		head := "#\tDOCUMENT\tSPLIT\tNOTE TYPE\tSTATUS"
		if *modelName != "" {
			head += "\tTOKENS\tUNCERTAINTY (NATS)"
		}
		fmt.Fprintln(tw, head)
		for i, r := range rows {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s", i+1, r.Document, r.Split, r.NoteType, r.Status)
			if *modelName != "" {
				fmt.Fprintf(tw, "\t%d\t%.3f", r.Tokens, r.Uncertainty)
			}
			fmt.Fprintln(tw)
		}
		return tw.Flush()
	}
}

func setupAnnotateStatus(e *env, fs *flag.FlagSet) action {
	db, corpus, asJSON := annotateFlags(e, fs)
	batch := fs.String("batch", "", "only this assignment's sets (BATCH:ACCOUNT)")
	annotator := fs.String("annotator", "", "only this annotator's sets")
	return func(ctx context.Context, args []string) error {
		if err := needCorpus("status", *corpus, args); err != nil {
			return err
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.annotate.status", map[string]any{"corpus": *corpus})
		if err != nil {
			return err
		}
		defer st.Close()
		progress, err := st.AnnotatorsProgress(ctx, *corpus, *batch)
		if err != nil {
			return err
		}
		if *annotator != "" {
			var mine []store.AnnotatorProgress
			for _, p := range progress {
				if p.Annotator == *annotator {
					mine = append(mine, p)
				}
			}
			if len(mine) == 0 {
				return usageErr("%s has no set in corpus %q (annotate assign gives annotators notes)", *annotator, *corpus)
			}
			progress = mine
		}
		if *asJSON {
			return writeJSON(e.stdout, progress)
		}
		if len(progress) == 0 {
			fmt.Fprintf(e.stdout, "corpus %q has no annotators' sets (annotate assign makes them)\n", *corpus)
			return nil
		}
		return writeProgress(e.stdout, progress)
	}
}

func setupAnnotateAgreement(e *env, fs *flag.FlagSet) action {
	db, corpus, asJSON := annotateFlags(e, fs)
	var sets listFlag
	fs.Var(&sets, "sets", "the sets to compare (two or more with --batch's), comma-separated or repeated")
	batch := fs.String("batch", "", "compare the sets of this assignment (BATCH:ACCOUNT), with --sets' if given")
	byType := fs.Bool("by-type", false, "a row per type under each pair's")
	return func(ctx context.Context, args []string) error {
		if err := needCorpus("agreement", *corpus, args); err != nil {
			return err
		}
		if len(sets) == 0 && *batch == "" {
			return usageErr("annotate agreement needs --sets or --batch")
		}
		// The same rule as GraphQL's agreement.
		st, ctx, err := openStore(ctx, e, *db, "Query.agreement", map[string]any{"corpus": *corpus})
		if err != nil {
			return err
		}
		defer st.Close()
		if *batch != "" {
			progress, err := st.AnnotatorsProgress(ctx, *corpus, *batch)
			if err != nil {
				return err
			}
			for _, p := range progress {
				sets = append(sets, p.Set)
			}
		}
		pairs, err := st.Agreement(ctx, *corpus, sets)
		if err != nil {
			return err
		}
		type pair struct {
			A         string                   `json:"a"`
			B         string                   `json:"b"`
			Documents int                      `json:"documents"`
			Counts    evaluate.Counts          `json:"counts"`
			F1        float64                  `json:"f1"`
			ByType    []evaluate.TypeAgreement `json:"by_type"`
		}
		out := make([]pair, len(pairs))
		for i, p := range pairs {
			out[i] = pair{A: p.A, B: p.B, Documents: p.Documents, F1: p.F1, ByType: p.ByType}
			for _, t := range p.ByType {
				out[i].Counts = out[i].Counts.Add(t.Counts)
			}
		}
		if *asJSON {
			return writeJSON(e.stdout, out)
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "A\tB\tTYPE\tDOCUMENTS\tTP\tFP\tFN\tF1")
		for _, p := range out {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", p.A, p.B, "all", p.Documents, p.Counts.TP, p.Counts.FP, p.Counts.FN, f1(p.F1))
			if !*byType {
				continue
			}
			for _, t := range p.ByType {
				fmt.Fprintf(tw, "\t\t%s\t\t%d\t%d\t%d\t%s\n", t.Type, t.Counts.TP, t.Counts.FP, t.Counts.FN, f1(t.F1))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, "F1: strict (offsets and type), B scored against A over the notes both hold; the same for A against B.")
		return nil
	}
}

// f1 writes an F1 with three decimals.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
