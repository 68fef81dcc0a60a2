// Command bomb uploads zip bombs to a running server and reports its memory:
// each upload is an archive of about a megabyte whose one i2b2 member
// decompresses to -size bytes of zeros (internal/zipbomb), sent to
// importDocuments (or startImport) by -n clients at once. Given the
// server's process id, it prints the server's resident memory before and
// its peak (VmHWM) after, from /proc.
//
//	deidcorpus serve --db /tmp/b.db --admin-token-file /tmp/b.token &
//	go run ./bench/bomb -token-file /tmp/b.token -pid $!
//
// It only connects to the address given (loopback by default).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"sync"

	"deidcorpus/internal/zipbomb"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bomb:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("bomb", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:8080/graphql", "the server's GraphQL endpoint")
	tokenFile := fs.String("token-file", "", "a file holding an admin's API token (required)")
	size := fs.Int64("size", 1<<30, "bytes the member decompresses to")
	n := fs.Int("n", 1, "clients uploading at once")
	mutation := fs.String("mutation", "importDocuments", "importDocuments or startImport")
	pid := fs.Int("pid", 0, "the server's process id, to read its memory")
	member := fs.String("member", "100-01.xml", "the member's name (its extension picks the format that reads it)")
	format := fs.String("format", "i2b2", "the import's format")
	if err := fs.Parse(args); err != nil {
		return err
	}
	token, err := os.ReadFile(*tokenFile)
	if err != nil {
		return err
	}
	var archive bytes.Buffer
	if err := zipbomb.Write(&archive, *member, *size); err != nil {
		return err
	}
	fmt.Printf("archive %d bytes, member %s of %d MiB, %d clients, %s\n", archive.Len(), *member, *size>>20, *n, *mutation)
	if *pid > 0 {
		fmt.Printf("server VmRSS before: %s\n", procStatus(*pid, "VmRSS"))
	}
	var wg sync.WaitGroup
	for i := range *n {
		wg.Go(func() {
			fmt.Printf("client %d: %s\n", i, upload(*url, strings.TrimSpace(string(token)), *mutation, *format, i, archive.Bytes()))
		})
	}
	wg.Wait()
	if *pid > 0 {
		fmt.Printf("server VmHWM (peak) after: %s, VmRSS after: %s\n", procStatus(*pid, "VmHWM"), procStatus(*pid, "VmRSS"))
	}
	return nil
}

// upload sends one archive and returns the response's status and errors.
func upload(url, token, mutation, format string, i int, archive []byte) string {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	query := fmt.Sprintf(`mutation($files: [Upload!]!) { %s(input: {corpus: "bomb%d", format: %q}, files: $files) { __typename } }`,
		mutation, i, format)
	ops, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"files": []any{nil}}})
	mw.WriteField("operations", string(ops))
	mw.WriteField("map", `{"0": ["variables.files.0"]}`)
	w, _ := mw.CreateFormFile("0", "bomb.zip")
	w.Write(archive)
	mw.Close()
	req, err := http.NewRequest("POST", url, &body)
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	return resp.Status + " " + strings.TrimSpace(string(out))
}

// procStatus is one field of /proc/PID/status ("683232 kB").
func procStatus(pid int, field string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
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
