package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
)

// ExternalOptions bound the calls to external taggers, so that an endpoint
// that hangs or fails cannot hold a job for ever.
type ExternalOptions struct {
	// Timeout bounds one request, from connecting to the end of the answer
	// (default 2 minutes: a request carries a batch of whole patients).
	Timeout time.Duration
	// Attempts is how often a request that may succeed later (no answer, a
	// broken connection, 429 or 5xx) is sent in all (default 3).
	Attempts int
	// Backoff is the wait before the second attempt, doubled before each
	// next one (default 1 s).
	Backoff time.Duration
}

// ExternalClient calls external taggers over HTTP. It follows no redirect
// (a registered endpoint must not hand the notes on to an address nobody
// allowed), and its errors name the model, never the address, and say the
// same of every failure to get an answer (refused, unreachable, timed out,
// an HTTP error), so that a job's error cannot tell which ports of a host
// are open; the server's log has the cause.
type ExternalClient struct {
	http   *http.Client
	opt    ExternalOptions
	logger *slog.Logger
}

// newExternalClient makes a client with opt's bounds, defaults filled in.
func newExternalClient(opt ExternalOptions, logger *slog.Logger) *ExternalClient {
	if opt.Timeout <= 0 {
		opt.Timeout = 2 * time.Minute
	}
	if opt.Attempts <= 0 {
		opt.Attempts = 3
	}
	if opt.Backoff <= 0 {
		opt.Backoff = time.Second
	}
	dialer := &net.Dialer{Timeout: min(opt.Timeout, 10*time.Second)}
	return &ExternalClient{opt: opt, logger: logger, http: &http.Client{
		Timeout:       opt.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         dialer.DialContext,
			TLSHandshakeTimeout: min(opt.Timeout, 10*time.Second),
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		},
	}}
}

// ExternalRequest and ExternalResponse are the protocol of external taggers:
// deidcorpus POSTs the documents as JSON to the model's endpoint and reads
// back spans, offsets in Unicode code points, end exclusive. Documents of one
// patient are always sent in the same request.
type ExternalRequest struct {
	Documents []ExternalDocument `json:"documents"`
}

// ExternalDocument is one note sent to an external tagger.
type ExternalDocument struct {
	ID      string `json:"id"`
	Patient string `json:"patient"`
	Text    string `json:"text"`
}

// ExternalResponse is what an external tagger answers.
type ExternalResponse struct {
	Documents []struct {
		ID    string `json:"id"`
		Spans []struct {
			Start int    `json:"start"`
			End   int    `json:"end"`
			Label string `json:"label"`
		} `json:"spans"`
	} `json:"documents"`
}

// transient is a failure that another attempt may not meet.
type transient struct{ msg string }

func (t *transient) Error() string { return t.msg }

// post sends body to model name's endpoint, trying again with backoff while
// the failure may pass. Once the attempts are spent the error names the
// model and is coded invalid: the job fails at once instead of retrying what
// the client has retried already (the registered endpoint is the model's,
// not ours).
func (c *ExternalClient) post(ctx context.Context, endpoint, name string, body []byte) (*ExternalResponse, error) {
	wait := c.opt.Backoff
	var last error
	for attempt := 1; attempt <= c.opt.Attempts; attempt++ {
		if attempt > 1 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
			wait *= 2
		}
		out, err := c.postOnce(ctx, endpoint, name, body)
		var tr *transient
		if !errors.As(err, &tr) {
			return out, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		last = err
	}
	c.logger.Warn("external tagger gave no answer", "model", name, "attempts", c.opt.Attempts, "cause", last.Error())
	return nil, apperr.New(apperr.Invalid, "external tagger %s gave no usable answer (tried %d times; the server's log says why)", name, c.opt.Attempts)
}

func (c *ExternalClient) postOnce(ctx context.Context, endpoint, name string, body []byte) (*ExternalResponse, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, apperr.New(apperr.Invalid, "external tagger %s: its endpoint is not a URL", name)
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(hr)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, &transient{fmt.Sprintf("no answer within %s", c.opt.Timeout)}
		}
		return nil, &transient{err.Error()}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, &transient{"answered " + resp.Status}
	case resp.StatusCode != http.StatusOK:
		// Logged, not told: the status would tell an HTTP server from none.
		c.logger.Warn("external tagger refused the request", "model", name, "status", resp.Status, "location", resp.Header.Get("Location") != "")
		return nil, apperr.New(apperr.Invalid, "external tagger %s gave no usable answer (the server's log says why; redirects are not followed)", name)
	}
	var out ExternalResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, &transient{fmt.Sprintf("no whole answer within %s", c.opt.Timeout)}
		}
		return nil, apperr.New(apperr.Invalid, "external tagger %s: bad response: %v", name, err)
	}
	return &out, nil
}

// Tag sends documents to an external tagger and returns them with its spans,
// their labels ("CITY" or "LOCATION/CITY") read against ts, the corpus's tag
// set (nil: open), as an import reads a file's: a type of a declared tag set
// gets its category, so that the spans score against the gold.
func (c *ExternalClient) Tag(ctx context.Context, endpoint, name string, ts *phi.TagSet, docs []pipeline.Document) ([]pipeline.Document, error) {
	req := ExternalRequest{Documents: make([]ExternalDocument, len(docs))}
	for i, d := range docs {
		req.Documents[i] = ExternalDocument{ID: d.ID, Patient: d.Patient, Text: d.Text}
	}
	body, _ := json.Marshal(req)
	out, err := c.post(ctx, endpoint, name, body)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]int, len(docs))
	for i, d := range docs {
		byID[d.ID] = i
	}
	tagged := make([]pipeline.Document, len(docs))
	for i, d := range docs {
		tagged[i] = d
		tagged[i].Spans = nil
	}
	for _, od := range out.Documents {
		i, ok := byID[od.ID]
		if !ok {
			return nil, apperr.New(apperr.Invalid, "external tagger %s returned unknown document %q", name, od.ID)
		}
		for _, s := range od.Spans {
			cat, typ, found := strings.Cut(s.Label, "/")
			if !found {
				cat, typ = "", s.Label
			}
			cat, typ, err := phi.Normalize(ts, cat, typ)
			if err != nil {
				return nil, apperr.New(apperr.Invalid, "external tagger %s, document %s: span %d-%d label %q: %v", name, od.ID, s.Start, s.End, s.Label, err)
			}
			tagged[i].Spans = append(tagged[i].Spans, pipeline.Span{Start: s.Start, End: s.End, Category: cat, Type: typ})
		}
	}
	for i := range tagged {
		d := &tagged[i]
		if err := d.Validate(true); err != nil {
			return nil, apperr.New(apperr.Invalid, "external tagger %s, document %s: %v", name, d.ID, err)
		}
		d.FillText()
		d.SortSpans()
	}
	return tagged, nil
}
