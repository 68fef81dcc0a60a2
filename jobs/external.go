package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// ExternalClient calls external taggers over HTTP.
type ExternalClient struct {
	http *http.Client
	opt  ExternalOptions
}

// newExternalClient makes a client with opt's bounds, defaults filled in.
func newExternalClient(opt ExternalOptions) *ExternalClient {
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
	return &ExternalClient{opt: opt, http: &http.Client{
		Timeout: opt.Timeout,
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

// post sends body to endpoint, trying again with backoff while the failure
// may pass. Once the attempts are spent the error names the endpoint and is
// coded invalid: the job fails at once instead of retrying what the client
// has retried already (the registered endpoint is the model's, not ours).
func (c *ExternalClient) post(ctx context.Context, endpoint string, body []byte) (*ExternalResponse, error) {
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
		out, err := c.postOnce(ctx, endpoint, body)
		var tr *transient
		if !errors.As(err, &tr) {
			return out, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		last = err
	}
	return nil, apperr.New(apperr.Invalid, "external tagger %s: %v (tried %d times)", endpoint, last, c.opt.Attempts)
}

func (c *ExternalClient) postOnce(ctx context.Context, endpoint string, body []byte) (*ExternalResponse, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, apperr.New(apperr.Invalid, "external tagger %s: %v", endpoint, err)
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
		return nil, apperr.New(apperr.Invalid, "external tagger %s answered %s", endpoint, resp.Status)
	}
	var out ExternalResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, &transient{fmt.Sprintf("no whole answer within %s", c.opt.Timeout)}
		}
		return nil, apperr.New(apperr.Invalid, "external tagger %s: bad response: %v", endpoint, err)
	}
	return &out, nil
}

// Tag sends documents to an external tagger and returns them with its spans,
// their labels ("CITY" or "LOCATION/CITY") read against ts, the corpus's tag
// set (nil: open), as an import reads a file's: a type of a declared tag set
// gets its category, so that the spans score against the gold.
func (c *ExternalClient) Tag(ctx context.Context, endpoint string, ts *phi.TagSet, docs []pipeline.Document) ([]pipeline.Document, error) {
	req := ExternalRequest{Documents: make([]ExternalDocument, len(docs))}
	for i, d := range docs {
		req.Documents[i] = ExternalDocument{ID: d.ID, Patient: d.Patient, Text: d.Text}
	}
	body, _ := json.Marshal(req)
	out, err := c.post(ctx, endpoint, body)
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
			return nil, apperr.New(apperr.Invalid, "external tagger %s returned unknown document %q", endpoint, od.ID)
		}
		for _, s := range od.Spans {
			cat, typ, found := strings.Cut(s.Label, "/")
			if !found {
				cat, typ = "", s.Label
			}
			cat, typ, err := phi.Normalize(ts, cat, typ)
			if err != nil {
				return nil, apperr.New(apperr.Invalid, "external tagger %s, document %s: span %d-%d label %q: %v", endpoint, od.ID, s.Start, s.End, s.Label, err)
			}
			tagged[i].Spans = append(tagged[i].Spans, pipeline.Span{Start: s.Start, End: s.End, Category: cat, Type: typ})
		}
	}
	for i := range tagged {
		d := &tagged[i]
		if err := d.Validate(true); err != nil {
			return nil, apperr.New(apperr.Invalid, "external tagger %s, document %s: %v", endpoint, d.ID, err)
		}
		d.FillText()
		d.SortSpans()
	}
	return tagged, nil
}
