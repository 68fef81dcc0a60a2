// Package web is the dashboard: a static single-page application in static/
// (plain JavaScript modules, hand-written SVG charts, no third-party code)
// embedded in the binary and served at /. It talks only to /graphql and
// /download/, through static/js/api.js, with the API token of the signed-in
// account (from a #token= link or the sign-in view, kept in localStorage), so
// it sees exactly what the API lets that account see. The files themselves
// are public: they hold no data.
//
// Each page is one module in static/js/pages/, registered in
// static/js/routes.js; pages that need an API feature (jobs, releases, ...)
// name the root field they need and stay out of the navigation until the
// schema has it. What a role may use is decided in one module,
// static/js/roles.js, a mirror of package auth's rules for the interface only.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"time"
)

//go:embed static
var static embed.FS

// FS is the dashboard's files, index.html at its root.
func FS() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}

// csp keeps the page to its own origin: no inline script, no third-party
// hosts (a hospital network reaches none anyway).
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

type file struct {
	data  []byte
	etag  string
	ctype string
}

// Handler serves the dashboard for GET and HEAD on any path it has a file
// for ("/" is index.html). Files carry a content-hash ETag and must be
// revalidated, so a new binary's dashboard is picked up at once.
func Handler() http.Handler {
	files := map[string]file{}
	root := FS()
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		ctype := mime.TypeByExtension(path.Ext(p))
		if ctype == "" {
			ctype = http.DetectContentType(data)
		}
		files["/"+p] = file{data: data, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: ctype}
		return nil
	})
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p := r.URL.Path
		if p == "/" {
			p = "/index.html"
		}
		f, ok := files[p]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.ctype)
		h.Set("ETag", f.etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", csp)
		http.ServeContent(w, r, p, time.Time{}, bytes.NewReader(f.data))
	})
}
