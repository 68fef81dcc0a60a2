package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
)

// offline commands work on files only and open no database.
var offline = map[string]bool{"eval": true, "synth": true, "serve": true, "worker": true, "version": true}

// TestEveryCommandHasARule: a command that opens the database acts through
// a rule of package auth; a new command fails here until it has one (or is
// declared offline).
func TestEveryCommandHasARule(t *testing.T) {
	ops := auth.Operations()
	for name := range commands {
		if offline[name] {
			continue
		}
		found := false
		for _, op := range ops {
			found = found || op == "cli."+name || strings.HasPrefix(op, "cli."+name+".")
		}
		assert.True(t, found, "command %s has no cli.%s rule in package auth", name, name)
	}
}

// TestCLIActsForTheTokenAccount: with --token a command is limited to what
// the account may do; without one it is the local operator; both are
// audited under their names.
func TestCLIActsForTheTokenAccount(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	code, _, errs := cli(t, "import", "--db", db, "--corpus", "orig", "--tagset", "i2b2-2014", "../../testdata/i2b2")
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "resynth", "--db", db, "--corpus", "orig", "--out", "surr")
	require.Equal(t, 0, code, errs)

	code, _, errs = cli(t, "users", "add", "--role", "researcher", "--db", db)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "users add takes NAME (got 0 arguments)")
	code, out, errs := cli(t, "users", "add", "rita", "--role", "researcher", "--db", db)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "rita: researcher, enabled")
	code, token, errs := cli(t, "tokens", "create", "--user", "rita", "--db", db, "--expires", "30d")
	require.Equal(t, 0, code, errs)
	token = strings.TrimSpace(token)
	assert.True(t, strings.HasPrefix(token, auth.TokenPrefix), token)
	assert.Contains(t, errs, "shown this once")

	// The researcher sees the surrogate corpus and not the original.
	code, _, errs = cli(t, "export", "--db", db, "--token", token, "--corpus", "orig", "--out", filepath.Join(dir, "o.zip"))
	assert.Equal(t, 3, code, errs)
	assert.Contains(t, errs, `no corpus named "orig"`)
	code, _, errs = cli(t, "export", "--db", db, "--token", token, "--corpus", "surr", "--out", filepath.Join(dir, "s.zip"))
	assert.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "users", "list", "--db", db, "--token", token)
	assert.Equal(t, 5, code, errs)
	assert.Contains(t, errs, "deidcorpus users list: this command needs the admin role (you are")
	code, _, errs = cli(t, "tokens", "create", "--db", db, "--token", token, "--user", "admin")
	assert.Equal(t, 5, code, errs)
	assert.Contains(t, errs, "only admins act for other accounts")
	code, _, errs = cli(t, "tokens", "create", "--db", db)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, "the local operator has no account")

	code, out, errs = cli(t, "tokens", "list", "--db", db, "--token", token)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "rita")
	assert.NotContains(t, out, token, "a listed token shows its prefix only")
	assert.Contains(t, out, auth.ShownPrefix(token))
	code, out, errs = cli(t, "tokens", "list", "--db", db, "--token", token, "--json")
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, out, token)
	var tokens []struct{ User, Prefix, Status string }
	require.NoError(t, json.Unmarshal([]byte(out), &tokens))
	require.Len(t, tokens, 1)
	assert.Equal(t, "rita", tokens[0].User)
	assert.Equal(t, "active", tokens[0].Status)
	assert.True(t, strings.HasPrefix(token, tokens[0].Prefix), tokens[0].Prefix)
	code, out, errs = cli(t, "users", "list", "--db", db, "--json")
	require.Equal(t, 0, code, errs)
	var users []struct {
		Name, Role      string
		AssignedCorpora []string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &users))
	assert.Contains(t, users, struct {
		Name, Role      string
		AssignedCorpora []string
	}{"rita", "researcher", []string{}})

	code, out, errs = cli(t, "audit", "list", "--db", db, "--limit", "100")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `rita\s+denied\s+cli.users`, out)
	assert.Regexp(t, `rita\s+cli\s+cli.export`, out)
	assert.Regexp(t, `local:\S+\s+cli\s+cli.resynth`, out)
	// Whole, as JSON, newest first: each entry's chain link is the next one's hash.
	code, out, errs = cli(t, "audit", "list", "--db", db, "--json")
	require.Equal(t, 0, code, errs)
	var entries []struct {
		Seq      int64    `json:"seq"`
		Actor    string   `json:"actor"`
		IDs      []string `json:"ids"`
		PrevHash string   `json:"prevHash"`
		Hash     string   `json:"hash"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &entries))
	require.Greater(t, len(entries), 3)
	for i := 0; i+1 < len(entries); i++ {
		assert.Equal(t, entries[i].Seq-1, entries[i+1].Seq)
		assert.Equal(t, entries[i+1].Hash, entries[i].PrevHash, "entry %d", entries[i].Seq)
	}
	code, _, errs = cli(t, "audit", "verify", "--db", db)
	assert.Equal(t, 0, code, errs)

	// A revoked token is refused, saying so.
	code, out, errs = cli(t, "tokens", "list", "--db", db, "--user", "rita")
	require.Equal(t, 0, code, errs)
	id := strings.Fields(strings.Split(out, "\n")[1])[0]
	code, _, errs = cli(t, "tokens", "revoke", id, "--db", db)
	require.Equal(t, 0, code, errs)
	code, _, errs = cli(t, "stats", "--db", db, "--token", token, "--corpus", "surr")
	assert.Equal(t, 5, code, errs)
	assert.Contains(t, errs, "revoked")
}
