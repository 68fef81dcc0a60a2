package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/formats"
)

func init() {
	register(&command{
		name:    "eval",
		summary: "score system annotations against gold ones, from files, without a database (i2b2 2014, MEDDOCAN, PhysioNet scorers); list and show the stored evaluations",
		args:    "--gold PATH --system PATH [--format i2b2] [--metric i2b2|meddocan|physionet] [-v] [--json] [--analysis] [--compare PATH]",
		examples: []string{
			"deidcorpus eval --gold gold/ --system system/",
			"deidcorpus eval --gold gold/ --system crf1/ --compare crf2/ --analysis",
		},
		setup: setupEval,
		subs:  storedEvalCommands(),
	})
}

// evalOutput is what --json prints.
type evalOutput struct {
	Report     *evaluate.Report     `json:"report"`
	Comparison *evaluate.Comparison `json:"comparison,omitempty"`
}

func setupEval(e *env, fs *flag.FlagSet) action {
	gold := fs.String("gold", "", "gold annotations: a file, a directory or a .zip")
	system := fs.String("system", "", "system annotations: a file, a directory or a .zip")
	format := fs.String("format", formats.Default, "file format of both sets ("+strings.Join(formats.Names(), ", ")+")")
	metric := fs.String("metric", "", "headline scorer: i2b2, meddocan or physionet (default physionet for the physionet format, meddocan for gold of MEDDOCAN's labels, else i2b2)")
	verbose := fs.Bool("v", false, "per-document scores, as the i2b2 script's -v")
	asJSON := fs.Bool("json", false, "print every figure as JSON")
	hipaaOnly := fs.Bool("hipaa", false, "restrict the analyses (per type, confusion, errors, accuracy) to HIPAA tags")
	paperHIPAA := fs.Bool("paper-hipaa", false, "use the paper's HIPAA list (with IDNUM) instead of the official script's")
	analysis := fs.Bool("analysis", false, "after the scorer's report, print per-type scores, confusion matrix, error taxonomy and token accuracy")
	compare := fs.String("compare", "", "a second system to test against --system for significance (approximate randomization, bootstrap)")
	shuffles := fs.Int("shuffles", 9999, "approximate randomization shuffles (with --compare)")
	bootstrap := fs.Int("bootstrap", 1000, "bootstrap resamples (with --compare)")
	compareMode := fs.String("compare-mode", "strict", "matching for --compare: token, strict or relaxed")
	seed := fs.Uint64("seed", 1, "random seed (with --compare)")
	return func(ctx context.Context, args []string) error {
		switch evaluate.Mode(*compareMode) {
		case evaluate.Token, evaluate.Strict, evaluate.Relaxed:
		default:
			return usageErr("--compare-mode %q: want token, strict or relaxed", *compareMode)
		}
		if *gold == "" || *system == "" {
			return usageErr("both --gold and --system are required")
		}
		if len(args) > 0 {
			return usageErr("unexpected arguments: %s", strings.Join(args, " "))
		}
		f, err := formatFlag(*format)
		if err != nil {
			return err
		}
		m := evaluate.Metric(*metric)
		if m != "" && !slices.Contains(evaluate.Metrics(), m) {
			return usageErr("--metric %q: want i2b2, meddocan or physionet", *metric)
		}
		golds, err := readDocuments(f, *gold)
		if err != nil {
			return err
		}
		if m == "" {
			m = evaluate.MetricOf(golds)
			if f.Name == "physionet" {
				m = evaluate.MetricPhysioNet
			}
		}
		systems, err := readDocuments(f, *system)
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		report, err := evaluate.Evaluate(golds, systems, evaluate.Options{Metric: m, PaperHIPAA: *paperHIPAA, HIPAAOnly: *hipaaOnly})
		if err != nil {
			return evalError(err)
		}
		if report.Documents == 0 { // mismatched directories, not a system that found nothing
			return apperr.New(apperr.Invalid, "no document to score: gold %s (%s: %s) and system %s (%s: %s) share no document id",
				*gold, counted(len(report.GoldOnly), "document"), someIDs(report.GoldOnly),
				*system, counted(len(report.SystemOnly), "document"), someIDs(report.SystemOnly))
		}
		// As the i2b2 script does, only documents on both sides are scored;
		// said on stderr, so that stdout stays the script's.
		warnUnpaired(e.stderr, "gold", "system output", report.GoldOnly)
		// A system document without spans that the gold does not list is
		// a note without PHI on either side (PhysioNet's gold lists only
		// notes with PHI): nothing to score, and nothing wrong.
		blank, unpaired := withoutSpans(report.SystemOnly, systems)
		warnUnpaired(e.stderr, "system", "gold", unpaired)
		if len(blank) > 0 {
			fmt.Fprintf(e.stderr, "deidcorpus eval: %s without PHI on either side (the gold does not list them, the system found none): nothing to score there\n",
				counted(len(blank), "note"))
		}
		out := evalOutput{Report: report}
		if *compare != "" {
			others, err := readDocuments(f, *compare)
			if err != nil {
				return err
			}
			out.Comparison, err = evaluate.Compare(golds, systems, others, evaluate.CompareOptions{
				Mode: evaluate.Mode(*compareMode), Shuffles: *shuffles, Bootstrap: *bootstrap, Seed: *seed, PaperHIPAA: *paperHIPAA})
			if err != nil {
				return evalError(err)
			}
		}
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		}
		if err := evaluate.Render(e.stdout, report, *verbose); err != nil {
			return err
		}
		if *analysis {
			if err := evaluate.RenderAnalysis(e.stdout, report); err != nil {
				return err
			}
		}
		if out.Comparison != nil {
			fmt.Fprintln(e.stdout)
			return evaluate.RenderComparison(e.stdout, out.Comparison)
		}
		return nil
	}
}

