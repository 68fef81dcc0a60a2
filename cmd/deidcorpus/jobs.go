package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
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
	register("jobs", "list, show, cancel, retry or wait for background jobs", runJobs)
	register("worker", "work background jobs without the HTTP server", runWorker)
}

// workerFlags adds the flags of processes that work jobs.
func workerFlags(fs *flag.FlagSet) (concurrency *int, staleAfter *time.Duration) {
	concurrency = fs.Int("concurrency", 2, "jobs this process runs at once")
	staleAfter = fs.Duration("stale-after", 15*time.Second, "requeue a running job whose worker sent no heartbeat for this long")
	return
}

// openServing opens the store for a long-running process (serve, worker),
// with JSON logs, and says where the mapping keys come from.
func openServing(ctx context.Context, e *env, dsn string) (*store.Store, *slog.Logger, error) {
	logger := slog.New(slog.NewJSONHandler(e.stderr, nil))
	st, err := openDB(ctx, e, dsn)
	if err != nil {
		return nil, nil, err
	}
	if err := announceKeys(st, logger); err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, logger, nil
}

func openManager(ctx context.Context, st *store.Store, logger *slog.Logger, work bool, concurrency int, staleAfter time.Duration) (*jobs.Manager, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return jobs.New(ctx, st, jobs.Handlers(), jobs.Options{
		Work: work, Concurrency: concurrency, StaleAfter: staleAfter, Logger: logger,
	})
}

func runWorker(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "worker", "[--db DSN] [--concurrency N]")
	db := dbFlag(fs, e)
	concurrency, staleAfter := workerFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, logger, err := openServing(ctx, e, *db)
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

func runJobs(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, "usage: deidcorpus jobs list|show|cancel|retry|wait [flags]")
		return apperr.New(apperr.Invalid, "a jobs subcommand is required")
	}
	sub, args := args[0], args[1:]
	fs := newFlags(e, "jobs "+sub, "[--db DSN] ...")
	db := dbFlag(fs, e)
	status := fs.String("status", "", "list: only jobs with this status (queued, running, succeeded, failed, cancelled, check_failed)")
	kind := fs.String("kind", "", "list: only jobs of this kind")
	limit := fs.Int("limit", 50, "list: at most this many jobs, newest first")
	all := fs.Bool("all", false, "wait: every unfinished job")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ids, err := jobIDs(fs.Args())
	if err != nil {
		return err
	}
	op, opArgs := "cli.jobs", map[string]any{"subcommand": sub}
	if (sub == "cancel" || sub == "retry") && len(ids) == 1 {
		op, opArgs["id"] = "cli.jobs.change", ids[0]
	}
	st, ctx, err := openStore(ctx, e, *db, op, opArgs)
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := openManager(ctx, st, nil, false, 0, 0)
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		q := st.Client.Job.Query().Order(ent.Desc(job.FieldID)).Limit(*limit)
		if *status != "" {
			if err := job.StatusValidator(job.Status(*status)); err != nil {
				return apperr.New(apperr.Invalid, "unknown status %q", *status)
			}
			q.Where(job.StatusEQ(job.Status(*status)))
		}
		if *kind != "" {
			q.Where(job.Kind(*kind))
		}
		js, err := q.All(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tPROGRESS\tATTEMPTS\tCREATED\tMESSAGE")
		for _, j := range js {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", j.ID, j.Kind, j.Status, progressText(j), j.Attempts,
				j.CreatedAt.Format(time.DateTime), firstNonEmpty(j.Error, j.Message))
		}
		return tw.Flush()
	case "show", "cancel", "retry":
		if len(ids) != 1 {
			return apperr.New(apperr.Invalid, "jobs %s takes one job id", sub)
		}
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
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(j)
	case "wait":
		if *all {
			if ids, err = st.Client.Job.Query().Where(job.StatusIn(job.StatusQueued, job.StatusRunning)).IDs(ctx); err != nil {
				return err
			}
		}
		if len(ids) == 0 {
			if !*all {
				return apperr.New(apperr.Invalid, "jobs wait takes job ids or --all")
			}
			return nil
		}
		js, err := m.Wait(ctx, ids)
		if err != nil {
			return err
		}
		return reportFinished(e, js)
	}
	return apperr.New(apperr.Invalid, "unknown jobs subcommand %q (list, show, cancel, retry, wait)", sub)
}

// reportFinished prints each finished job and fails if one did not succeed.
func reportFinished(e *env, js []*ent.Job) error {
	var failed []string
	for _, j := range js {
		fmt.Fprintf(e.stdout, "job %d (%s): %s", j.ID, j.Kind, j.Status)
		if j.Error != "" {
			fmt.Fprintf(e.stdout, ": %s", j.Error)
		}
		fmt.Fprintln(e.stdout)
		if j.Status != job.StatusSucceeded {
			failed = append(failed, strconv.Itoa(j.ID))
		}
	}
	if len(failed) > 0 {
		return errors.New("not every job succeeded")
	}
	return nil
}

func jobIDs(args []string) ([]int, error) {
	ids := make([]int, len(args))
	for i, a := range args {
		id, err := strconv.Atoi(a)
		if err != nil {
			return nil, apperr.New(apperr.Invalid, "job id %q is not a number", a)
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

// runJob enqueues a job and, unless async, works it in this process, showing
// its progress, until it finishes. With async it prints the job's id and
// returns at once: a server or worker on the same database runs it.
func runJob(ctx context.Context, e *env, st *store.Store, kind string, params any, async bool) (*ent.Job, error) {
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := openManager(ctx, st, logger, !async, 1, 15*time.Second)
	if err != nil {
		return nil, err
	}
	j, err := m.Enqueue(ctx, kind, params, auth.Name(ctx), nil)
	if err != nil {
		return nil, err
	}
	if async {
		fmt.Fprintf(e.stdout, "job %d queued (%s); follow it with: deidcorpus jobs wait %d\n", j.ID, kind, j.ID)
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
	update, finish := progress(e.stderr, kind)
	for u := range updates {
		j = u
		if u.ProgressTotal > 0 {
			update(u.ProgressDone, u.ProgressTotal)
		}
	}
	finish()
	if ctx.Err() != nil {
		m.Cancel(context.Background(), j.ID)
		return nil, ctx.Err()
	}
	// A job whose output failed its check has a result to show: the caller
	// reports it and fails.
	if j.Status != job.StatusSucceeded && j.Status != job.StatusCheckFailed {
		return j, fmt.Errorf("job %d %s: %s", j.ID, j.Status, j.Error)
	}
	return j, nil
}
