package store

import (
	"net/url"
	"strconv"
	"strings"
)

// DSN is a database address, read once: a PostgreSQL URL, or a SQLite file
// path, optionally with "file:" and query parameters. Everything that needs
// to know which database a DSN names, or where its file is, asks it.
type DSN struct {
	Postgres bool
	URL      string     // PostgreSQL: the URL as given
	Path     string     // SQLite: the database file; "" or ":memory:" for none
	Query    url.Values // SQLite: the parameters given
}

// ParseDSN reads a DSN; "" is DefaultDSN.
func ParseDSN(dsn string) DSN {
	if dsn == "" {
		dsn = DefaultDSN
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return DSN{Postgres: true, URL: dsn}
	}
	path, query, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	q, _ := url.ParseQuery(query)
	return DSN{Path: path, Query: q}
}

// File is the SQLite database's file, "" for PostgreSQL and in-memory
// databases: what files kept beside the database (its key, the first
// admin's token) are named after.
func (d DSN) File() string {
	if d.Postgres || d.Path == "" || d.Path == ":memory:" || d.Query.Get("mode") == "memory" {
		return ""
	}
	return d.Path
}

// sqlite is the DSN given to the SQLite driver, with the pragmas the project
// relies on: foreign keys (cascading deletes), WAL (readers beside a
// writer), a busy timeout and immediate transactions (no upgrade deadlocks
// between writers), and a 32 MiB page cache per connection. The file is
// read with read(2), not through a memory map: a map of the file counts in
// the process's resident memory as far as it was read (a whole corpus, after
// a job that reads it all), and reading through one made statistics of
// 105,000 notes only a third faster (1.7 against 2.5 s). A pragma the DSN
// sets itself is left as given (_pragma=mmap_size(N) maps N bytes).
func (d DSN) sqlite() string {
	q := url.Values{}
	for k, v := range d.Query {
		q[k] = append([]string(nil), v...)
	}
	for _, p := range []string{"foreign_keys(1)", "journal_mode(WAL)", "busy_timeout(10000)", "synchronous(NORMAL)",
		"cache_size(-32768)", "wal_autocheckpoint(" + strconv.Itoa(walRestartPages) + ")"} {
		name, _, _ := strings.Cut(p, "(")
		given := false
		for _, v := range d.Query["_pragma"] {
			given = given || strings.HasPrefix(strings.TrimSpace(v), name)
		}
		if !given {
			q.Add("_pragma", p)
		}
	}
	if q.Get("_txlock") == "" {
		q.Set("_txlock", "immediate")
	}
	return "file:" + d.Path + "?" + q.Encode()
}
