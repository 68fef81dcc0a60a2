// Command attacks sends issue 60's three requests that exhausted a server
// to a running one, and reports its peak memory after each (VmHWM from
// /proc, reset before each attack through clear_refs) and whether it still
// answers:
//
//   - notes: a zip of 3,000 brat notes of 3 MiB each (9 GiB of text in a
//     few MB) to startImport and importDocuments, then a zip of -streamed
//     such notes that the import budget lets in, to startImport, waited for;
//   - fields: `{me{name name …}}` with 10,000 and 700,000 repeats;
//   - bootstrap: compareEvaluations with bootstrap 2,000,000,000, then with
//     the largest allowed, on an evaluation of the testdata corpus that the
//     harness imports and scores first.
//
// Run it from the repository's root against a server of its own:
//
//	deidcorpus serve --db /tmp/a.db --admin-token-file /tmp/a.token &
//	go run ./bench/attacks -token-file /tmp/a.token -pid $!
//
// It only connects to the address given (loopback by default).
package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"deidcorpus/internal/zipbomb"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "attacks:", err)
		os.Exit(1)
	}
}

type target struct {
	url, token string
	pid        int
}

func run(args []string) error {
	fs := flag.NewFlagSet("attacks", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:8080", "the server's address")
	tokenFile := fs.String("token-file", "", "a file holding an admin's API token (required)")
	pid := fs.Int("pid", 0, "the server's process id, to read its memory")
	streamed := fs.Int("streamed", 60, "notes of 3 MiB in the upload the budget lets in")
	only := fs.String("attack", "", "one attack only: notes, fields or bootstrap")
	write := fs.String("write", "", "only write the zip of -streamed notes to this path (for the import command)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *write != "" {
		archive, err := brat(*streamed)
		if err != nil {
			return err
		}
		return os.WriteFile(*write, archive, 0o600)
	}
	token, err := os.ReadFile(*tokenFile)
	if err != nil {
		return err
	}
	t := target{url: strings.TrimSuffix(*url, "/"), token: strings.TrimSpace(string(token)), pid: *pid}
	for _, a := range []struct {
		name string
		run  func(target, int) error
	}{{"notes", notes}, {"fields", fields}, {"bootstrap", bootstrap}} {
		if *only != "" && *only != a.name {
			continue
		}
		t.resetPeak()
		fmt.Printf("== %s (server VmRSS before: %s)\n", a.name, t.status("VmRSS"))
		if err := a.run(t, *streamed); err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
		fmt.Printf("   server VmHWM (peak): %s, VmRSS after: %s, healthz: %s\n", t.status("VmHWM"), t.status("VmRSS"), t.healthz())
	}
	return nil
}

func notes(t target, streamed int) error {
	for _, n := range []int{3000, streamed} {
		archive, err := brat(n)
		if err != nil {
			return err
		}
		mutations := []string{"startImport", "importDocuments"}
		if n == streamed {
			mutations = mutations[:1]
		}
		for _, m := range mutations {
			start := time.Now()
			out := t.upload(m, fmt.Sprintf("notes%d-%s", n, m), archive)
			fmt.Printf("   %d notes of 3 MiB (zip %d bytes), %s: %s (%.1f s)\n", n, len(archive), m, trim(out), time.Since(start).Seconds())
			if id, ok := jobID(out); ok {
				fmt.Printf("   job %s: %s (%.1f s)\n", id, t.wait(id), time.Since(start).Seconds())
			}
		}
	}
	return nil
}

// brat is a zip of n brat notes of 3 MiB each, made in a temporary
// directory.
func brat(n int) ([]byte, error) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("notes/%04d-01.txt", i)
	}
	dir, err := os.MkdirTemp("", "attacks")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "notes.zip")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	unit := bytes.Repeat([]byte("Seen in clinic today, no complaints. "), 30_000)[:1<<20]
	if err := zipbomb.Members(f, names, 3<<20, unit); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

func fields(t target, _ int) error {
	for _, n := range []int{10_000, 700_000} {
		start := time.Now()
		out := t.post("{me{"+strings.Repeat("name ", n)+"}}", nil)
		fmt.Printf("   {me{name ×%d}}: %s (%.3f s)\n", n, trim(out), time.Since(start).Seconds())
	}
	return nil
}

