package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestREADME runs the README as a newcomer would: every command of its sh
// blocks in order, through run() in a fresh directory (so the tour writes
// its ./deidcorpus.db, its notes and its archives there), and every GraphQL
// example of the README and of docs/graphql.md against the server its first
// command starts. A misspelt command or flag, or an example that answers
// with errors, fails it. Blocks fenced ```text are samples and not run; a
// fence with no language fails, so that nothing is left unrun unawares.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("the README's tour starts a server and resynthesizes: not with -short")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	readme := fencedBlocks(t, root, "README.md")
	graphqlDoc := fencedBlocks(t, root, "docs/graphql.md")
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	require.NoError(t, err)

	t.Chdir(t.TempDir())
	sh := &readmeShell{t: t, root: root, ci: string(ci), vars: map[string]string{}}
	defer sh.stop()
	for _, b := range readme {
		switch b.lang {
		case "sh":
			for _, line := range shellLines(b) {
				sh.line(line)
			}
		case "graphql":
			sh.graphql(b)
		}
	}
	require.NotEmpty(t, sh.base, "the README starts no server for its GraphQL examples")
	// docs/graphql.md's examples name the demo's surrogate twin, which the
	// demo's first start writes as a job.
	sh.waitForDemoTwin()
	for _, b := range graphqlDoc {
		if b.lang == "graphql" {
			sh.graphql(b)
		}
	}
}

// A block is one fenced block of a Markdown file.
type block struct {
	file, lang, text string
	line             int // of its first line of text
}

func (b block) at(offset int) string { return fmt.Sprintf("%s:%d", b.file, b.line+offset) }

func fencedBlocks(t *testing.T, root, name string) []block {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	var blocks []block
	var cur *block
	for i, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "```") {
			if cur != nil {
				cur.text += line + "\n"
			}
			continue
		}
		if cur != nil {
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		lang := strings.TrimSpace(strings.TrimPrefix(line, "```"))
		switch lang {
		case "sh", "graphql", "text":
		default:
			t.Fatalf("%s:%d: a ```%s block: fence it sh or graphql (run by this test) or text (not run)", name, i+1, lang)
		}
		cur = &block{file: name, lang: lang, line: i + 2}
	}
	require.Nil(t, cur, "%s: a block is never closed", name)
	return blocks
}

// A shellLine is one command of an sh block, continuation lines joined.
type shellLine struct {
	at, text string
}

func shellLines(b block) []shellLine {
	var lines []shellLine
	var pending string
	start := 0
	for i, l := range strings.Split(strings.TrimRight(b.text, "\n"), "\n") {
		if pending == "" {
			start = i
		}
		if strings.HasSuffix(l, "\\") {
			pending += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		text := strings.TrimSpace(pending + l)
		pending = ""
		if text != "" && !strings.HasPrefix(text, "#") {
			lines = append(lines, shellLine{at: b.at(start), text: text})
		}
	}
	return lines
}

// readmeShell runs the small part of a shell the README uses: commands of
// the built binary or of go, NAME=$(command) assignments, NAME=value
// prefixes as the command's environment, quotes, $NAME and comments.
type readmeShell struct {
	t      *testing.T
	root   string
	ci     string
	vars   map[string]string
	binary string // what `go build -o` named, run as ./binary

	base   string // the server's URL, once a command started it
	cancel context.CancelFunc
	done   chan int
}

func (s *readmeShell) line(l shellLine) {
	words, err := shellWords(l.text, s.expand(l))
	require.NoError(s.t, err, "%s: %s", l.at, l.text)
	if len(words) == 1 {
		if name, value, ok := strings.Cut(words[0], "="); ok && isShellName(name) {
			s.vars[name] = value
			return
		}
	}
	s.command(l, words)
}

// command runs words (environment prefixes first) and returns its stdout.
func (s *readmeShell) command(l shellLine, words []string) string {
	t := s.t
	env := map[string]string{}
	for len(words) > 0 {
		name, value, ok := strings.Cut(words[0], "=")
		if !ok || !isShellName(name) {
			break
		}
		env[name] = value
		words = words[1:]
	}
	require.NotEmpty(t, words, "%s: no command", l.at)
	switch {
	case words[0] == "go":
		return s.goCommand(l, words[1:], env)
	case s.binary != "" && words[0] == "./"+s.binary:
		return s.deidcorpus(l, words[1:], env)
	}
	t.Fatalf("%s: %q is no command this test runs (the built ./deidcorpus or go): %s", l.at, words[0], l.text)
	return ""
}

func (s *readmeShell) goCommand(l shellLine, args []string, env map[string]string) string {
	t := s.t
	require.NotEmpty(t, args, "%s: go what?", l.at)
	switch args[0] {
	case "run":
		require.True(t, len(args) > 1 && args[1] == "./cmd/deidcorpus", "%s: go run of something else: %s", l.at, l.text)
		return s.deidcorpus(l, args[2:], env)
	case "build":
		require.True(t, len(args) == 4 && args[1] == "-o" && args[3] == "./cmd/deidcorpus",
			"%s: want go build -o NAME ./cmd/deidcorpus: %s", l.at, l.text)
		s.binary = args[2]
		return ""
	case "test":
		// The suite is the command CI runs; running it here would run this test again.
		cmd := "go " + strings.Join(args, " ")
		require.Contains(t, strings.Split(s.ci, "\n"), cmd, "%s: %q is not the test command .ci/run runs", l.at, cmd)
		return ""
	}
	t.Fatalf("%s: go %s is no command this test runs", l.at, args[0])
	return ""
}

// deidcorpus runs the command line in process; serve starts the server on
// a free port of this machine and leaves it running for the GraphQL examples.
func (s *readmeShell) deidcorpus(l shellLine, args []string, env map[string]string) string {
	t := s.t
	getenv := func(k string) string { return env[k] }
	if len(args) > 0 && args[0] == "serve" {
		require.Empty(t, s.base, "%s: a second server", l.at)
		s.serve(l, args, getenv)
		return ""
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), args, getenv, strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, "%s: %s\nstdout: %s\nstderr: %s", l.at, l.text, out.String(), errb.String())
	return out.String()
}

