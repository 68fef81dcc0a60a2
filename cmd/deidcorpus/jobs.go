package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/job"
	"deidcorpus/jobs"
	"deidcorpus/store"
)

func init() {
	register(&command{
		name:    "jobs",
		summary: "background jobs: list, show, cancel, retry or wait for them",
		subs: []*command{{
			name:    "list",
			summary: "list jobs, newest first, with their status and progress",
			args:    "[--status STATUS] [--kind KIND] [--limit 50] [--json]",
			examples: []string{
				"deidcorpus jobs list --status running",
				"deidcorpus jobs list --status failed --json",
				"deidcorpus jobs list --kind train --limit 10",
			},
			setup: setupJobsList,
		}, {
			name:     "show",
			summary:  "print one job (by the dashboard's short number or its full id): its status, progress, error and what it made (--json: the job whole)",
			args:     "ID [--json]",
			examples: []string{"deidcorpus jobs show 42", "deidcorpus jobs show 21474836522 --json"},
			setup:    setupJobsOne("show"),
		}, {
			name:     "cancel",
			summary:  "cancel a queued or running job (it stops within a second, leaving no partial output)",
			args:     "ID [--json]",
			examples: []string{"deidcorpus jobs cancel 42"},
			setup:    setupJobsOne("cancel"),
		}, {
			name:     "retry",
			summary:  "queue a failed or cancelled job again",
			args:     "ID [--json]",
			examples: []string{"deidcorpus jobs retry 42"},
			setup:    setupJobsOne("retry"),
		}, {
			name:    "wait",
			summary: "wait until jobs finish; if one did not succeed, exit with its failure's status (2 for bad input, 1 internal)",
			args:    "ID... | --all [--json]",
			examples: []string{
				"deidcorpus jobs wait 42 43",
				"deidcorpus jobs wait --all",
			},
			setup: setupJobsWait,
		}},
	})
	register(&command{
		name:    "worker",
		summary: "work background jobs without the HTTP server (on this or other machines)",
		args:    "[--db DSN] [--concurrency 2] [--stale-after 15s]",
		examples: []string{
			"deidcorpus worker --concurrency 4",
			"deidcorpus worker --db postgres://deid@db/deid",
		},
		setup: setupWorker,
	})
}

// workerFlags adds the flags of processes that work jobs.
func workerFlags(fs *flag.FlagSet) (concurrency *int, staleAfter *time.Duration) {
	concurrency = fs.Int("concurrency", 2, "jobs this process runs at once")
	staleAfter = fs.Duration("stale-after", 15*time.Second, "requeue a running job whose worker sent no heartbeat for this long")
	return
}

// openServing opens the store for a long-running process (serve, worker),
// with JSON logs, and says where the mapping keys come from.
func openServing(ctx context.Context, e *env, dsn string, logFormat string) (*store.Store, *slog.Logger, error) {
	logger, err := newLogger(e.stderr, logFormat)
	if err != nil {
		return nil, nil, err
	}
	st, err := openDB(ctx, e, dsn, logger)
	if err != nil {
		return nil, nil, err
	}
	if err := announceKeys(st, logger); err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, logger, nil
}

// logFormatFlag is --log-format of the commands that serve.
func logFormatFlag(fs *flag.FlagSet) *string {
	return fs.String("log-format", "text", "log lines as text (key=value) or json (one object a line, for a log collector)")
}

// newLogger writes log lines to w in the format --log-format names.
func newLogger(w io.Writer, format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, usageErr("--log-format: %q is neither text nor json", format)
}

func openManager(ctx context.Context, st *store.Store, logger *slog.Logger, work bool, concurrency int, staleAfter time.Duration) (*jobs.Manager, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return jobs.New(ctx, st, jobs.Handlers(), jobs.Options{
		Work: work, Concurrency: concurrency, StaleAfter: staleAfter, Logger: logger,
	})
}

func setupWorker(e *env, fs *flag.FlagSet) action {
	db := serviceDBFlag(fs, e)
	logFormat := logFormatFlag(fs)
	concurrency, staleAfter := workerFlags(fs)
	return func(ctx context.Context, args []string) error {
		st, logger, err := openServing(ctx, e, *db, *logFormat)
		if err != nil {
			return err
		}
		defer st.Close()
		m, err := openManager(ctx, st, logger, true, *concurrency, *staleAfter)
		if err != nil {
			return err
		}
		if err := m.Start(ctx); err != nil {
			return err
		}
		logger.Info("worker started", "db", st.Dialect, "concurrency", *concurrency)
		fmt.Fprintf(e.stderr, "deidcorpus worker running (%d at a time); Ctrl-C to stop\n", *concurrency)
		<-ctx.Done()
		return m.Stop(context.Background())
	}
}

