package server_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/auth"
	"deidcorpus/server"
	"deidcorpus/store/storetest"
)

// gqlBody is a JSON request of query and variables.
func gqlBody(t *testing.T, query string, vars map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	return string(b)
}

// refusedAs asserts that a response is a refusal with code invalid saying msg.
func refusedAs(t *testing.T, body, msg string) {
	t.Helper()
	var resp struct {
		Data   map[string]any
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &resp), body[:min(len(body), 300)])
	require.NotEmpty(t, resp.Errors, body[:min(len(body), 300)])
	assert.Contains(t, resp.Errors[0].Message, msg)
	assert.Equal(t, "invalid", resp.Errors[0].Extensions["code"], resp.Errors[0].Message)
	assert.Nil(t, resp.Data["me"])
}

// A query that repeats a field is refused before validation, whose cost is
// the square of the repeats (issue 60: 10,000 repeats took 8.5 s, 700,000
// held the server past the client and its shutdown), whether the repeats
// are written out, spread through a fragment or merged from repeated
// parents; so are a query over the token limit and one of too many fields.
// Queries the dashboard and the IDE send still pass.
func TestQuerySizeLimits(t *testing.T) {
	_, ts, _ := newServer(t, storetest.SQLite)
	refused := func(query, msg string) {
		t.Helper()
		_, body := post(t, ts.URL, ts.Token, gqlBody(t, query, nil))
		refusedAs(t, body, msg)
	}
	cfg := server.DefaultConfig
	refused("{me{"+strings.Repeat("name ", 700_000)+"}}", "longer than "+strconv.Itoa(cfg.MaxTokens)+" tokens")
	refused("{me{"+strings.Repeat("name ", 2000)+"}}", `selects "name" more than 10 times in one selection set`)
	refused("{me{"+strings.Repeat("n: name ", 11)+"}}", `selects "n" more than 10 times`)
	refused("{me{"+strings.Repeat("...F ", 11)+"}} fragment F on User {name}", `selects "name" more than 10 times`)
	refused("{"+strings.Repeat("me{name name} ", 6)+"}", `selects "name" more than 10 times`)
	var distinct strings.Builder
	for i := range cfg.MaxFields + 1 {
		distinct.WriteString("a" + strconv.Itoa(i) + ": __typename ")
	}
	refused("{"+distinct.String()+"}", "more than 2000 fields")
	// A fragment that spreads another twice, eleven deep, is 2^11 fields.
	var frags strings.Builder
	for i := range 11 {
		frags.WriteString("fragment F" + strconv.Itoa(i) + " on User { ...F" + strconv.Itoa(i+1) + " ... on User { ...F" + strconv.Itoa(i+1) + " } } ")
	}
	frags.WriteString("fragment F11 on User { name }")
	refused("{me{...F0}} "+frags.String(), "more than 10 times")

	for _, ok := range []string{"{me{name} me{name id}}", introspection} {
		_, body := post(t, ts.URL, ts.Token, gqlBody(t, ok, nil))
		assert.NotContains(t, body, `"errors"`, body[:min(len(body), 300)])
	}
}

// Every page a caller asks for is capped, literal or variable, first or
// last, at the root or nested (loaded with the root, so refused before
// anything runs); so are the resamples of a comparison (issue 60:
// bootstrap 2,000,000,000 ran the server out of memory) and the folds of an
// experiment.
func TestCountsCapped(t *testing.T) {
	_, ts, _ := newServer(t, storetest.SQLite)
	refused := func(query string, vars map[string]any, msg string) {
		t.Helper()
		_, body := post(t, ts.URL, ts.Token, gqlBody(t, query, vars))
		refusedAs(t, body, msg)
	}
	refused("{documents(first: 1000000){totalCount}}", nil, "documents(first): 1000000 is out of range: a page holds 1 to 1000 rows")
	refused("query($n: Int){documents(last: $n){totalCount}}", map[string]any{"n": 5000}, "documents(last): 5000 is out of range")
	refused("{corpora(first: 1){edges{node{documents(first: 2000){totalCount}}}}}", nil, "documents(first): 2000 is out of range")
	refused("{corpora(first: 0){totalCount}}", nil, "corpora(first): 0 is out of range")
	refused(`{annotationQueue(corpus: "c", set: "s", model: "m", first: 100000){document{id}}}`, nil, "annotationQueue(first): 100000")
	refused(`{surrogateMappings(corpus: "c", first: 5000){scope}}`, nil, "surrogateMappings(first): 5000")
	refused(`mutation{startExperiment(input: {kind: "cv", corpus: "c", k: 1000}){id}}`, nil, "k: 1000 folds, at most 20")
	refused(`mutation{startExperiment(input: {kind: "curve", corpus: "c", other: "d", steps: 500}){id}}`, nil, "steps: 500 points")

	_, body := post(t, ts.URL, ts.Token, gqlBody(t, "query($n: Int){documents(first: $n){totalCount}}", map[string]any{"n": 1000}))
	assert.NotContains(t, body, `"errors"`, body)
}

// A researcher's comparison of two evaluations of a surrogate corpus asks
// for at most the capped resamples (issue 60: bootstrap 2,000,000,000 ran
// the server out of memory); within the caps it runs.
func TestComparisonResamplesCapped(t *testing.T) {
	f := newAuthzFixture(t, storetest.SQLite)
	c := f.client(auth.Researcher)
	for _, tc := range []struct{ args, msg string }{
		{"bootstrap: 2000000000", "bootstrap: 2000000000 is out of range: at most 100000"},
		{"shuffles: 1000000", "shuffles: 1000000 is out of range: at most 100000"},
		{"bootstrap: -1", "bootstrap: -1 is out of range"},
	} {
		var resp struct{ CompareEvaluations map[string]any }
		err := c.Post(`query($a: ID!) { compareEvaluations(a: $a, b: $a, `+tc.args+`) }`, &resp, client.Var("a", f.surrEval))
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.msg)
		assert.Contains(t, err.Error(), `"code":"invalid"`)
	}
	var resp struct{ CompareEvaluations map[string]any }
	require.NoError(t, c.Post(`query($a: ID!) { compareEvaluations(a: $a, b: $a, shuffles: 99, bootstrap: 100000) }`, &resp, client.Var("a", f.surrEval)))
	assert.EqualValues(t, 100000, resp.CompareEvaluations["bootstrap"])
}

// introspection is the query GraphiQL sends on load (graphql-js's
// getIntrospectionQuery).
const introspection = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }
}`
