package web

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandlerServesIndexAndModules(t *testing.T) {
	h := Handler()
	rec := get(t, h, "GET", "/")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `<script type="module" src="/js/main.js">`) {
		t.Fatalf("GET / = %d, body %.200q", rec.Code, rec.Body.String())
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP = %q", csp)
	}
	rec = get(t, h, "GET", "/js/main.js")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
		t.Fatalf("GET /js/main.js = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	etag := rec.Header().Get("ETag")
	if rec := get(t, h, "GET", "/js/main.js", "If-None-Match", etag); rec.Code != http.StatusNotModified {
		t.Errorf("revalidation with the ETag = %d, want 304", rec.Code)
	}
	if rec := get(t, h, "GET", "/nope.js"); rec.Code != 404 {
		t.Errorf("GET /nope.js = %d, want 404", rec.Code)
	}
	if rec := get(t, h, "POST", "/"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST / = %d, want 405", rec.Code)
	}
}

// Every module a page imports must be embedded: a missing one is a blank
// page in the browser, not a build error.
func TestImportsResolve(t *testing.T) {
	root := FS()
	err := fs.WalkDir(root, "js", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		src, _ := fs.ReadFile(root, p)
		for _, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue // routes.js lists pages to come in comments
			}
			for _, m := range importRE.FindAllStringSubmatch(line, -1) {
				spec := m[1] + m[2]
				if !strings.HasPrefix(spec, ".") {
					t.Errorf("%s imports %q: only relative modules are served", p, spec)
					continue
				}
				if _, err := fs.Stat(root, pathJoin(p, spec)); err != nil {
					t.Errorf("%s imports %q: %s is not embedded", p, spec, pathJoin(p, spec))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var importRE = regexp.MustCompile(`^import .* from '([^']+)';|import\('([^']+)'\)`)

func pathJoin(from, spec string) string {
	dir := from[:strings.LastIndexByte(from, '/')]
	for {
		switch {
		case strings.HasPrefix(spec, "./"):
			spec = spec[2:]
		case strings.HasPrefix(spec, "../"):
			spec = spec[3:]
			dir = dir[:max(strings.LastIndexByte(dir, '/'), 0)]
		default:
			if dir == "" {
				return spec
			}
			return dir + "/" + spec
		}
	}
}

// api.js is the dashboard's only way to the server: it adds the API token to
// every request. A fetch or socket elsewhere would go without it, and so
// would a plain link to a download (a link cannot carry a header).
func TestOnlyAPIReachesTheServer(t *testing.T) {
	root := FS()
	reach := regexp.MustCompile(`\bfetch\(|new WebSocket\(|XMLHttpRequest|new EventSource\(|href: ['"` + "`" + `]/download/`)
	err := fs.WalkDir(root, "js", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") || p == "js/api.js" {
			return err
		}
		src, _ := fs.ReadFile(root, p)
		for i, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if m := reach.FindString(line); m != "" {
				t.Errorf("%s:%d: %q: requests go through api.js, which sends the token", p, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
