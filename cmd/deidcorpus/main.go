// Command deidcorpus is the de-identification corpus server and its command
// line: every subcommand lives in its own file and registers itself in
// commands, with its usage and examples; main.go parses the flags, answers
// help for every command and subcommand, and maps errors to exit statuses.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"regexp"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/internal/nearmiss"
	"deidcorpus/store"
)

// env is what a subcommand may touch of the outside world; tests pass their own.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer

	keyFile *string // --key-file, registered by dbFlag
	token   *string // --token, registered by dbFlag
}

// action runs a command once its flags are parsed, with the positional
// arguments.
type action func(ctx context.Context, args []string) error

// command is one command, or one subcommand of a group (jobs list). A leaf
// has setup, which defines its flags and returns what runs; a group has subs.
// Help is made from these fields alone, so that every command has it.
type command struct {
	name     string   // full name: "import", "jobs list"
	summary  string   // one line, for the command lists
	args     string   // what follows the name on the usage line
	examples []string // whole command lines, each starting "deidcorpus NAME"
	setup    func(e *env, fs *flag.FlagSet) action
	subs     []*command
}

var commands = map[string]*command{}

// register adds a command (and names a group's subcommands after it).
func register(c *command) {
	for _, s := range c.subs {
		s.name = c.name + " " + s.name
	}
	commands[c.name] = c
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile, err := startCPUProfile(os.Getenv("DEIDCORPUS_CPUPROFILE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "deidcorpus: DEIDCORPUS_CPUPROFILE:", err)
		os.Exit(1)
	}
	stopHeap := startHeapProfile(os.Getenv("DEIDCORPUS_HEAPPROFILE"))
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stopHeap()
	stopProfile()
	stop()
	os.Exit(code)
}

// startCPUProfile writes the process's CPU profile to path until the
// returned function is called; with no path it does nothing. It is how the
// steps of bench/scale are profiled, each a command of its own.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// startHeapProfile writes the process's heap profile to path whenever the
// live heap (as of the last collection) passes its highest so far by a
// tenth, so that the file ends with the heap at its peak: what a step's peak
// memory holds, which a profile at exit would not show. Failures to write
// are reported on stderr once; with no path it does nothing.
func startHeapProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var written uint64
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			live := sample[0].Value.Uint64()
			if live < written+written/10 {
				continue
			}
			if err := writeHeapProfile(path); err != nil {
				fmt.Fprintln(os.Stderr, "deidcorpus: DEIDCORPUS_HEAPPROFILE:", err)
				return
			}
			written = live
		}
	}()
	return func() { close(done); <-stopped }
}

