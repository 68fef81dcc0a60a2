package server

import (
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"deidcorpus/apperr"
	"deidcorpus/pipeline/formats"
	"deidcorpus/store"
)

// handleCorpusDownload serves a corpus's documents with one annotation set as
// a zip archive (?set=gold&format=i2b2), the link exportCorpus returns.
func handleCorpusDownload(logger *slog.Logger, st *store.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		set := r.URL.Query().Get("set")
		if set == "" {
			set = "gold"
		}
		format := r.URL.Query().Get("format")
		if format == "" {
			format = "i2b2"
		}
		split := r.URL.Query().Get("split") // every document when empty
		if err := st.Authorize(r.Context(), "download.corpus", map[string]any{"name": name}); err != nil {
			httpError(w, logger, err)
			return
		}
		opt := store.ExportOptions{Corpus: name, Set: set, Format: format, Split: split}
		serveZip(w, r, logger, safeFilename(opt.Name())+".zip", func(create func(string) (io.Writer, error)) error {
			return st.ExportTo(r.Context(), opt, create)
		}, func() { auditDownload(r, st, logger, "corpus", name+"/"+set) })
	})
}

// serveZip streams the files write makes as a zip archive download, each
// written to the response as it is rendered: the archive is never whole in
// memory. The headers go out with the first bytes (and started is called
// then, to audit the download), so an error before them (no such corpus,
// documents the format cannot hold) is still answered with its status; one
// after them aborts the response, and the client sees a broken transfer
// rather than a truncated archive. A HEAD request gets the headers: the
// archive is not made (nor the download audited) to be thrown away.
func serveZip(w http.ResponseWriter, r *http.Request, logger *slog.Logger, filename string, write func(create func(string) (io.Writer, error)) error, started func()) {
	headers := func() {
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	}
	if r.Method == http.MethodHead {
		headers()
		return
	}
	out := &lazyResponse{w: w, start: func() {
		started()
		headers()
	}}
	z := formats.NewZipFiles(out)
	err := write(z.Create)
	if err == nil {
		err = z.Close()
	}
	if err == nil {
		return
	}
	if !out.started {
		httpError(w, logger, err)
		return
	}
	logger.Error("download failed after it began", "file", filename, "err", err)
	panic(http.ErrAbortHandler)
}

// lazyResponse calls start before its first write.
type lazyResponse struct {
	w       io.Writer
	start   func()
	started bool
}

func (l *lazyResponse) Write(p []byte) (int, error) {
	if !l.started {
		l.started = true
		l.start()
	}
	return l.w.Write(p)
}

// handleReleaseDownload serves a release as a zip archive with MANIFEST and
// DATASHEET.md (?format=i2b2|brat|jsonl|...).
func handleReleaseDownload(logger *slog.Logger, st *store.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ref := r.PathValue("ref")
		format := r.URL.Query().Get("format")
		if format == "" {
			format = "i2b2"
		}
		if err := st.Authorize(r.Context(), "download.release", map[string]any{"ref": ref}); err != nil {
			httpError(w, logger, err)
			return
		}
		serveZip(w, r, logger, safeFilename(ref+"-"+format)+".zip", func(create func(string) (io.Writer, error)) error {
			return st.ExportReleaseTo(r.Context(), ref, format, create, nil)
		}, func() { auditDownload(r, st, logger, "release", ref) })
	})
}

// handleArtifactDownload serves a file a job produced (an export archive).
func handleArtifactDownload(logger *slog.Logger, st *store.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil {
			httpError(w, logger, apperr.New(apperr.Invalid, "artifact id %q is not a number", r.PathValue("id")))
			return
		}
		if err := st.Authorize(r.Context(), "download.artifact", map[string]any{"id": id}); err != nil {
			httpError(w, logger, err)
			return
		}
		a, err := st.Artifact(r.Context(), id)
		if err != nil {
			httpError(w, logger, err)
			return
		}
		headers := func() {
			w.Header().Set("Content-Type", a.ContentType)
			w.Header().Set("Content-Disposition", `attachment; filename="`+safeFilename(a.Name)+`"`)
			w.Header().Set("Content-Length", strconv.Itoa(a.Size))
			w.Header().Set("ETag", `"`+a.Sha256+`"`)
		}
		if r.Method == http.MethodHead {
			headers()
			return
		}
		// Served as it is read, a chunk at a time; the headers go out with
		// the first bytes, so a file that cannot be read is an error status,
		// and one damaged later a broken transfer, never a short file.
		out := &lazyResponse{w: w, start: func() {
			auditDownload(r, st, logger, "artifact", strconv.Itoa(id))
			headers()
		}}
		if _, err := io.Copy(out, st.ArtifactContent(r.Context(), a)); err != nil {
			if !out.started {
				httpError(w, logger, err)
				return
			}
			logger.Error("download failed after it began", "artifact", id, "err", err)
			panic(http.ErrAbortHandler)
		}
	})
}

// auditDownload records an export in the audit log.
func auditDownload(r *http.Request, st *store.Store, logger *slog.Logger, what, id string) {
	err := st.Audit(r.Context(), store.AuditRecord{Action: "export",
		Target: "download." + what, IDs: []string{id}, Detail: r.URL.RawQuery})
	if err != nil {
		logger.Error("write audit log", "target", "download."+what, "err", err)
	}
}

// httpError writes a coded error as plain text; internal errors are logged
// and not shown.
func httpError(w http.ResponseWriter, logger *slog.Logger, err error) {
	err = store.Coded(err)
	code := apperr.CodeOf(err)
	status := map[apperr.Code]int{
		apperr.Invalid: http.StatusBadRequest, apperr.NotFound: http.StatusNotFound,
		apperr.Conflict: http.StatusConflict, apperr.Unauthorized: http.StatusUnauthorized,
		apperr.Forbidden: http.StatusForbidden, apperr.TooMany: http.StatusTooManyRequests,
	}[code]
	msg := err.Error()
	if status == 0 {
		logger.Error("request failed", "err", err)
		status, msg = http.StatusInternalServerError, "internal error"
	}
	http.Error(w, string(code)+": "+msg, status)
}

func safeFilename(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	return string(b)
}
