package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"deidcorpus/apperr"
	"deidcorpus/internal/jsonmap"
	"deidcorpus/jobs"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/store"
)

// resynthReport prints the full check report of a surrogate corpus: the
// review list a curator works through when a check fails.
var resynthReport = &command{
	name:    "report",
	summary: "print a surrogate corpus's check report: counts, then every leak, misaligned span and item for review (curators; PHI, audited)",
	args:    "CORPUS [--job N] [--json]",
	examples: []string{
		"deidcorpus resynth report demo-twin",
		"deidcorpus resynth report notes-r --json > notes-r-check.json",
		"deidcorpus resynth report notes-r --job 3   # an earlier run's (each run checks the notes it wrote)",
	},
	setup: setupResynthReport,
}

// checkFailed is the error of a resynthesis whose check failed: the corpus
// is written but quarantined (no release or derived corpus takes it), the
// report says what to fix, and a curator who finds the findings may stand
// lifts the quarantine with resynth resolve. report is the job's check
// report artifact, if any.
func checkFailed(out string, check *jobs.CheckSummary, report int) error {
	var problems []string
	for _, p := range []struct {
		n    int
		what string
	}{
		{check.Leaks, "leaked originals"}, {check.Identifiers, "patient or note ids in the text"}, {check.Misaligned, "misaligned spans"},
		{check.Inconsistent, "inconsistent surrogates"}, {check.IntervalErrors, "date interval errors"},
		{check.EqualToOriginal, "surrogates equal to an original"}, {check.Metadata, "note fields that give an original away"},
		{check.Unannotated, "unannotated originals"},
	} {
		if p.n != 0 {
			problems = append(problems, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(problems) == 0 { // a summary made before the check had a kind of finding
		problems = append(problems, "see its report")
	}
	artifact := ""
	if report != 0 {
		artifact = fmt.Sprintf(" (also artifact %d, /download/artifacts/%d)", report, report)
	}
	return apperr.New(apperr.Invalid, "the surrogate corpus failed its check (%s): corpus %q was written, but it is quarantined "+
		"(no release or derived corpus takes it) until a rerun into it passes or a curator resolves the findings; "+
		"the review list (PHI, curators only): deidcorpus resynth report %s%s; once reviewed: deidcorpus resynth resolve %s --reason ...",
		strings.Join(problems, ", "), out, out, artifact, out)
}

func setupResynthReport(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	asJSON := fs.Bool("json", false, "print the whole report as JSON")
	job := fs.Int("job", 0, "the report of this run into the corpus (default: the latest run's)")
	return func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return usageErr("resynth report takes one surrogate corpus")
		}
		if *job < 0 {
			return usageErr("--job %d: a job id is a positive number", *job)
		}
		// The same rule, service and audit record as the GraphQL checkReport.
		opArgs := map[string]any{"corpus": args[0]}
		if *job > 0 {
			opArgs["job"] = *job
		}
		st, ctx, err := openStore(ctx, e, *db, "Query.checkReport", opArgs)
		if err != nil {
			return err
		}
		defer st.Close()
		file, reportJob, runs, err := st.CheckReport(ctx, args[0], *job)
		if err != nil {
			return err
		}
		if err := st.Audit(ctx, store.AuditRecord{Action: "read", Target: "Query.checkReport", IDs: []string{store.DescribeArgs(opArgs)}}); err != nil {
			return err
		}
		if *asJSON {
			// As GraphQL's checkReport: the run's job and every run's beside
			// the report, one object.
			m, err := jsonmap.Of(file)
			if err != nil {
				return err
			}
			m["job"], m["runs"] = reportJob, runs
			return writeJSON(e.stdout, m)
		}
		c, err := st.CorpusByName(ctx, args[0])
		if err != nil {
			return err
		}
		if records := corpusRuns(c.Provenance); len(records) > 1 {
			printCorpusRuns(e, args[0], records)
			fmt.Fprintf(e.stdout, "\nThe run of job %d (each run checks the notes it wrote; --job N for another's):\n", reportJob)
		}
		printCheckReport(e, args[0], &file.Report, file.Review)
		return nil
	}
}

// runRecord is what a surrogate corpus's provenance keeps of one run into
// it: the first run's record is the provenance itself, each later one's is
// in its "runs". The check holds counts only, no PHI.
type runRecord struct {
	Job   int   `json:"job"`
	Seed  int64 `json:"seed"`
	Check *struct {
		OK                                                 bool `json:"ok"`
		Documents, Spans, Replaced, Leaks, Identifiers     int
		Misaligned, Inconsistent, IntervalErrors, Metadata int
		EqualToOriginal, Unannotated, Review               int
	} `json:"check"`
}

// corpusRuns reads the runs a surrogate corpus's provenance records, oldest
// first; none when it records no check (a corpus not made by resynthesis).
func corpusRuns(prov map[string]any) []runRecord {
	all := []any{prov}
	if later, ok := prov["runs"].([]any); ok {
		all = append(all, later...)
	}
	var out []runRecord
	for _, r := range all {
		data, err := json.Marshal(r)
		var rec runRecord
		if err != nil || json.Unmarshal(data, &rec) != nil || rec.Check == nil {
			continue
		}
		out = append(out, rec)
	}
	return out
}

// printCorpusRuns describes a surrogate corpus written by several runs as a
// whole (the sums of their checks), then each run.
func printCorpusRuns(e *env, corpus string, runs []runRecord) {
	var docs, spans, replaced, findings, unannotated, review int
	ok := true
	runFindings := func(r runRecord) int {
		c := r.Check
		return c.Leaks + c.Identifiers + c.Misaligned + c.Inconsistent + c.IntervalErrors + c.Metadata
	}
	for _, r := range runs {
		c := r.Check
		docs, spans, replaced, unannotated, review = docs+c.Documents, spans+c.Spans, replaced+c.Replaced, unannotated+c.Unannotated, review+c.Review
		findings += runFindings(r)
		ok = ok && c.OK
	}
	verdict := "passed"
	if !ok {
		verdict = "FAILED"
	}
	fmt.Fprintf(e.stdout, "corpus %s, %d runs: check %s; %s, %d of %s replaced; %s; %d unannotated finds, %d for review\n",
		corpus, len(runs), verdict, counted(docs, "document"), replaced, counted(spans, "span"), counted(findings, "finding"), unannotated, review)
	tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSEED\tDOCUMENTS\tREPLACED\tFINDINGS\tCHECK")
	for _, r := range runs {
		check := "passed"
		if !r.Check.OK {
			check = "FAILED"
		}
		fmt.Fprintf(tw, "job %d\t%d\t%d\t%d of %d\t%d\t%s\n", r.Job, r.Seed, r.Check.Documents, r.Check.Replaced, r.Check.Spans, runFindings(r), check)
	}
	tw.Flush()
}

func printCheckReport(e *env, corpus string, r *surrogate.Report, review []surrogate.ReviewItem) {
	verdict := "passed"
	if !r.OK() {
		verdict = "FAILED"
	}
	fmt.Fprintf(e.stdout, "check of %s: %s\n%s, %s, %d replaced, %d dates checked; %d misaligned, %d leaks, "+
		"%d source ids, %d inconsistent, %d interval errors, %d equal to an original, %d in note fields; %d unannotated finds, %d for review\n",
		corpus, verdict, counted(r.Documents, "document"), counted(r.Spans, "span"), r.Replaced, r.DatesChecked, len(r.Misaligned), len(r.Leaks), len(r.Identifiers),
		len(r.Inconsistent), len(r.IntervalErrors), len(r.EqualToOriginal), len(r.Metadata), len(r.Unannotated), len(review))
	if len(r.Strategies) > 0 { // a report saved before the counts were kept has none
		var by []string
		for _, st := range slices.Sorted(maps.Keys(r.Strategies)) {
			by = append(by, fmt.Sprintf("%s %d", st, r.Strategies[st]))
		}
		fmt.Fprintf(e.stdout, "replaced by strategy: %s\n", strings.Join(by, ", "))
	}
	section := func(title, header string, n int, row func(tw *tabwriter.Writer, i int)) {
		if n == 0 {
			return
		}
		fmt.Fprintf(e.stdout, "\n%s (%d):\n", title, n)
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, header)
		for i := 0; i < n; i++ {
			row(tw, i)
		}
		tw.Flush()
	}
	section("Leaks: a replaced original found in the output", "DOCUMENT\tPATIENT\tTYPE\tAT\tVALUE", len(r.Leaks), func(tw *tabwriter.Writer, i int) {
		l := r.Leaks[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d-%d\t%q\n", l.Doc, l.Patient, l.Type, l.Start, l.End, l.Value)
	})
	section("Identifiers: the source's patient or note id in the text", "DOCUMENT\tPATIENT\tKIND\tID\tAT\tVALUE", len(r.Identifiers),
		func(tw *tabwriter.Writer, i int) {
			l := r.Identifiers[i]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d-%d\t%q\n", l.Doc, l.Patient, l.Kind, l.ID, l.Start, l.End, l.Value)
		})
	section("Misaligned spans: the span's text is not the text at its offsets", "DOCUMENT\tTYPE\tAT\tSPAN TEXT\tTEXT AT OFFSETS", len(r.Misaligned), func(tw *tabwriter.Writer, i int) {
		m := r.Misaligned[i]
		fmt.Fprintf(tw, "%s\t%s\t%d-%d\t%q\t%q\n", m.Doc, m.Type, m.Start, m.End, m.Text, m.AtOffsets)
	})
	section("Inconsistent: one original, several surrogates", "SCOPE\tTYPE\tORIGINAL\tSURROGATES", len(r.Inconsistent), func(tw *tabwriter.Writer, i int) {
		c := r.Inconsistent[i]
		fmt.Fprintf(tw, "%s\t%s\t%q\t%s\n", c.Scope, c.Type, c.Original, strings.Join(c.Surrogates, " | "))
	})
	problems := func(ps []surrogate.SurrogateProblem) func(tw *tabwriter.Writer, i int) {
		return func(tw *tabwriter.Writer, i int) {
			p := ps[i]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%q\t%q\t%q\n", p.Doc, p.Patient, p.Type, p.Original, p.Surrogate, p.Want)
		}
	}
	section("Interval errors: a shifted date that is not the original moved by the patient's shift",
		"DOCUMENT\tPATIENT\tTYPE\tORIGINAL\tSURROGATE\tEXPECTED", len(r.IntervalErrors), problems(r.IntervalErrors))
	section("Surrogates equal to an original of their patient",
		"DOCUMENT\tPATIENT\tTYPE\tORIGINAL\tSURROGATE\tEXPECTED", len(r.EqualToOriginal), problems(r.EqualToOriginal))
	section("Note fields: a creation date, note type or span comment that gives an original away",
		"DOCUMENT\tPATIENT\tFIELD\tPROBLEM", len(r.Metadata), func(tw *tabwriter.Writer, i int) {
			m := r.Metadata[i]
			field := m.Field
			if m.Field == "comment" {
				field = fmt.Sprintf("comment of span %d", m.Span+1)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Doc, m.Patient, field, m.Problem)
		})
	section("Unannotated: an original in text copied unchanged (a span missing in the source)",
		"DOCUMENT\tPATIENT\tTYPE\tAT IN THE SOURCE\tAT IN THE SURROGATE\tVALUE",
		len(r.Unannotated), func(tw *tabwriter.Writer, i int) {
			l := r.Unannotated[i]
			src := "-" // a report from before source offsets were kept
			if l.SourceEnd > 0 {
				src = fmt.Sprintf("%d-%d", l.SourceStart, l.SourceEnd)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d-%d\t%q\n", l.Doc, l.Patient, l.Type, src, l.Start, l.End, l.Value)
		})
	section("Incoherent: surrogate parts of a note that disagree where the original's agreed", "DOCUMENT\tKIND\tAT\tPARTS",
		len(r.Incoherent), func(tw *tabwriter.Writer, i int) {
			in := r.Incoherent[i]
			fmt.Fprintf(tw, "%s\t%s\t%d-%d\t%q\n", in.Doc, in.Kind, in.Start, in.End, in.Parts)
		})
	section("For review", "DOCUMENT\tAT\tTYPE\tORIGINAL\tSURROGATE\tREASON", len(review), func(tw *tabwriter.Writer, i int) {
		v := review[i]
		sur := fmt.Sprintf("%q", v.Surrogate)
		if v.Kept {
			sur = "(kept)"
		}
		fmt.Fprintf(tw, "%s\t%d-%d\t%s\t%q\t%s\t%s\n", v.Doc, v.Start, v.End, v.Type, v.Original, sur, v.Reason)
	})
}
