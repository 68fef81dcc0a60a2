package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Chunk is one piece of a stored file of any size: a release's snapshot
// (gzipped JSON) or an artifact (an export archive), cut into pieces of a
// few MiB, so that it is written and read a piece at a time, each in a short
// statement, and never held whole. The chunks are written before the row
// that names them (a release, an artifact), under a fresh content key;
// chunks no row names are those of a creation that failed or was
// interrupted. The table keeps the name it had when only releases used it.
type Chunk struct {
	ent.Schema
}

func (Chunk) Fields() []ent.Field {
	return []ent.Field{
		field.String("content_key").NotEmpty().Immutable(),
		field.Int("seq").NonNegative().Immutable().Comment("the chunk's place in the file, from 0"),
		field.Bytes("data").Immutable(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

func (Chunk) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("content_key", "seq").Unique().StorageKey("releasechunk_content_key_seq"),
		// The removal of abandoned chunks looks for old ones: without it,
		// SQLite reads every chunk's data (stored before the date) to find them.
		index.Fields("created_at"),
	}
}

// Annotations keep chunks out of GraphQL (a release's content is served as
// its archive, an artifact as a download) and keep the table's name.
func (Chunk) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll), entsql.Annotation{Table: "release_chunks"}}
}