func (s *readmeShell) serve(l shellLine, args []string, getenv func(string) string) {
	t := s.t
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan int, 1)
	pr, pw := io.Pipe()
	args = append(append([]string{}, args...), "--addr", "127.0.0.1:0")
	go func() {
		s.done <- run(ctx, args, getenv, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	re := regexp.MustCompile(`serving on (http://\S+)`)
	sc := bufio.NewScanner(pr)
	var said []string
	for sc.Scan() {
		said = append(said, sc.Text())
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			s.base = m[1]
			break
		}
	}
	go io.Copy(io.Discard, pr)
	require.NotEmpty(t, s.base, "%s: %s never said where it listens:\n%s", l.at, l.text, strings.Join(said, "\n"))
	require.Eventually(t, func() bool {
		resp, err := http.Get(s.base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, time.Minute, 50*time.Millisecond) // a deadline for a hang, not a speed bar
}

func (s *readmeShell) stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	select {
	case code := <-s.done:
		s.t.Logf("the README's server stopped with exit status %d", code)
	case <-time.After(time.Minute):
		s.t.Error("the README's server did not shut down")
	}
}

// expand replaces $NAME and $(command) in a word being read.
func (s *readmeShell) expand(l shellLine) func(string) (string, error) {
	return func(ref string) (string, error) {
		if strings.HasPrefix(ref, "(") {
			inner := strings.TrimSuffix(strings.TrimPrefix(ref, "("), ")")
			words, err := shellWords(inner, s.expand(l))
			if err != nil {
				return "", err
			}
			return strings.TrimRight(s.command(l, words), "\n"), nil
		}
		v, ok := s.vars[ref]
		if !ok {
			return "", fmt.Errorf("$%s is not set", ref)
		}
		return v, nil
	}
}

var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isShellName(s string) bool { return shellName.MatchString(s) }

var shellRef = regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*|\([^()]*\))`)

// shellWords splits a command into words: single quotes keep everything,
// double quotes and bare words expand $NAME and $(...), # begins a comment.
func shellWords(line string, expand func(string) (string, error)) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case c == '#' && !inWord:
			return words, nil
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("an unclosed '")
			}
			cur.WriteString(line[i+1 : i+1+end])
			inWord, i = true, i+end+2
		case c == '"':
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf(`an unclosed "`)
			}
			v, err := expandAll(line[i+1:i+1+end], expand)
			if err != nil {
				return nil, err
			}
			cur.WriteString(v)
			inWord, i = true, i+end+2
		case c == '$':
			m := shellRef.FindStringSubmatch(line[i:])
			if m == nil {
				return nil, fmt.Errorf("a $ this test does not expand at %q", line[i:])
			}
			v, err := expand(m[1])
			if err != nil {
				return nil, err
			}
			cur.WriteString(v)
			inWord, i = true, i+len(m[0])
		case strings.IndexByte("|&;<>`\\", c) >= 0:
			return nil, fmt.Errorf("%q: pipes, redirections and the like are not run by this test", c)
		default:
			cur.WriteByte(c)
			inWord, i = true, i+1
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func expandAll(s string, expand func(string) (string, error)) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if m := shellRef.FindStringSubmatch(s[i:]); s[i] == '$' && m != nil {
			v, err := expand(m[1])
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i += len(m[0])
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), nil
}