func bootstrap(t target, _ int) error {
	files, err := filepath.Glob("testdata/i2b2/*.xml")
	if err != nil || len(files) == 0 {
		return fmt.Errorf("run from the repository's root (testdata/i2b2): %v", err)
	}
	var archive bytes.Buffer
	if err := zipFiles(&archive, files); err != nil {
		return err
	}
	out := t.upload("importDocuments", "scored", archive.Bytes())
	fmt.Printf("   import testdata: %s\n", trim(out))
	out = t.post(`mutation { startEvaluation(input: {corpus: "scored", system: "gold"}) { id } }`, nil)
	id, ok := jobID(out)
	if !ok {
		return fmt.Errorf("startEvaluation: %s", out)
	}
	fmt.Printf("   evaluation job %s: %s\n", id, t.wait(id))
	out = t.post(`{ evaluations(first: 1) { edges { node { id } } } }`, nil)
	var ev struct {
		Data struct {
			Evaluations struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &ev); err != nil || len(ev.Data.Evaluations.Edges) == 0 {
		return fmt.Errorf("no evaluation: %s", out)
	}
	e := ev.Data.Evaluations.Edges[0].Node.ID
	for _, b := range []int{2_000_000_000, 100_000} {
		start := time.Now()
		out := t.post(`query($a: ID!, $b: Int!) { compareEvaluations(a: $a, b: $a, bootstrap: $b) }`, map[string]any{"a": e, "b": b})
		fmt.Printf("   compareEvaluations bootstrap %d: %s (%.2f s)\n", b, trim(out), time.Since(start).Seconds())
	}
	return nil
}

func zipFiles(w io.Writer, paths []string) error {
	zw := zip.NewWriter(w)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mw, err := zw.Create(filepath.Base(p))
		if err != nil {
			return err
		}
		if _, err := mw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

func (t target) upload(mutation, corpus string, archive []byte) string {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	format := "brat"
	if corpus == "scored" {
		format = "i2b2"
	}
	selection := "__typename"
	if mutation == "startImport" {
		selection = "id"
	}
	query := fmt.Sprintf(`mutation($files: [Upload!]!) { %s(input: {corpus: %q, format: %q}, files: $files) { %s } }`,
		mutation, corpus, format, selection)
	ops, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"files": []any{nil}}})
	mw.WriteField("operations", string(ops))
	mw.WriteField("map", `{"0": ["variables.files.0"]}`)
	w, _ := mw.CreateFormFile("0", "notes.zip")
	w.Write(archive)
	mw.Close()
	return t.do(&body, mw.FormDataContentType())
}

func (t target) post(query string, vars map[string]any) string {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return t.do(bytes.NewReader(body), "application/json")
}

func (t target) do(body io.Reader, contentType string) string {
	req, err := http.NewRequest("POST", t.url+"/graphql", body)
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+t.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return strings.TrimSpace(string(out))
}

// wait polls a job until it ends, and says how it ended.
func (t target) wait(id string) string {
	for {
		out := t.post(`query($id: ID!) { jobs(first: 1, where: {id: $id}) { edges { node { status error } } } }`, map[string]any{"id": id})
		var r struct {
			Data struct {
				Jobs struct {
					Edges []struct {
						Node struct{ Status, Error string }
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Data.Jobs.Edges) == 0 {
			return "? " + trim(out)
		}
		n := r.Data.Jobs.Edges[0].Node
		if n.Status != "queued" && n.Status != "running" {
			return n.Status + " " + n.Error
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// jobID is the id a mutation that queues a job answered with.
func jobID(out string) (string, bool) {
	var r struct {
		Data map[string]struct{ ID string }
	}
	if json.Unmarshal([]byte(out), &r) != nil {
		return "", false
	}
	for _, j := range r.Data {
		if j.ID != "" {
			return j.ID, true
		}
	}
	return "", false
}

func (t target) healthz() string {
	resp, err := http.Get(t.url + "/healthz")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	return resp.Status
}

// resetPeak sets the server's peak memory (VmHWM) to what it holds now.
func (t target) resetPeak() {
	if t.pid > 0 {
		os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", t.pid), []byte("5"), 0)
	}
}

// status is one field of /proc/PID/status ("683232 kB").
func (t target) status(field string) string {
	if t.pid <= 0 {
		return "?"
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", t.pid))
	if err != nil {
		return err.Error()
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func trim(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
