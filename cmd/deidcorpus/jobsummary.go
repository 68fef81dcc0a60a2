package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"deidcorpus/ent"
	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/experiment"
)

// summarize writes what a finished job made, for a person: its result read
// as its kind's type (--json gives the job whole). A job that did not
// succeed, or has no result, writes nothing.
func summarize(w io.Writer, j *ent.Job) error {
	res, err := jobs.ResultOf(j)
	if err != nil || res == nil {
		return err
	}
	switch r := res.(type) {
	case *jobs.ImportResult:
		into := "existing corpus"
		if r.CreatedCorpus {
			into = "new corpus"
		}
		fmt.Fprintf(w, "imported %s and %s (%s) into %s %q", counted(r.Documents, "document"), counted(r.Spans, "span"), r.Format, into, r.CorpusName)
		if r.Replaced > 0 {
			fmt.Fprintf(w, ", %d replaced", r.Replaced)
		}
		if r.Skipped > 0 {
			fmt.Fprintf(w, "; %s skipped", counted(r.Skipped, "file"))
		}
		fmt.Fprintln(w)
		if len(r.Ignored) > 0 {
			fmt.Fprintln(w, notKept(r.Ignored))
		}
	case *jobs.DeriveResult:
		dropped := ""
		if r.Dropped > 0 {
			dropped = fmt.Sprintf(" (%d dropped by the mapping)", r.Dropped)
		}
		fmt.Fprintf(w, "derived %q with mapping %s: %s, %s%s\n", r.CorpusName, r.Mapping, counted(r.Documents, "document"), counted(r.Spans, "span"), dropped)
	case *jobs.ExportResult:
		fmt.Fprintf(w, "exported %s as a zip archive (%d bytes, sha256 %s): artifact %d, at /download/artifacts/%d\n",
			counted(r.Files, "file"), r.Bytes, r.Sha256, r.Artifact, r.Artifact)
	case *jobs.EvaluateResult:
		fmt.Fprintf(w, "evaluation %d of %s: strict micro P %.4f R %.4f F1 %.4f\n", r.Evaluation, counted(r.Documents, "document"), r.Precision, r.Recall, r.F1)
	case *jobs.TrainResult:
		m := r.Metrics
		fmt.Fprintf(w, "trained model %q (hash %s) in job %d: %s, %s, %s; %s, %d features; %d iterations, loss %.1f; %s\n",
			r.ModelName, r.Hash, j.ID, counted(m.Documents, "document"), counted(m.Tokens, "token"), counted(m.Spans, "span"),
			counted(m.Attributes, "attribute"), m.Features, m.Iterations, m.Loss, seconds(m.Seconds))
		if m.Uncalibrated != "" {
			fmt.Fprintf(w, "not calibrated: %s\n", m.Uncalibrated)
		}
	case *jobs.TagResult:
		summarizeTag(w, j, r)
	case *jobs.ExperimentResult:
		if r.RiskFigures != nil {
			return experiment.RenderRisk(w, &experiment.RiskResult{Kind: r.Kind, Seed: r.Seed, Bootstrap: r.Bootstrap,
				Confidence: r.Confidence, RiskFigures: *r.RiskFigures, Seconds: r.Seconds})
		}
		return experiment.RenderMarkdown(w, &r.Result)
	case *jobs.ResynthesizeResult:
		summarizeResynth(w, j, r)
	case *jobs.PingResult:
		fmt.Fprintf(w, "pong: %v\n", r.Pong)
	case *jobs.CalibrateResult:
		summarizeCalibration(w, r)
	case *jobs.DeidentifyResult:
		summarizeDeidentify(w, j, r)
	}
	return nil
}

func summarizeTag(w io.Writer, j *ent.Job, r *jobs.TagResult) {
	fmt.Fprintf(w, "tagged %s into set %s (job %d)", counted(r.Documents, "document"), r.SetName, j.ID)
	if r.F1 != nil && r.Precision != nil && r.Recall != nil && r.Evaluation != nil {
		fmt.Fprintf(w, "; against gold: strict micro P %.4f R %.4f F1 %.4f (evaluation %d)", *r.Precision, *r.Recall, *r.F1, *r.Evaluation)
	}
	fmt.Fprintln(w)
	if len(r.Curve) > 0 {
		fmt.Fprintln(w, "recall bias  precision  recall      F1")
		for _, pt := range r.Curve {
			fmt.Fprintf(w, "%11g  %9.4f  %6.4f  %.4f\n", pt.Bias, pt.Precision, pt.Recall, pt.F1)
		}
	}
}

