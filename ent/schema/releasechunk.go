package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ReleaseChunk is one piece of a release's snapshot (gzipped JSON, cut into
// pieces of a few MiB), so that a release of any size is written and read a
// piece at a time, each in a short statement, and never held whole. The
// chunks are written before their release row, under a fresh content key
// that the release row names when it is created; chunks no release names
// are those of a creation that failed or was interrupted.
type ReleaseChunk struct {
	ent.Schema
}

func (ReleaseChunk) Fields() []ent.Field {
	return []ent.Field{
		field.String("content_key").NotEmpty().Immutable(),
		field.Int("seq").NonNegative().Immutable().Comment("the chunk's place in the snapshot, from 0"),
		field.Bytes("data").Immutable(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

func (ReleaseChunk) Indexes() []ent.Index {
	return []ent.Index{index.Fields("content_key", "seq").Unique()}
}

// Annotations keep chunks out of GraphQL: a release's content is served as
// its archive.
func (ReleaseChunk) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