// warnUnpaired says which documents of one side eval left out for want of
// the other side's: the first five ids.
func warnUnpaired(w io.Writer, side, lacking string, ids []string) {
	if len(ids) == 0 {
		return
	}
	fmt.Fprintf(w, "deidcorpus eval: not scored, for want of %s: %s (%s)\n", lacking, counted(len(ids), side+" document"), someIDs(ids))
}

// withoutSpans splits ids into those of docs without spans and the others.
func withoutSpans(ids []string, docs []pipeline.Document) (blank, others []string) {
	spans := map[string]int{}
	for _, d := range docs {
		spans[d.ID] = len(d.Spans)
	}
	for _, id := range ids {
		if spans[id] == 0 {
			blank = append(blank, id)
		} else {
			others = append(others, id)
		}
	}
	return blank, others
}

// someIDs lists the first five document ids.
func someIDs(ids []string) string {
	shown := strings.Join(ids[:min(len(ids), 5)], ", ")
	if len(ids) > 5 {
		shown += ", ..."
	}
	return shown
}

// readDocuments reads the documents of p (a file, directory or .zip) with
// their spans. System output may overlap, and gold sets sometimes do
// (PhysioNet's does), so overlaps are accepted. Input that holds no file of
// the format is named, with the formats that read what it holds.
func readDocuments(f *formats.Format, p string) ([]pipeline.Document, error) {
	files, err := readFiles(p)
	if err != nil {
		return nil, err
	}
	var docs []pipeline.Document
	err = f.Scan(formats.Files(files), formats.ReadOptions{AllowOverlap: true}, func(d pipeline.Document) error {
		docs = append(docs, d)
		return nil
	})
	if errors.Is(err, formats.ErrNoDocuments) {
		return nil, apperr.New(apperr.Invalid, "%s: no %s documents", p, f.Name)
	}
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err)
	}
	return docs, nil
}

func evalError(err error) error {
	if errors.Is(err, evaluate.ErrInput) {
		return apperr.Wrap(apperr.Invalid, err)
	}
	return err
}
