package store_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestExternalEndpointsAreSecrets: the database holds an external tagger's
// credentials only encrypted; curators read the URL masked, others nothing;
// hosts off the allowlist are refused when registered and when sent to.
func TestExternalEndpointsAreSecrets(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLite, store.WithExternalHosts([]string{"tagger.internal:9000"}))
	const url = "https://deid:s3cret@tagger.internal:9000/tag?api_key=k3y&mode=fast"
	m, err := st.RegisterExternalModel(ctx, "ext", url, nil, "cara")
	require.NoError(t, err)

	var endpoint string
	var enc []byte
	require.NoError(t, st.DB.QueryRow("SELECT endpoint, endpoint_enc FROM models WHERE name = 'ext'").Scan(&endpoint, &enc))
	for _, secret := range []string{"s3cret", "k3y", "deid"} {
		assert.NotContains(t, endpoint, secret)
		assert.False(t, bytes.Contains(enc, []byte(secret)), "the stored URL is encrypted")
	}
	assert.Equal(t, "https://***@tagger.internal:9000/tag?api_key=***&mode=***", endpoint)
	full, err := st.ExternalEndpoint(m)
	require.NoError(t, err)
	assert.Equal(t, url, full, "the job reads the whole URL")

	curator := auth.NewContext(ctx, auth.NewViewer(1, "cara", auth.Curator))
	require.NotNil(t, store.ShownEndpoint(curator, m))
	assert.Equal(t, endpoint, *store.ShownEndpoint(curator, m))
	for _, r := range []auth.Role{auth.Annotator, auth.Researcher} {
		assert.Nil(t, store.ShownEndpoint(auth.NewContext(ctx, auth.NewViewer(2, "x", r)), m), r)
	}

	for _, bad := range []string{"http://tagger.internal:9001/tag", "http://127.0.0.1:9000/", "http://169.254.169.254/latest"} {
		_, err := st.RegisterExternalModel(ctx, "bad", bad, nil, "cara")
		assert.Equal(t, apperr.Invalid, apperr.CodeOf(err), bad)
		assert.ErrorContains(t, err, "is not among the hosts external taggers may be reached at (tagger.internal:9000)")
	}
	// The allowlist as it is when a job sends: a host taken off is refused.
	other := storetest.Open(t, storetest.SQLite, store.WithExternalHosts([]string{"elsewhere"}))
	m.EndpointKeyID = "" // read as a row from before encryption, with the other store's ring
	m.Endpoint = url
	_, err = other.ExternalEndpoint(m)
	assert.ErrorContains(t, err, "is not among the hosts")
}
