package store

import (
	"context"
	"strconv"
	"strings"

	"entgo.io/ent/dialect"

	"deidcorpus/ent"
)

// A rowInsert is a raw multi-row INSERT into a table, for the rows a job
// writes by the million: ent's bulk builders cost more than the database's
// own work there (a builder, a mutation and a spec per row, and on SQLite a
// RETURNING of every id).
type rowInsert struct {
	table   string
	columns []string // quoted where a dialect needs it
	seal    *rowSeal // the columns sealed in an original corpus, if any
}

// rowSeal names the columns of a row that are sealed in an original corpus
// (seal.go), and the column that gives the row's annotation set.
type rowSeal struct {
	set    int
	fields map[int]string // column -> sealed field
}

// sealRows seals, in place, the sealed columns of rows in a sealed corpus.
func (s *Store) sealRows(ctx context.Context, in *rowInsert, args []any) error {
	n := len(in.columns)
	for i := 0; i+n <= len(args); i += n {
		c, err := s.setSeal(ctx, args[i+in.seal.set].(int))
		if err != nil {
			return err
		}
		if c == nil {
			continue
		}
		for col, field := range in.seal.fields {
			args[i+col] = c.seal(field, args[i+col].(string))
		}
	}
	return nil
}

// insertRows writes rows given as len(in.columns) arguments each, spanBatch
// rows to a statement.
func (s *Store) insertRows(ctx context.Context, tx *ent.Tx, in *rowInsert, args []any) error {
	if in.seal != nil {
		if err := s.sealRows(ctx, in, args); err != nil {
			return err
		}
	}
	per := len(in.columns) * spanBatch
	for len(args) > 0 {
		n := min(len(args), per)
		if _, err := tx.ExecContext(ctx, s.insertSQL(in, n/len(in.columns)), args[:n]...); err != nil {
			return err
		}
		args = args[n:]
	}
	return nil
}

// insertSQL returns the INSERT statement for n rows in the store's
// placeholder style; that of a full batch is built once.
func (s *Store) insertSQL(in *rowInsert, n int) string {
	if n == spanBatch {
		if q, ok := s.inserts.Load(in); ok {
			return q.(string)
		}
	}
	var b strings.Builder
	b.WriteString("INSERT INTO " + in.table + " (" + strings.Join(in.columns, ", ") + ") VALUES ")
	p := 0
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := range in.columns {
			if j > 0 {
				b.WriteString(", ")
			}
			p++
			if s.Dialect == dialect.Postgres {
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(p))
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	q := b.String()
	if n == spanBatch {
		s.inserts.Store(in, q)
	}
	return q
}