// openJobs opens the store and the job manager for a jobs subcommand,
// turning the short job numbers among ids into job ids; one job's id is
// checked against what the viewer may change.
func openJobs(ctx context.Context, e *env, db, sub string, ids []int) (*store.Store, context.Context, *jobs.Manager, error) {
	op, opArgs := "cli.jobs", map[string]any{"subcommand": sub}
	if (sub == "cancel" || sub == "retry") && len(ids) == 1 {
		op, opArgs["id"] = "cli.jobs.change", ids[0]
	}
	st, ctx, err := openStore(ctx, e, db, op, opArgs)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := st.JobIDs(ctx, ids); err != nil { // the dashboard's short numbers, in place
		st.Close()
		return nil, nil, nil, err
	}
	m, err := openManager(ctx, st, nil, false, 0, 0)
	if err != nil {
		st.Close()
		return nil, nil, nil, err
	}
	return st, ctx, m, nil
}

func setupJobsList(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	status := fs.String("status", "", "only jobs with this status (queued, running, succeeded, failed, cancelled, check_failed)")
	kind := fs.String("kind", "", "only jobs of this kind ("+strings.Join(jobs.Kinds(), ", ")+")")
	limit := fs.Int("limit", 50, "at most this many jobs, newest first")
	asJSON := fs.Bool("json", false, "print the jobs whole, as JSON, as jobs show does (parameters, result)")
	return func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usageErr("jobs list takes no arguments (see --status, --kind)")
		}
		if *kind != "" && !slices.Contains(jobs.Kinds(), *kind) {
			return usageErr("unknown job kind %q (%s)", *kind, strings.Join(jobs.Kinds(), ", "))
		}
		f := store.JobFilter{Kind: *kind, Limit: *limit}
		if *status != "" {
			if err := job.StatusValidator(job.Status(*status)); err != nil {
				return usageErr("unknown status %q (queued, running, succeeded, failed, cancelled, check_failed)", *status)
			}
			f.Status = []job.Status{job.Status(*status)}
		}
		st, ctx, _, err := openJobs(ctx, e, *db, "list", nil)
		if err != nil {
			return err
		}
		defer st.Close()
		js, err := st.Jobs(ctx, f)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(e.stdout, js)
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tPROGRESS\tATTEMPTS\tCREATED\tMESSAGE")
		for _, j := range js {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", j.ID, j.Kind, j.Status, progressText(j), j.Attempts,
				j.CreatedAt.Format(time.DateTime), firstNonEmpty(j.Error, j.Message))
		}
		return tw.Flush()
	}
}

// setupJobsOne is show, cancel and retry: one job, described after (as
// JSON with --json).
func setupJobsOne(sub string) func(e *env, fs *flag.FlagSet) action {
	return func(e *env, fs *flag.FlagSet) action {
		db := dbFlag(fs, e)
		asJSON := fs.Bool("json", false, "print the job whole as JSON: parameters, progress, result, error")
		return func(ctx context.Context, args []string) error {
			ids, err := jobIDs(args)
			if err != nil {
				return err
			}
			if len(ids) != 1 {
				return usageErr("jobs %s takes one job id", sub)
			}
			st, ctx, m, err := openJobs(ctx, e, *db, sub, ids)
			if err != nil {
				return err
			}
			defer st.Close()
			var j *ent.Job
			switch sub {
			case "show":
				j, err = m.Get(ctx, ids[0])
			case "cancel":
				j, err = m.Cancel(ctx, ids[0])
			case "retry":
				j, err = m.Retry(ctx, ids[0])
			}
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(e.stdout, j)
			}
			return describeJob(e.stdout, j)
		}
	}
}

func setupJobsWait(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	all := fs.Bool("all", false, "every unfinished job")
	asJSON := fs.Bool("json", false, "print the finished jobs whole, as a JSON array")
	return func(ctx context.Context, args []string) error {
		ids, err := jobIDs(args)
		if err != nil {
			return err
		}
		if (len(ids) == 0) != *all {
			return usageErr("jobs wait takes job ids or --all")
		}
		st, ctx, m, err := openJobs(ctx, e, *db, "wait", ids)
		if err != nil {
			return err
		}
		defer st.Close()
		if *all {
			live, err := st.Jobs(ctx, store.JobFilter{Status: []job.Status{job.StatusQueued, job.StatusRunning}})
			if err != nil {
				return err
			}
			for _, j := range live {
				ids = append(ids, j.ID)
			}
			if len(ids) == 0 {
				return nil
			}
		}
		stop := warnWhileQueued(ctx, e, st, ids)
		js, err := m.Wait(ctx, ids)
		stop()
		if err != nil {
			return err
		}
		return reportFinished(e, js, *asJSON)
	}
}

// queuedNotice is how long jobs wait lets a job stay queued before it says
// that something must work it.
var queuedNotice = 10 * time.Second

