package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/synth"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestResynthesisPolicyIsData: a policy naming a file or a directory on the
// server is refused without the file being read: the error names the field
// and neither the path nor the file's first line (here a secret nobody may
// read). A policy carrying its mapping's text runs; a pack that is not built
// in is refused with the built-in ones' names.
func TestResynthesisPolicyIsData(t *testing.T) {
	st, ts, _ := newServer(t, storetest.SQLite)
	ctx := context.Background()
	var docs []pipeline.Document
	require.NoError(t, synth.Generate(synth.Options{Patients: 3, Seed: 4}, func(p synth.Patient) error {
		docs = append(docs, p.Docs...)
		return nil
	}))
	_, err := st.ImportDocuments(ctx, store.ImportOptions{Corpus: "notes", TagSet: "i2b2-2014"}, docs)
	require.NoError(t, err)
	curator := client.New(ts.Config.Handler, client.Path("/graphql"),
		client.AddHeader("Authorization", "Bearer "+storetest.Token(t, st, "cur", auth.Curator)))
	secret := filepath.Join(t.TempDir(), "admin.tokens")
	require.NoError(t, os.WriteFile(secret, []byte("s3cr3t-admin-token not a mapping\n"), 0o000))
	start := func(policy map[string]any) (string, error) {
		var resp struct{ StartResynthesis struct{ ID string } }
		err := curator.Post(`mutation($p: Map) { startResynthesis(input: {corpus: "notes", out: "notes-r", policy: $p}) { id } }`,
			&resp, client.Var("p", policy))
		return resp.StartResynthesis.ID, err
	}

	for _, c := range []struct {
		policy map[string]any
		want   string
	}{
		{map[string]any{"mapping": secret}, "policy: mapping is a server path"},
		{map[string]any{"mapping": "/etc/passwd"}, "policy: mapping is a server path"},
		{map[string]any{"resources": filepath.Dir(secret)}, "policy: resources is a server path"},
		{map[string]any{"resources": "fr"}, `policy: resources: no built-in pack "fr" (known: en, es)`},
		{map[string]any{"mappingText": "@to i2b2-2014\ns3cr3t-admin-token not a mapping\n"}, "policy: mappingText line 2: want 2 fields"},
	} {
		_, err := start(c.policy)
		require.Error(t, err, c.policy)
		var errs []struct{ Message string }
		require.NoError(t, json.Unmarshal([]byte(err.Error()), &errs), err)
		require.Len(t, errs, 1)
		assert.Contains(t, errs[0].Message, c.want)
		for _, leaked := range []string{"s3cr3t", secret, "root:"} {
			assert.NotContains(t, errs[0].Message, leaked)
		}
	}

	id, err := start(map[string]any{"resources": "en",
		"mappingText": "@to i2b2-2014\n@default keep\nNAME/PATIENT NAME/PATIENT\n"})
	require.NoError(t, err)
	states := follow(t, ts.Config.Handler, ts.Token, id)
	last := states[len(states)-1]
	require.Equal(t, "succeeded", last.Status, last.Error)
}
