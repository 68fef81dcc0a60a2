package store

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseDSN(t *testing.T) {
	for _, c := range []struct {
		dsn, file string
		postgres  bool
	}{
		{"", DefaultDSN, false},
		{"data/c.db", "data/c.db", false},
		{"file:data/c.db?_pragma=busy_timeout(1)", "data/c.db", false},
		{":memory:", "", false},
		{"file:x.db?mode=memory&cache=shared", "", false},
		{"postgres://u@h/db", "", true},
		{"postgresql://u:p@h/db?sslmode=disable", "", true},
	} {
		d := ParseDSN(c.dsn)
		assert.Equal(t, c.postgres, d.Postgres, c.dsn)
		assert.Equal(t, c.file, d.File(), c.dsn)
	}
	// The project's pragmas are added, and one the DSN gives is kept as given.
	q, err := url.ParseQuery(ParseDSN("file:c.db?_pragma=busy_timeout(1)").sqlite()[len("file:c.db?"):])
	assert.NoError(t, err)
	assert.Contains(t, q["_pragma"], "busy_timeout(1)")
	assert.NotContains(t, q["_pragma"], "busy_timeout(10000)")
	assert.Contains(t, q["_pragma"], "foreign_keys(1)")
	assert.Equal(t, "immediate", q.Get("_txlock"))
}