func summarizeResynth(w io.Writer, j *ent.Job, r *jobs.ResynthesizeResult) {
	out := r.CorpusName
	if out == "" {
		out, _ = j.Params["out"].(string)
	}
	fmt.Fprintf(w, "resynthesized %s into %q (job %d)", counted(r.Documents, "document"), out, j.ID)
	if r.Message != "" {
		fmt.Fprintf(w, ": %s", r.Message)
	}
	fmt.Fprintln(w)
	for _, u := range r.Reused {
		fmt.Fprintf(w, "reused %d mappings and %d date shifts of job %d (seed %s, %s), not drawn from seed %s\n",
			u.Mappings, u.Shifts, u.Job, number(u.Seed), u.Out, number(j.Params["seed"]))
	}
	c := r.Check
	if c == nil {
		return
	}
	fmt.Fprintf(w, "check: ok=%v, %d spans, %d replaced, %d misaligned, %d leaks, %d source ids, %d inconsistent, %d interval errors, "+
		"%d dates checked, %d unannotated, %d propagated, %d for review\n",
		c.OK, c.Spans, c.Replaced, c.Misaligned, c.Leaks, c.Identifiers, c.Inconsistent, c.IntervalErrors, c.DatesChecked,
		c.Unannotated, c.Propagated, c.Review)
	if c.Unannotated > 0 {
		fmt.Fprintf(w, "%s: original values outside the gold spans, copied unchanged (the source's annotation missed them); "+
			"see them with: deidcorpus resynth report %s\n", counted(c.Unannotated, "unannotated find"), out)
	}
	// Unannotated finds pass the check but quarantine the corpus.
	if !c.OK || j.Status == job.StatusCheckFailed {
		fmt.Fprintf(w, "job %d: check failed; %q is quarantined (%s) until a rerun into it passes or a curator runs: deidcorpus resynth resolve %s --reason ...\n",
			j.ID, out, counted(r.CheckFindings, "unresolved finding"), out)
	}
}

// seconds writes a duration in seconds as people read it: "42 s", "2 min 24 s".
func seconds(s float64) string {
	if s < 60 {
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%d min %d s", int(s)/60, int(s)%60)
}

// describeJob writes a job's state for a person: kind, status, progress,
// who queued it and when, its error, then what it made (summarize).
func describeJob(w io.Writer, j *ent.Job) error {
	fmt.Fprintf(w, "job %d (%s): %s", j.ID, j.Kind, strings.ReplaceAll(string(j.Status), "_", " "))
	if j.CancelRequested && (j.Status == job.StatusQueued || j.Status == job.StatusRunning) {
		fmt.Fprint(w, ", cancel requested")
	}
	fmt.Fprintln(w)
	if line := progressLine(j); line != "" && j.Status == job.StatusRunning {
		fmt.Fprintf(w, "progress: %s\n", line)
	}
	fmt.Fprintf(w, "queued by %s at %s", j.CreatedBy, j.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	if j.Attempts > 1 {
		fmt.Fprintf(w, "; %d attempts", j.Attempts)
	}
	fmt.Fprintln(w)
	if j.Error != "" {
		fmt.Fprintf(w, "error: %s\n", j.Error)
	}
	return summarize(w, j)
}

// progressLine is a job's progress as the dashboard shows it: the share done
// and what the job says it is doing ("42% iteration 67 of at most 150, loss
// 625.9").
func progressLine(j *ent.Job) string {
	var parts []string
	if j.ProgressTotal > 0 {
		parts = append(parts, fmt.Sprintf("%d%%", 100*min(j.ProgressDone, j.ProgressTotal)/j.ProgressTotal))
	}
	if j.Message != "" {
		parts = append(parts, j.Message)
	}
	return strings.Join(parts, " ")
}

// jsonFlag adds --json to a command that waits for its job.
func jsonFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("json", false, "print the finished job whole as JSON (as jobs show --json does) instead of a summary")
}

// finished prints the job a command waited for: its summary, or with
// asJSON the job whole.
func finished(e *env, j *ent.Job, asJSON bool) error {
	if asJSON {
		return writeJSON(e.stdout, j)
	}
	return summarize(e.stdout, j)
}

// summarizeCalibration writes a calibrated model's threshold and its
// held-out risk at each point.
func summarizeCalibration(w io.Writer, r *jobs.CalibrateResult) {
	c := r.Calibration
	fmt.Fprintf(w, "calibrated model %q on %d patient folds: privacy threshold %g for a recall of PHI characters of %g (%s)\n",
		r.Model, c.Folds, c.Threshold, c.TargetRecall, seconds(c.Seconds))
	for _, h := range c.Risk {
		fmt.Fprintf(w, "%-8s  recall %.4f, span precision %.4f; %.1f values leaked per 1,000; notes with a leak %.1f%%, with a direct identifier %.1f%%\n",
			h.Point, h.CharRecall, h.SpanPrecision, h.ValuesLeakedPer1000, 100*h.NoteLeakRate, 100*h.NoteDirectRate)
	}
}
