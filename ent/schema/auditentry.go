package schema

import (
	"context"
	"errors"
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
)

// AuditEntry is one record of the append-only audit log: a read of original
// PHI or a write, by whom, of what, which ids, when. Each entry's hash covers
// its content and the previous entry's hash, so that changing, removing or
// reordering any entry breaks the chain (`deidcorpus audit verify`). A
// plain hash can be recomputed by whoever writes the database, so each entry
// also carries a MAC under a key kept outside it (store/auditverify.go);
// entries written before MACs have none.
type AuditEntry struct {
	ent.Schema
}

func (AuditEntry) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("seq").Unique().Immutable().Comment("position in the chain, from 1").
			Annotations(entgql.OrderField("SEQ")),
		field.Time("at").Default(time.Now).Immutable(),
		field.String("actor").Immutable().Comment("who: an account, or anonymous, or cli:<user>"),
		field.String("action").Immutable().Comment("read, write or export"),
		field.String("target").Immutable().Comment(`what: "Document.text", "Mutation.importDocuments", "download"...`),
		field.Strings("ids").Optional().Immutable().Comment("the ids read or written"),
		field.Text("detail").Default("").Immutable().Comment("PHI-free context: argument names, a corpus name"),
		field.String("prev_hash").Immutable(),
		field.String("hash").Immutable(),
		field.String("mac").Default("").Immutable().Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("HMAC-SHA256 under the audit key, chained to the previous entry's mac; empty before keyed entries"),
		field.String("mac_key").Default("").Immutable().Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("the audit key's id (a fingerprint), to tell a wrong key from a rewritten entry"),
	}
}

func (AuditEntry) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection(), entgql.QueryField("auditEntries")}
}

// ErrAuditAppendOnly is returned by any attempt to change or delete an entry.
var ErrAuditAppendOnly = errors.New("the audit log is append-only")

// Hooks refuse every update and delete.
func (AuditEntry) Hooks() []ent.Hook {
	return []ent.Hook{
		func(next ent.Mutator) ent.Mutator {
			return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
				if !m.Op().Is(ent.OpCreate) {
					return nil, ErrAuditAppendOnly
				}
				return next.Mutate(ctx, m)
			})
		},
	}
}
