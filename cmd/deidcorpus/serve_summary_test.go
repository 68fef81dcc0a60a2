package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A plain serve on a new database says, in a few lines, where it is, a
// link that signs in as the admin, and the key file to back up; requests
// are not logged unless --log-requests asks (then as JSON with
// --log-format json).
func TestServeSummary(t *testing.T) {
	for _, c := range []struct {
		args     []string
		requests bool
	}{{nil, false}, {[]string{"--log-requests", "--log-format", "json"}, true}} {
		db := filepath.Join(t.TempDir(), "s.db")
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan int, 1)
		go func() {
			args := append([]string{"serve", "--no-workers", "--addr", "127.0.0.1:0", "--db", db}, c.args...)
			done <- run(ctx, args, func(string) string { return "" }, strings.NewReader(""), io.Discard, pw)
			pw.Close()
		}()
		sc := bufio.NewScanner(pr)
		var said []string
		for sc.Scan() && !strings.Contains(sc.Text(), "requests are logged with --log-requests only") {
			said = append(said, sc.Text())
		}
		summary := strings.Join(said, "\n")
		url := regexp.MustCompile(`serving on (http://\S+)`).FindStringSubmatch(summary)
		require.NotNil(t, url, summary)
		token, err := os.ReadFile(db + ".admin-token")
		require.NoError(t, err)
		assert.Contains(t, summary, "  sign in as admin: "+url[1]+"/#token="+strings.TrimSpace(string(token)))
		assert.Contains(t, summary, "encrypts the surrogate mappings: back it up, never with the database's backups")
		lines := make(chan string, 100)
		go func() {
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Read as the server writes: a request's log line waits for its reader.
		resp, err := http.Get(url[1] + "/healthz")
		require.NoError(t, err)
		resp.Body.Close()
		logged := false
		timeout := time.After(2 * time.Second) // waits for a line, asserts nothing of time
	wait:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break wait
				}
				if strings.Contains(l, `"msg":"request"`) && strings.Contains(l, `"path":"/healthz"`) {
					logged = true
					break wait
				}
				assert.NotContains(t, l, "/healthz")
			case <-timeout:
				break wait
			}
		}
		cancel()
		go io.Copy(io.Discard, pr)
		<-done
		assert.Equal(t, c.requests, logged, "%v", c.args)
	}
}
