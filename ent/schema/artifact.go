package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
)

// Artifact is a file a job produced (an export archive, ...). It lives in the
// database so that any server sharing the database can serve it, whichever
// machine's worker made it. Size and sha256 are the plain file's.
type Artifact struct {
	ent.Schema
}

func (Artifact) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty(),
		field.String("content_type").Default("application/octet-stream"),
		field.Int("size"),
		field.String("sha256"),
		field.Bytes("data").Annotations(entgql.Skip()).
			Comment("the file, when it is sealed or was stored before chunks; else empty"),
		field.String("content_key").Default("").Annotations(entgql.Skip()).
			Comment("the chunks that hold the file (see Chunk); empty: data holds it"),
		field.String("key_id").Default("").Annotations(entgql.Skip()).
			Comment("the key that encrypted data, for a file naming original PHI values (a check report); empty: data in clear"),
		field.Int("job_id").Optional().Nillable(),
		field.Int("corpus_id").Optional().Nillable().Annotations(entgql.Skip()).
			Comment("the corpus whose text the file holds, if any: who may download it follows the corpus"),
		field.String("created_by").Default("").Annotations(entgql.Skip()).
			Comment("the account whose job made the file, or who uploaded it"),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

func (Artifact) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection()}
}