// writeHeapProfile replaces the file at path with the current heap profile.
func writeHeapProfile(path string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := errors.Join(pprof.WriteHeapProfile(f), f.Close()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// isHelp tells whether an argument asks for help.
func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help"
}

// run executes one command and returns the process exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		// No command is a usage error, as a group without its subcommand is:
		// a script that forgot its arguments must not look successful.
		fmt.Fprint(stderr, "deidcorpus: a command is required\n\n")
		usage(stderr)
		return 2
	}
	if len(args) == 1 && isHelp(args[0]) {
		usage(stdout)
		return 0
	}
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		args = []string{"version"}
	}
	if args[0] == "help" && len(args) == 2 && isHelp(args[1]) {
		usage(stdout)
		return 0
	}
	if c, ok := commands[args[0]]; ok && len(c.subs) > 0 && len(args) > 2 && args[1] == "help" {
		args = append([]string{"help", args[0]}, args[2:]...) // "jobs help show" is "help jobs show"
	}
	if args[0] == "help" {
		c, rest, err := find(args[1:])
		if err == nil && len(rest) > 0 {
			err = apperr.New(apperr.Invalid, "help takes a command and its subcommand; %q is neither", strings.Join(rest, " "))
		}
		if err != nil {
			fmt.Fprintf(stderr, "deidcorpus help: %v\n", err)
			return exitCode(err)
		}
		help(stdout, e, c)
		return 0
	}
	c, rest, err := find(args)
	if err != nil {
		fmt.Fprintf(stderr, "deidcorpus: %v\n", err)
		if _, known := commands[args[0]]; !known {
			fmt.Fprintln(stderr)
			usage(stderr)
		}
		return exitCode(err)
	}
	if len(rest) == 1 && isHelp(rest[0]) {
		help(stdout, e, c)
		return 0
	}
	if c.setup == nil {
		fmt.Fprintf(stderr, "deidcorpus %s: a subcommand is required\n\n", c.name)
		help(stderr, e, c)
		return 2
	}
	fs := newFlags(c.name)
	act := c.setup(e, fs)
	pos, err := parseArgs(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		help(stdout, e, c)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "deidcorpus %s: %v%s\nRun 'deidcorpus %s -h' for its usage.\n", c.name, err, nearFlags(fs, err), c.name)
		return 2
	}
	if err = act(ctx, pos); err == nil {
		return 0
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Ctrl-C or SIGTERM: what each command keeps of its work is its
		// own (an import into a new corpus removes it). An error that says
		// more than the cancellation (what could not be undone) is shown.
		msg := "interrupted"
		if !strings.HasSuffix(err.Error(), context.Canceled.Error()) {
			msg += ": " + err.Error()
		}
		fmt.Fprintf(stderr, "deidcorpus %s: %s\n", c.name, msg)
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "deidcorpus %s: %v\n", c.name, err)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "Run 'deidcorpus %s -h' for its usage.\n", c.name)
	}
	return exitCode(err)
}

// find looks a command up by its words ("jobs", "list", ...) and returns it
// with the arguments that follow it. A group is returned when no subcommand
// follows it, or help does.
func find(args []string) (*command, []string, error) {
	if len(args) == 0 {
		return nil, nil, apperr.New(apperr.Invalid, "no command given")
	}
	c, ok := commands[args[0]]
	if !ok && strings.HasPrefix(args[0], "-") {
		name := "COMMAND"
		if i := slices.IndexFunc(args, func(a string) bool { return commands[a] != nil }); i > 0 {
			name = args[i]
		}
		return nil, nil, apperr.New(apperr.Invalid, "%s before the command: flags come after it (deidcorpus %s %s ...)", args[0], name, args[0])
	}
	if !ok {
		if near := nearmiss.Among(args[0], slices.Sorted(maps.Keys(commands))); len(near) > 0 {
			return nil, nil, apperr.New(apperr.Invalid, "unknown command %q; did you mean %s?", args[0], strings.Join(near, " or "))
		}
		return nil, nil, apperr.New(apperr.Invalid, "unknown command %q", args[0])
	}
	args = args[1:]
	if len(args) > 0 {
		for _, s := range c.subs {
			if s.name == c.name+" "+args[0] {
				return s, args[1:], nil
			}
		}
	}
	if c.setup != nil || len(args) == 0 || isHelp(args[0]) {
		return c, args, nil
	}
	next := "; run"
	if near := nearmiss.Among(args[0], subNames(c)); len(near) > 0 {
		next = "; did you mean " + strings.Join(near, " or ") + "? Run"
	}
	return nil, nil, apperr.New(apperr.Invalid, "unknown %s subcommand %q (%s)%s 'deidcorpus %s -h'",
		c.name, args[0], strings.Join(subNames(c), ", "), next, c.name)
}

func subNames(c *command) []string {
	names := make([]string, len(c.subs))
	for i, s := range c.subs {
		names[i] = strings.TrimPrefix(s.name, c.name+" ")
	}
	return names
}

