// Command scale measures the corpus-sized steps at hospital scale: it builds
// the deidcorpus command, writes a synthetic corpus (synth), and runs each
// step as its own deidcorpus process on a fresh SQLite database (or a
// PostgreSQL DSN): import, statistics, resynthesis (and a rerun into a second corpus that
// reuses the first's mappings), tagging with a stored
// model, release create, export, verify and diff, and corpus export. Every step goes
// through the CLI, so through the same jobs and store code a server runs.
// It prints each step's wall time and peak resident memory: the child's
// maximum RSS from rusage (so one step's memory never hides another's), and
// the peak of its anonymous (private) resident memory, sampled from
// /proc every 20 ms. The two differ by the file pages the process maps: its
// own binary, and the database's if a DSN asks SQLite for a memory map
// (_pragma=mmap_size(N); the store maps none by default).
//
//	go run ./bench/scale -patients 30000      # 105,052 notes
//	go run ./bench/scale -patients 300000 -keep /tmp/scale  # about 1M notes
//
// The tagger is trained on a small synthetic corpus of its own (-train-patients):
// training is not a corpus-sized step here, tagging the big corpus is.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// step is one deidcorpus command line; measured steps are printed.
type step struct {
	name     string
	group    string // the -only name that selects it; "" for steps every run needs
	args     []string
	measured bool
}

// stepGroups are the names -only takes.
var stepGroups = []string{"stats", "resynth", "tag", "release", "export"}

// stepFilter reads -only: the step groups to run, all when empty.
func stepFilter(only string) (map[string]bool, error) {
	want := map[string]bool{}
	if only == "" {
		for _, g := range stepGroups {
			want[g] = true
		}
		return want, nil
	}
	for _, g := range strings.Split(only, ",") {
		g = strings.TrimSpace(g)
		if g == "import" {
			continue // always run
		}
		if !slices.Contains(stepGroups, g) {
			return nil, fmt.Errorf("-only: unknown step %q (import, %s)", g, strings.Join(stepGroups, ", "))
		}
		want[g] = true
	}
	return want, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// checkFailed is the exit status of a resynthesis whose output failed its
// leak check: the corpus is written (and quarantined), so the step counts.
const checkFailed = 2

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	patients := fs.Int("patients", 30000, "patients of the synthetic corpus (about 3.5 notes each)")
	seed := fs.Uint64("seed", 7, "seed of the synthetic corpus")
	trainPatients := fs.Int("train-patients", 100, "patients of the small corpus the stored model is trained on")
	db := fs.String("db", "", "database DSN (default: a fresh SQLite file in the work directory); a PostgreSQL database must be empty")
	keep := fs.String("keep", "", "work directory to use and keep (default: a temporary one, removed at the end); a synthetic corpus already written there is reused")
	workers := fs.Int("workers", 1, "worker processes for the tag and resynthesis steps, which are split into parts that every worker takes (resynthesis into as many parts as workers): the command's own and workers-1 'deidcorpus worker' processes beside it")
	only := fs.String("only", "", "comma-separated measured steps to run (import, stats, resynth, tag, release, export); default all. The import always runs: every other step reads its corpus")
	if err := fs.Parse(args); err != nil {
		return err
	}
	want, err := stepFilter(*only)
	if err != nil {
		return err
	}
	dir := *keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "deidcorpus-scale-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if *db == "" {
		*db = filepath.Join(dir, "scale.db")
		if err := os.Remove(*db); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err // a database left by an earlier run with -keep
		}
	}
	bin := filepath.Join(dir, "deidcorpus")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/deidcorpus")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building deidcorpus (run from the module root): %w", err)
	}
	// Named by what they hold, so that -keep reuses only the same corpus.
	notes := filepath.Join(dir, fmt.Sprintf("notes-%d-seed%d", *patients, *seed))
	train := filepath.Join(dir, fmt.Sprintf("train-%d", *trainPatients))
	p := strconv.Itoa(*patients)
	keyFile := filepath.Join(dir, "scale.key")
	steps := []step{
		{"keys", "", []string{"keys", "init", "--key-file", keyFile}, false},
		{"synth", "", []string{"synth", "--patients", p, "--seed", strconv.FormatUint(*seed, 10), "--out", notes}, false},
		{"synth-train", "tag", []string{"synth", "--patients", strconv.Itoa(*trainPatients), "--seed", "1", "--out", train}, false},
		{"import", "", []string{"import", "--corpus", "notes", "--tagset", "i2b2-2014", "--split", "test", notes}, true},
		{"stats category,type", "stats", []string{"stats", "--corpus", "notes", "--by", "category,type"}, true},
		{"stats split,note-type", "stats", []string{"stats", "--corpus", "notes", "--by", "split,note-type"}, true},
		// The short steps first, so that a long run reports them early. The
		// release is of the original corpus (a surrogate one may be
		// quarantined by its check) and of its gold set only, so tagging
		// after it changes nothing it reads.
		{"release create", "release", []string{"release", "create", "--corpus", "notes", "--name", "notes", "--version", "1.0.0"}, true},
		{"release export", "release", []string{"release", "export", "--release", "notes@1.0.0", "--out", filepath.Join(dir, "notes-1.0.0.zip")}, true},
		{"release verify", "release", []string{"release", "verify", filepath.Join(dir, "notes-1.0.0.zip")}, true},
		// A release against itself: both read twice, nothing differs.
		{"release diff", "release", []string{"release", "diff", "notes@1.0.0", "notes@1.0.0"}, true},
		{"export", "export", []string{"export", "--corpus", "notes", "--out", filepath.Join(dir, "notes-gold.zip")}, true},
		{"resynth", "resynth", []string{"resynth", "--corpus", "notes", "--out", "notes-r", "--seed", "7"}, true},
		// A second surrogate corpus of the same source: a rerun, every note to
		// write beside the stored mappings of the first, which it reuses.
		{"resynth again (stored)", "resynth", []string{"resynth", "--corpus", "notes", "--out", "notes-r2", "--seed", "8"}, true},
		{"import-train", "tag", []string{"import", "--corpus", "train", "--tagset", "i2b2-2014", "--split", "train", train}, false},
		{"train", "tag", []string{"train", "--corpus", "train", "--model", "crf1"}, false},
		{"tag (stored model)", "tag", []string{"tag", "--model", "crf1", "--corpus", "notes"}, true},
	}
	fmt.Fprintf(stdout, "%-24s %9s %15s %16s\n", "step", "time (s)", "peak RSS (MiB)", "peak anon (MiB)")
	for _, s := range steps {
		if s.group != "" && !want[s.group] {
			continue
		}
		if s.args[0] == "synth" && exists(s.args[len(s.args)-1]) {
			continue // written by an earlier run with -keep: same patients and seed, same files
		}
		if s.args[0] == "keys" && exists(keyFile) {
			continue
		}
		var stopWorkers func()
		if (s.group == "tag" || s.group == "resynth") && s.measured && *workers > 1 {
			if s.args[0] == "resynth" {
				s.args = append(slices.Clone(s.args), "--parts", strconv.Itoa(*workers))
			}
			if stopWorkers, err = startWorkers(ctx, bin, *db, dir, *workers-1); err != nil {
				return err
			}
		}
		elapsed, rss, anon, err := measure(ctx, bin, *db, dir, s.args)
		if stopWorkers != nil {
			stopWorkers()
		}
		note := ""
		if exit := (*exec.ExitError)(nil); s.args[0] == "resynth" && errors.As(err, &exit) && exit.ExitCode() == checkFailed {
			err, note = nil, "  (its check failed: the corpus is quarantined)"
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if s.measured {
			fmt.Fprintf(stdout, "%-24s %9.1f %15d %16d%s\n", s.name, elapsed.Seconds(), rss>>20, anon>>20, note)
		}
	}
	return nil
}

