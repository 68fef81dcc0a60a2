package store

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/ent/document"
	"deidcorpus/ent/model"
	"deidcorpus/internal/keys"
	"deidcorpus/pipeline"
)

// External taggers receive original notes. So their endpoints are held like
// the other secrets: the whole URL (which may carry a user, a password or an
// API key in its query) encrypted under the key ring, and beside it a masked
// copy that curators read; researchers and annotators read none. Only hosts
// an admin allowed (WithExternalHosts, DEIDCORPUS_EXTERNAL_HOSTS) are
// registered or sent to, so that the server cannot be pointed at an internal
// address; every batch sent is audited with the ids of its documents.

// ExternalHostsEnv names the environment variable listing the hosts
// external taggers may be reached at: host or host:port, comma-separated.
const ExternalHostsEnv = "DEIDCORPUS_EXTERNAL_HOSTS"

// WithExternalHosts allows external taggers at these hosts ("tagger.internal",
// "10.0.0.5:9000"; a host without a port allows every port). None: external
// taggers are refused.
func WithExternalHosts(hosts []string) Option {
	return func(o *options) { o.externalHosts = hosts }
}

// ParseExternalHosts reads a comma-separated list of hosts.
func ParseExternalHosts(list string) []string {
	var out []string
	for _, h := range strings.Split(list, ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// checkEndpoint parses an endpoint and refuses one that is not an http(s)
// URL or whose host is not allowed.
func (s *Store) checkEndpoint(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, apperr.New(apperr.Invalid, "endpoint %s is not an http(s) URL", MaskEndpoint(endpoint))
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if slices.Contains(s.externalHosts, host) || slices.Contains(s.externalHosts, net.JoinHostPort(host, port)) {
		return u, nil
	}
	if len(s.externalHosts) == 0 {
		return nil, apperr.New(apperr.Invalid, "external taggers are not allowed on this server: an admin lists the hosts they may be "+
			"reached at in %s (host or host:port, comma-separated)", ExternalHostsEnv)
	}
	return nil, apperr.New(apperr.Invalid, "host %s is not among the hosts external taggers may be reached at (%s); an admin adds it to %s",
		net.JoinHostPort(host, port), strings.Join(s.externalHosts, ", "), ExternalHostsEnv)
}

// MaskEndpoint returns an endpoint with its user, password and query values
// replaced by ***: what a curator reads.
func MaskEndpoint(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "(not a URL)"
	}
	user := u.User != nil
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"***"}
		}
		u.RawQuery = strings.ReplaceAll(q.Encode(), "%2A%2A%2A", "***")
	}
	u.Fragment, u.RawFragment = "", ""
	if user {
		return strings.Replace(u.String(), "://", "://***@", 1)
	}
	return u.String()
}

// endpointAAD binds an encrypted endpoint to its model.
func endpointAAD(name string) []byte { return []byte("external tagger endpoint\x00" + name) }

// sealEndpoint returns what a model row stores of endpoint.
func sealEndpoint(r *keys.Ring, name, endpoint string) (masked string, enc []byte, keyID string) {
	keyID, enc = r.Encrypt([]byte(endpoint), endpointAAD(name))
	return MaskEndpoint(endpoint), enc, keyID
}

// ExternalEndpoint is the whole URL of an external model, for the job that
// sends it documents: decrypted, and checked against the allowed hosts as
// they are now.
func (s *Store) ExternalEndpoint(m *ent.Model) (string, error) {
	if m.Kind != model.KindExternal {
		return "", apperr.New(apperr.Invalid, "model %s is not an external tagger", m.Name)
	}
	endpoint := m.Endpoint // a row from before encryption, until migrated
	if m.EndpointKeyID != "" {
		r, err := s.KeyRing()
		if err != nil {
			return "", err
		}
		pt, err := r.Decrypt(m.EndpointKeyID, m.EndpointEnc, endpointAAD(m.Name))
		if err != nil {
			return "", fmt.Errorf("model %s: endpoint: %w", m.Name, err)
		}
		endpoint = string(pt)
	}
	if _, err := s.checkEndpoint(endpoint); err != nil {
		return "", fmt.Errorf("model %s: %w", m.Name, err)
	}
	return endpoint, nil
}

// ShownEndpoint is what ctx's viewer reads of a model's endpoint: the masked
// URL for curators and admins, nothing for others.
func ShownEndpoint(ctx context.Context, m *ent.Model) *string {
	v := auth.FromContext(ctx)
	if m.Kind != model.KindExternal || (v != nil && !v.SeesAllCorpora()) {
		return nil
	}
	masked := MaskEndpoint(m.Endpoint)
	return &masked
}

// AuditExternalSend records that docs of corpus c were sent to external
// model m: one entry per batch, with the documents' ids.
func (s *Store) AuditExternalSend(ctx context.Context, c *ent.Corpus, m *ent.Model, docs []pipeline.Document) error {
	names := make([]string, len(docs))
	for i, d := range docs {
		names[i] = d.ID
	}
	ids, err := s.Client.Document.Query().Where(document.CorpusID(c.ID), document.ExternalIDIn(names...)).
		Select(document.FieldID).Ints(auth.System(ctx))
	if err != nil {
		return err
	}
	rec := AuditRecord{Action: "send", Target: "external." + m.Name, IDs: make([]string, len(ids)),
		Detail: fmt.Sprintf("%d documents of corpus %q sent to external tagger %s at %s", len(docs), c.Name, m.Name, MaskEndpoint(m.Endpoint))}
	for i, id := range ids {
		rec.IDs[i] = fmt.Sprint(id)
	}
	return s.Audit(context.WithoutCancel(ctx), rec)
}

// sealExternalEndpoints encrypts the endpoints that a database from before
// kept in clear (data upgrade). Without a key it leaves them and says so.
func (s *Store) sealExternalEndpoints(ctx context.Context) (secretsGone bool, err error) {
	ms, err := s.Client.Model.Query().Where(model.KindEQ(model.KindExternal), model.EndpointKeyID("")).All(ctx)
	if err != nil || len(ms) == 0 {
		return false, err
	}
	r, err := s.KeyRing()
	if err != nil {
		s.logger.Warn("external taggers' endpoints stay in clear until a key is configured", "models", len(ms), "err", err)
		return false, nil
	}
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		for _, m := range ms {
			masked, enc, keyID := sealEndpoint(r, m.Name, m.Endpoint)
			if err := tx.Model.UpdateOneID(m.ID).SetEndpoint(masked).SetEndpointEnc(enc).SetEndpointKeyID(keyID).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	return err == nil, err
}
