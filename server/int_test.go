package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/store/storetest"
)

// TestIntIs32Bits: a GraphQL Int holds 32 bits (the specification's range);
// a value beyond, written in the query or sent as a variable, is refused as
// invalid, naming the argument, instead of paging with a 64-bit number.
func TestIntIs32Bits(t *testing.T) {
	st, _, c := newServer(t, storetest.SQLite)
	_, err := st.CreateCorpus(context.Background(), "c", "open", "", "original")
	require.NoError(t, err) // so that a nested connection's arguments are read
	type gqlError struct {
		Message    string
		Extensions struct{ Code string }
	}
	post := func(query string, opts ...client.Option) []gqlError {
		t.Helper()
		resp, err := c.RawPost(query, opts...)
		require.NoError(t, err)
		var errs []gqlError
		if len(resp.Errors) > 0 {
			require.NoError(t, json.Unmarshal(resp.Errors, &errs))
		}
		return errs
	}
	for _, tc := range []struct {
		query, argument string
		opts            []client.Option
	}{
		{`{ corpora(first: 99999999999) { totalCount } }`, "corpora.first", nil},
		{`{ corpora(first: 2147483648) { totalCount } }`, "corpora.first", nil},
		{`{ corpora(last: -2147483649) { totalCount } }`, "corpora.last", nil},
		{`query($n: Int) { corpora(first: $n) { totalCount } }`, "corpora.first", []client.Option{client.Var("n", int64(1)<<40)}},
		{`query($n: Int) { documents(last: $n) { totalCount } }`, "documents.last", []client.Option{client.Var("n", -(int64(1) << 40))}},
		{`{ corpora { edges { node { documents(first: 4294967296) { totalCount } } } } }`, "documents.first", nil},
	} {
		errs := post(tc.query, tc.opts...)
		require.Len(t, errs, 1, tc.query)
		assert.Equal(t, "invalid", errs[0].Extensions.Code, tc.query)
		assert.Contains(t, errs[0].Message, tc.argument+" is ", tc.query)
		assert.Contains(t, errs[0].Message, "out of the range of a GraphQL Int (-2147483648 to 2147483647)", tc.query)
	}
	// The bounds themselves are Ints, refused by the page cap, not the Int
	// check; the cap itself is a page.
	for _, errs := range [][]gqlError{post(`{ corpora(first: 2147483647) { totalCount } }`),
		post(`query($n: Int) { corpora(first: $n) { totalCount } }`, client.Var("n", 2147483647))} {
		require.Len(t, errs, 1)
		assert.Contains(t, errs[0].Message, "a page holds 1 to 1000 rows")
	}
	assert.Empty(t, post(`{ corpora(first: 1000) { totalCount } }`))
}