// usageError is an error in how a command was called (a missing flag or
// argument): its message is followed by a pointer to the command's help.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// usageErr makes a usage error, coded invalid (exit status 2).
func usageErr(format string, args ...any) error {
	return usageError{apperr.New(apperr.Invalid, format, args...)}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: deidcorpus COMMAND [SUBCOMMAND] [flags] [arguments]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'deidcorpus COMMAND -h' (or 'deidcorpus help COMMAND [SUBCOMMAND]') for a command's flags and examples.")
	fmt.Fprintln(w, "Exit status: 0 ok, 1 internal error, 2 invalid input, 3 not found, 4 conflict, 5 not allowed, 130 interrupted.")
	fmt.Fprintln(w, "DEIDCORPUS_CPUPROFILE=FILE makes any command write its CPU profile to FILE (go tool pprof);")
	fmt.Fprintln(w, "DEIDCORPUS_HEAPPROFILE=FILE its heap profile at the live heap's peak.")
}

// help prints a command's usage, summary, subcommands, flags and examples
// (a subcommand's first example too).
func help(w io.Writer, e *env, c *command) {
	args := c.args
	if c.setup == nil {
		args = "SUBCOMMAND [flags] [arguments]"
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n", strings.TrimSpace("deidcorpus "+c.name+" "+args), c.summary)
	if len(c.subs) > 0 {
		fmt.Fprintln(w, "\nsubcommands:")
		names := subNames(c)
		width := 0
		for _, n := range names {
			width = max(width, len(n))
		}
		for i, s := range c.subs {
			fmt.Fprintf(w, "  %-*s  %s\n", width, names[i], s.summary)
		}
		fmt.Fprintf(w, "Run 'deidcorpus %s SUBCOMMAND -h' for a subcommand's flags.\n", c.name)
	}
	if c.setup != nil {
		fs := newFlags(c.name)
		c.setup(e, fs)
		if hasFlags(fs) {
			// Written as the usage lines and the README write them: --db
			// (the flag package takes both, and prints -db).
			var flags strings.Builder
			fs.SetOutput(&flags)
			fs.PrintDefaults()
			// --name, as the usage lines write it; a one-letter flag stays -v.
			fmt.Fprint(w, "\nflags:"+longFlag.ReplaceAllString("\n"+flags.String(), "\n  --$1"))
		}
	}
	fmt.Fprintln(w, "\nexamples:")
	for _, ex := range c.examples {
		fmt.Fprintf(w, "  %s\n", ex)
	}
	for _, s := range c.subs {
		fmt.Fprintf(w, "  %s\n", s.examples[0])
	}
}

// longFlag is a flag of two letters or more at the start of a line of
// PrintDefaults.
var longFlag = regexp.MustCompile(`\n  -(\w\w)`)

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// newFlags makes a flag set that reports errors instead of exiting or
// printing: run prints them, and help on -h.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs parses flags given before, between or after the positional
// arguments ("users add NAME --role R") and returns the positional ones;
// everything after "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		dashes := slices.Index(args, "--")
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// Parse stopped at "--" if it consumed it: the rest is positional.
		if dashes >= 0 && len(args)-len(rest) == dashes+1 {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// nearFlags is "; did you mean --tagset?" after the flag package's error
// for a misspelt flag (--tag-set), or nothing.
func nearFlags(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	near := nearmiss.Among(strings.TrimLeft(name, "-"), names)
	if len(near) == 0 {
		return ""
	}
	for i, n := range near {
		near[i] = "--" + n
		if len(n) == 1 {
			near[i] = "-" + n
		}
	}
	return "; did you mean " + strings.Join(near, " or ") + "?"
}

// listFlag collects a repeated or comma-separated flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

func exitCode(err error) int { return apperr.ExitStatus(store.Coded(err)) }

// exitInterrupted is the exit status of a command stopped by Ctrl-C or
// SIGTERM: 128 + SIGINT, as shells report it.
const exitInterrupted = 130

// arg is the i-th positional argument, or "" when there are fewer.
func arg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}
