package main

import (
	"flag"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// everyCommand walks the command table: every command and every subcommand,
// so that a command added later is tested too.
func everyCommand() []*command {
	var all []*command
	for _, c := range commands {
		all = append(all, c)
		all = append(all, c.subs...)
	}
	slices.SortFunc(all, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	return all
}

// TestEveryCommandAnswersHelp: -h, --help, help and `deidcorpus help NAME`
// print the same usage, flags and examples on stdout and exit 0, for every
// command and subcommand; the examples parse with the command's own flags.
func TestEveryCommandAnswersHelp(t *testing.T) {
	all := everyCommand()
	require.Greater(t, len(all), 30)
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) {
			words := strings.Fields(c.name)
			code, want, errs := cli(t, append([]string{"help"}, words...)...)
			require.Equal(t, 0, code, errs)
			assert.Empty(t, errs)
			first, _, _ := strings.Cut(want, "\n")
			assert.True(t, first == "usage: deidcorpus "+c.name || strings.HasPrefix(first, "usage: deidcorpus "+c.name+" "), want)
			assert.Equal(t, strings.TrimSpace(first), first, "no space at the usage line's end")
			assert.Contains(t, want, c.summary)
			assert.Contains(t, want, "\nexamples:\n  deidcorpus "+c.name)
			if c.setup != nil {
				fs := newFlags(c.name)
				c.setup(&env{getenv: func(string) string { return "" }}, fs)
				fs.VisitAll(func(f *flag.Flag) {
					dashes := "--"
					if len(f.Name) == 1 {
						dashes = "-" // as the usage lines write it
					}
					assert.Regexp(t, `\n  `+dashes+regexp.QuoteMeta(f.Name)+`\s`, want)
				})
			}
			for _, s := range c.subs {
				assert.Contains(t, want, "\n  "+strings.TrimPrefix(s.name, c.name+" ")+" ")
				assert.Contains(t, want, "\n  "+s.examples[0]+"\n")
			}
			for _, h := range []string{"-h", "--help", "help"} {
				code, out, errs := cli(t, append(words, h)...)
				assert.Equal(t, 0, code, "%s %s: %s", c.name, h, errs)
				assert.Equal(t, want, out, "%s %s", c.name, h)
			}
			if len(words) == 2 { // a subcommand: "GROUP help SUB" too
				code, out, errs := cli(t, words[0], "help", words[1])
				assert.Equal(t, 0, code, "%s help %s: %s", words[0], words[1], errs)
				assert.Equal(t, want, out, "%s help %s", words[0], words[1])
			}

			if c.setup != nil {
				require.NotEmpty(t, c.examples)
			}
			for _, ex := range c.examples {
				args := exampleArgs(t, ex, c.name)
				if c.setup == nil {
					continue
				}
				fs := newFlags(c.name)
				c.setup(&env{getenv: func(string) string { return "" }}, fs)
				_, err := parseArgs(fs, args)
				assert.NoError(t, err, "example %q", ex)
			}
		})
	}
}

// exampleArgs is an example's arguments after the command's name, without
// what the shell does (VAR=value before it, redirections after).
func exampleArgs(t *testing.T, ex, name string) []string {
	f := strings.Fields(ex)
	for len(f) > 0 && strings.Contains(f[0], "=") {
		f = f[1:]
	}
	if i := slices.Index(f, ">"); i >= 0 {
		f = f[:i]
	}
	prefix := append([]string{"deidcorpus"}, strings.Fields(name)...)
	require.True(t, len(f) >= len(prefix) && slices.Equal(f[:len(prefix)], prefix), "example %q does not run deidcorpus %s", ex, name)
	return f[len(prefix):]
}

func TestHelpErrors(t *testing.T) {
	code, out, errs := cli(t)
	assert.Equal(t, 2, code, "no command")
	assert.Empty(t, out)
	assert.Contains(t, errs, "a command is required")
	for name := range commands {
		assert.Contains(t, errs, "\n  "+name+" ")
	}
	code, out, _ = cli(t, "help")
	assert.Equal(t, 0, code)
	for name := range commands {
		assert.Contains(t, out, "\n  "+name+" ")
	}
	code, _, errs = cli(t, "help", "frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `unknown command "frobnicate"`)
	code, _, errs = cli(t, "help", "import", "frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `help takes a command and its subcommand; "frobnicate" is neither`)
	code, _, errs = cli(t, "jobs", "frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `unknown jobs subcommand "frobnicate" (list, show, cancel, retry, wait); run 'deidcorpus jobs -h'`)
	// One edit from a command or subcommand: the one meant is named.
	_, _, errs = cli(t, "releases", "list")
	assert.Contains(t, errs, `unknown command "releases"; did you mean release?`)
	_, _, errs = cli(t, "release", "lst")
	assert.Contains(t, errs, `unknown release subcommand "lst" (create, list, diff, export, verify); did you mean list? Run 'deidcorpus release -h'`)
	code, out, errs = cli(t, "jobs")
	assert.Equal(t, 2, code, "a group without a subcommand")
	assert.Empty(t, out)
	assert.Contains(t, errs, "a subcommand is required")
	assert.Contains(t, errs, "usage: deidcorpus jobs SUBCOMMAND")
	code, _, errs = cli(t, "import", "--bogus")
	assert.Equal(t, 2, code, "a flag error is invalid input")
	assert.Contains(t, errs, "flag provided but not defined: -bogus\nRun 'deidcorpus import -h' for its usage.")
	code, _, errs = cli(t, "import", "--corpus", "x")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--corpus and at least one PATH are required\nRun 'deidcorpus import -h'")
}