// warnWhileQueued says once, on stderr, when a job waited for is still
// queued after queuedNotice: jobs wait only waits, and nothing works the jobs
// of a database unless a server or a worker runs on it. stop ends the watch
// and returns once nothing more will be written.
func warnWhileQueued(ctx context.Context, e *env, st *store.Store, ids []int) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			return
		case <-time.After(queuedNotice):
		}
		for _, id := range ids {
			if j, err := st.Job(ctx, id); err == nil && j.Status == job.StatusQueued {
				fmt.Fprintf(e.stderr, "deidcorpus: job %d is still queued after %s; is a server (deidcorpus serve) "+
					"or a worker (deidcorpus worker) running on this database? jobs wait only waits\n", id, queuedNotice)
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// reportFinished prints each finished job (its status and what it made, as
// the command that ran it prints it; the jobs whole with asJSON) and fails if
// one did not succeed, with the first failure's code (so its exit status).
func reportFinished(e *env, js []*ent.Job, asJSON bool) error {
	var notOK []string // "failed: 7", "cancelled: 5"
	var first error
	if asJSON {
		if err := writeJSON(e.stdout, js); err != nil {
			return err
		}
	}
	for _, j := range js {
		if !asJSON {
			fmt.Fprintf(e.stdout, "job %d (%s): %s", j.ID, j.Kind, j.Status)
			if j.Error != "" {
				fmt.Fprintf(e.stdout, ": %s", j.Error)
			}
			fmt.Fprintln(e.stdout)
			// A result that cannot be read (an older version's) stops no
			// other report.
			if err := summarize(e.stdout, j); err != nil {
				fmt.Fprintf(e.stderr, "job %d: its result cannot be summarized (%v); deidcorpus jobs show %d --json has it whole\n", j.ID, err, j.ID)
			}
		}
		if err := jobs.Err(j); err != nil {
			notOK = append(notOK, fmt.Sprintf("%s: %d", j.Status, j.ID))
			if first == nil {
				first = err
			}
		}
	}
	if len(notOK) > 0 {
		return apperr.New(apperr.CodeOf(first), "not every job succeeded (%s)", strings.Join(notOK, "; "))
	}
	return nil
}

func jobIDs(args []string) ([]int, error) {
	ids := make([]int, len(args))
	for i, a := range args {
		id, err := strconv.Atoi(a)
		if err != nil {
			return nil, usageErr("job id %q is not a number", a)
		}
		ids[i] = id
	}
	return ids, nil
}

func progressText(j *ent.Job) string {
	if j.ProgressTotal <= 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", j.ProgressDone, j.ProgressTotal)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// printQueued says that a job was queued, what runs it and how to follow it.
func printQueued(e *env, id int, what string) {
	fmt.Fprintf(e.stdout, "job %d queued (%s): a serve or worker process on this database runs it; follow it with: deidcorpus jobs wait %d\n",
		id, what, id)
}

// withoutOutcome drops the job manager's records of a failed job: a command
// that runs its job prints the job's outcome itself, once.
type withoutOutcome struct{ slog.Handler }

func (h withoutOutcome) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == jobs.LogJobFailed {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h withoutOutcome) WithAttrs(attrs []slog.Attr) slog.Handler {
	return withoutOutcome{h.Handler.WithAttrs(attrs)}
}

func (h withoutOutcome) WithGroup(name string) slog.Handler {
	return withoutOutcome{h.Handler.WithGroup(name)}
}

// runJob enqueues a job and, unless async, works it in this process, showing
// its progress, until it finishes. With async it prints the job's id and
// returns at once: a server or worker on the same database runs it.
func runJob(ctx context.Context, e *env, st *store.Store, params jobs.Params, async bool) (*ent.Job, error) {
	kind := params.JobKind()
	logger := slog.New(withoutOutcome{slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})})
	m, err := openManager(ctx, st, logger, !async, 1, 15*time.Second)
	if err != nil {
		return nil, err
	}
	j, err := m.Enqueue(ctx, params, auth.Name(ctx), nil)
	if err != nil {
		return nil, err
	}
	if async {
		printQueued(e, j.ID, kind)
		return j, nil
	}
	if err := m.Start(ctx); err != nil {
		return nil, err
	}
	defer m.Stop(context.Background())
	updates, err := m.Watch(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	bar := newBar(e.stderr, kind)
	for u := range updates {
		j = u
		bar.set(u.ProgressDone, u.ProgressTotal, u.Message)
	}
	bar.finish()
	if ctx.Err() != nil {
		m.Cancel(context.Background(), j.ID)
		return nil, ctx.Err()
	}
	// A job whose output failed its check has a result to show: the caller
	// reports it and fails.
	if j.Status != job.StatusCheckFailed {
		return j, jobs.Err(j)
	}
	return j, nil
}