// startWorkers starts n 'deidcorpus worker' processes (one job at a time
// each, as the command's own worker) and returns what stops them.
func startWorkers(ctx context.Context, bin, db, dir string, n int) (stop func(), err error) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			c.Process.Signal(os.Interrupt)
			c.Wait()
		}
	}
	for range n {
		c := exec.CommandContext(ctx, bin, "worker", "--concurrency", "1")
		c.Env = append(os.Environ(), "DEIDCORPUS_DB="+db, "DEIDCORPUS_KEY_FILE="+filepath.Join(dir, "scale.key"))
		c.Stderr = io.Discard
		if err := c.Start(); err != nil {
			stop()
			return nil, err
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}

// measure runs one deidcorpus command and returns its wall time, its peak
// resident memory and its sampled peak anonymous resident memory, in bytes.
func measure(ctx context.Context, bin, db, dir string, args []string) (elapsed time.Duration, rss, anon int64, err error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "DEIDCORPUS_DB="+db, "DEIDCORPUS_KEY_FILE="+filepath.Join(dir, "scale.key"))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	done := make(chan struct{})
	sampled := make(chan int64)
	go func() {
		var peak int64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, rssAnon(cmd.Process.Pid))
			select {
			case <-done:
				sampled <- peak
				return
			case <-tick.C:
			}
		}
	}()
	err = cmd.Wait()
	elapsed = time.Since(start)
	close(done)
	anon = <-sampled
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, 0, errors.New("no rusage on this platform")
	}
	if err != nil {
		err = fmt.Errorf("deidcorpus %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return elapsed, ru.Maxrss << 10, anon, err // Linux reports kilobytes
}

// rssAnon reads a process's anonymous resident memory (RssAnon in
// /proc/PID/status), 0 if it cannot.
func rssAnon(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
