package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"deidcorpus/ent"
	"deidcorpus/pipeline/evaluate"
)

// storedEvalCommands are eval's subcommands: the stored evaluations (of
// evaluation and tagging jobs), where eval itself scores files.
func storedEvalCommands() []*command {
	return []*command{{
		name:    "list",
		summary: "list the stored evaluations (made by evaluation and tagging jobs), newest first: sets, metric, P, R, F1",
		args:    "[--corpus NAME] [--limit 50] [--json]",
		examples: []string{
			"deidcorpus eval list",
			"deidcorpus eval list --corpus meddocan --json",
		},
		setup: setupEvalList,
	}, {
		name:    "show",
		summary: "print a stored evaluation: the scorer's report, per-type scores, confusion matrix, error taxonomy and token accuracy",
		args:    "ID [--json]",
		examples: []string{
			"deidcorpus eval show 7",
			"deidcorpus eval show 7 --json",
		},
		setup: setupEvalShow,
	}}
}

// storedEvaluation is what eval list and show --json print of one evaluation.
type storedEvaluation struct {
	ID        int              `json:"id"`
	Corpus    string           `json:"corpus"`
	Gold      string           `json:"gold"`
	System    string           `json:"system"`
	Metric    string           `json:"metric"`
	Precision float64          `json:"precision"`
	Recall    float64          `json:"recall"`
	F1        float64          `json:"f1"`
	JobID     *int             `json:"jobID,omitempty"`
	CreatedBy string           `json:"createdBy,omitempty"`
	CreatedAt time.Time        `json:"createdAt"`
	Report    *evaluate.Report `json:"report,omitempty"`
}

func storedOf(ev *ent.Evaluation) storedEvaluation {
	s := storedEvaluation{ID: ev.ID, Gold: ev.GoldSet, System: ev.SystemSet, Metric: ev.Metric, Precision: ev.Precision,
		Recall: ev.Recall, F1: ev.F1, JobID: ev.JobID, CreatedBy: ev.CreatedBy, CreatedAt: ev.CreatedAt}
	if ev.Edges.Corpus != nil {
		s.Corpus = ev.Edges.Corpus.Name
	}
	return s
}

func setupEvalList(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "only the evaluations of this corpus")
	limit := fs.Int("limit", 50, "at most this many (0: all)")
	asJSON := fs.Bool("json", false, "print the list as JSON")
	return func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usageErr("eval list takes no arguments (eval show ID prints one)")
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.evaluations", map[string]any{"corpus": *corpus})
		if err != nil {
			return err
		}
		defer st.Close()
		evs, err := st.Evaluations(ctx, *corpus, *limit)
		if err != nil {
			return err
		}
		list := make([]storedEvaluation, len(evs))
		for i, ev := range evs {
			list[i] = storedOf(ev)
		}
		if *asJSON {
			return writeJSON(e.stdout, list)
		}
		if len(list) == 0 {
			fmt.Fprintln(e.stdout, "no stored evaluations (an evaluation job, or tagging a corpus with gold, makes one)")
			return nil
		}
		f4 := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tCORPUS\tSYSTEM\tGOLD\tMETRIC\tP\tR\tF1\tJOB\tCREATED")
		for _, s := range list {
			job := "-"
			if s.JobID != nil {
				job = strconv.Itoa(*s.JobID)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Corpus, s.System, s.Gold, s.Metric,
				f4(s.Precision), f4(s.Recall), f4(s.F1), job, s.CreatedAt.Format("2006-01-02 15:04"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, "P, R and F1: strict entity micro scores (i2b2), or the metric's headline (MEDDOCAN subtask 1, PhysioNet overlap)")
		return nil
	}
}

func setupEvalShow(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	asJSON := fs.Bool("json", false, "print the evaluation and its whole report as JSON")
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return usageErr("eval show takes one evaluation id (eval list shows them)")
		}
		id, err := strconv.Atoi(args[0])
		if err != nil {
			return usageErr("evaluation id %q is not a number", args[0])
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.evaluations", map[string]any{})
		if err != nil {
			return err
		}
		defer st.Close()
		ev, err := st.Evaluation(ctx, id)
		if err != nil {
			return err
		}
		report, err := st.EvaluationReport(ev)
		if err != nil {
			return err
		}
		s := storedOf(ev)
		if *asJSON {
			s.Report = report
			return writeJSON(e.stdout, s)
		}
		made := ""
		if s.JobID != nil {
			made = fmt.Sprintf(" by job %d", *s.JobID)
		}
		fmt.Fprintf(e.stdout, "evaluation %d: %s against %s on corpus %s (metric %s), %s, made%s on %s\n\n",
			s.ID, s.System, s.Gold, s.Corpus, s.Metric, counted(report.Documents, "document"), made, s.CreatedAt.Format("2006-01-02 15:04"))
		if err := evaluate.Render(e.stdout, report, false); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout)
		return evaluate.RenderAnalysis(e.stdout, report)
	}
}
