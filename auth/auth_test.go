package auth

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"deidcorpus/ent"
)

// TestEveryTypeHasARowFilter: each ent type's queries pass a rule; a new
// type without one is closed to all but admins, and fails here.
func TestEveryTypeHasARowFilter(t *testing.T) {
	ct := reflect.TypeOf(ent.Client{})
	n := 0
	for i := range ct.NumField() {
		f := ct.Field(i)
		if !f.IsExported() || !strings.HasSuffix(f.Type.String(), "Client") {
			continue
		}
		n++
		if _, ok := rowFilters[f.Name]; !ok {
			t.Errorf("ent type %s has no row filter in filter.go", f.Name)
		}
	}
	if n < 10 || n != len(rowFilters) {
		t.Errorf("%d ent types, %d row filters", n, len(rowFilters))
	}
}

func TestTokens(t *testing.T) {
	a, b := NewToken(), NewToken()
	if a == b || !strings.HasPrefix(a, TokenPrefix) || len(a) != len(TokenPrefix)+52 {
		t.Fatalf("tokens %q, %q", a, b)
	}
	if HashToken(a) == HashToken(b) || len(HashToken(a)) != 64 || strings.Contains(HashToken(a), a[len(TokenPrefix):]) {
		t.Fatalf("hash %q", HashToken(a))
	}
	if p := ShownPrefix(a); p != a[:len(TokenPrefix)+6] {
		t.Fatalf("prefix %q", p)
	}
}

func TestArguments(t *testing.T) {
	args := map[string]any{"input": map[string]any{"corpus": "c"}, "id": "42"}
	if got := lookup(args, "input.corpus"); got != "c" {
		t.Errorf("input.corpus = %v", got)
	}
	if got := lookup(args, "input.other"); got != nil {
		t.Errorf("input.other = %v", got)
	}
	if got := lookup(args, "id.x"); got != nil {
		t.Errorf("id.x = %v", got)
	}
	for _, v := range []any{"42", 42, int64(42), float64(42)} {
		if id, err := toID(v); err != nil || id != 42 {
			t.Errorf("toID(%#v) = %d, %v", v, id, err)
		}
	}
	if _, err := toID("x"); err == nil {
		t.Error(`toID("x") succeeded`)
	}
	if _, err := ParseRole("root"); err == nil || !strings.Contains(err.Error(), "admin, curator, annotator, researcher") {
		t.Errorf("ParseRole: %v", err)
	}
	if got := roleList([]Role{Admin, Curator}); got != "admin or curator" {
		t.Errorf("roleList = %q", got)
	}
}

// A token's lifetime: admins may make tokens that never expire; others get
// 1 to MaxOwnTokenDays days, and are told only what they may ask for.
func TestTokenLifetime(t *testing.T) {
	admin, researcher := &Viewer{Name: "a", Role: Admin}, &Viewer{Name: "r", Role: Researcher}
	for _, c := range []struct {
		v    *Viewer
		days int
		ttl  time.Duration
		err  string
	}{
		{admin, 0, 0, ""},
		{admin, MaxTokenDays, MaxTokenDays * 24 * time.Hour, ""},
		{admin, MaxTokenDays + 1, 0, "a token lasts 1 to 36500 days, or 0 for no expiry (not 36501)"},
		{researcher, 30, 30 * 24 * time.Hour, ""},
		{researcher, 0, 0, "only admins make tokens that never expire"},
		{researcher, 400, 0, "a token you make lasts 1 to 365 days (not 400)"},
	} {
		ttl, err := c.v.TokenLifetime(c.days)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s, %d days: error %v, want %q", c.v.Role, c.days, err, c.err)
			}
			continue
		}
		if err != nil || ttl != c.ttl {
			t.Errorf("%s, %d days: %v, %v; want %v", c.v.Role, c.days, ttl, err, c.ttl)
		}
	}
}

// TestJobKindsFollowTheRules: a restricted role reads the jobs of the kinds
// its role may start, and only those: the Job row filter's list agrees with
// the rules of the start mutations, so that a demoted account reads no job
// of the role it lost, and a role given a new kind sees its jobs.
func TestJobKindsFollowTheRules(t *testing.T) {
	starts := map[string]string{"import": "Mutation.startImport", "export": "Mutation.startExport",
		"evaluate": "Mutation.startEvaluation", "train": "Mutation.startTraining", "tag": "Mutation.startTagging",
		"experiment": "Mutation.startExperiment", "derive": "Mutation.startDerive", "resynthesize": "Mutation.startResynthesis"}
	for _, role := range []Role{Annotator, Researcher} {
		for kind, op := range starts {
			r, ok := rules[op]
			if !ok {
				t.Fatalf("no rule for %s", op)
			}
			may, reads := slices.Contains(r.Roles, role), slices.Contains(JobKinds[role], kind)
			if may != reads {
				t.Errorf("%s: %s may start %s jobs: %v; reads them: %v", role, kind, op, may, reads)
			}
		}
		for _, kind := range JobKinds[role] {
			if _, ok := starts[kind]; !ok {
				t.Errorf("%s reads %s jobs, which no mutation starts", role, kind)
			}
		}
	}
}