// graphql sends each operation of a block as the admin, whose token the
// server's first start wrote beside the database, and wants no errors.
func (s *readmeShell) graphql(b block) {
	t := s.t
	require.NotEmpty(t, s.base, "%s: a GraphQL example before any server is started", b.at(0))
	token, err := os.ReadFile("deidcorpus.db.admin-token")
	require.NoError(t, err, "%s: the admin's token beside ./deidcorpus.db", b.at(0))
	ops := graphqlOperations(b.text)
	require.NotEmpty(t, ops, "%s: a graphql block without an operation", b.at(0))
	for _, op := range ops {
		req := s.graphqlRequest(b, op)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var out struct {
			Data   map[string]any `json:"data"`
			Errors []any          `json:"errors"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		require.NoError(t, err, "%s: %s", b.at(0), op)
		require.Empty(t, out.Errors, "%s: %s", b.at(0), op)
		require.NotEmpty(t, out.Data, "%s: %s", b.at(0), op)
		for field, v := range out.Data {
			require.NotNil(t, v, "%s: %s answered null for %s", b.at(0), op, field)
		}
	}
}

// graphqlRequest posts op as JSON, or, when it takes $files (uploads), as
// the multipart request of the GraphQL multipart spec with one note of the
// tour's.
func (s *readmeShell) graphqlRequest(b block, op string) *http.Request {
	t := s.t
	if !strings.Contains(op, "$files") {
		body, _ := json.Marshal(map[string]any{"query": op})
		req, err := http.NewRequest("POST", s.base+"/graphql", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	notes, _ := filepath.Glob(filepath.Join("tour-notes", "*.xml"))
	require.NotEmpty(t, notes, "%s: an upload example needs the tour's notes", b.at(0))
	note, err := os.ReadFile(notes[0])
	require.NoError(t, err)
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	ops, _ := json.Marshal(map[string]any{"query": op, "variables": map[string]any{"files": []any{nil}}})
	require.NoError(t, w.WriteField("operations", string(ops)))
	require.NoError(t, w.WriteField("map", `{"0":["variables.files.0"]}`))
	fw, err := w.CreateFormFile("0", filepath.Base(notes[0]))
	require.NoError(t, err)
	_, err = fw.Write(note)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	req, err := http.NewRequest("POST", s.base+"/graphql", &body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return req
}

// graphqlOperations splits a block into its operations: each runs from the
// end of the one before to the brace that closes its selection, comments and
// an operation's header (mutation ($x: T) ...) included.
func graphqlOperations(text string) []string {
	var ops []string
	depth, start := 0, 0
	inString, inComment := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inComment:
			inComment = c != '\n'
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '#':
			inComment = true
		case c == '"':
			inString = true
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				ops = append(ops, strings.TrimSpace(text[start:i+1]))
				start = i + 1
			}
		}
	}
	return ops
}

// waitForDemoTwin waits until the demo's resynthesis has written and
// checked demo-twin.
func (s *readmeShell) waitForDemoTwin() {
	t := s.t
	token, err := os.ReadFile("deidcorpus.db.admin-token")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		body, _ := json.Marshal(map[string]any{"query": `{ corpusByName(name: "demo-twin") { checkStatus } }`})
		req, _ := http.NewRequest("POST", s.base+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var out struct {
			Data struct {
				Corpus *struct{ CheckStatus string } `json:"corpusByName"`
			}
		}
		return json.NewDecoder(resp.Body).Decode(&out) == nil && out.Data.Corpus != nil &&
			strings.EqualFold(out.Data.Corpus.CheckStatus, "passed")
	}, 5*time.Minute, 200*time.Millisecond) // a deadline for a hang, not a speed bar
}

func TestShellWords(t *testing.T) {
	vars := map[string]string{"TOKEN": "dct_x"}
	expand := func(ref string) (string, error) {
		if ref == "(echo hi)" {
			return "hi", nil
		}
		if v, ok := vars[ref]; ok {
			return v, nil
		}
		return "", fmt.Errorf("$%s is not set", ref)
	}
	for _, c := range []struct {
		line string
		want []string
		err  bool
	}{
		{line: `./deidcorpus corpora --token "$TOKEN"   # a comment`, want: []string{"./deidcorpus", "corpora", "--token", "dct_x"}},
		{line: `TOKEN=$(echo hi)`, want: []string{"TOKEN=hi"}},
		{line: `a 'b $c' "d e"x`, want: []string{"a", "b $c", "d ex"}},
		{line: `a --x=#1`, want: []string{"a", "--x=#1"}},
		{line: `echo $UNSET`, err: true},
		{line: `a | b`, err: true},
		{line: `a "b`, err: true},
	} {
		got, err := shellWords(c.line, expand)
		if c.err {
			require.Error(t, err, c.line)
			continue
		}
		require.NoError(t, err, c.line)
		require.Equal(t, c.want, got, c.line)
	}
}

func TestGraphQLOperations(t *testing.T) {
	ops := graphqlOperations(`# two queries
{ a(x: "}") { b } }

mutation ($f: [Upload!]!) { c(files: $f) { d } } # trailing
`)
	require.Equal(t, []string{
		"# two queries\n{ a(x: \"}\") { b } }",
		"mutation ($f: [Upload!]!) { c(files: $f) { d } }",
	}, ops)
}
