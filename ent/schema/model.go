package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
)

// Model is a tagger that can annotate a corpus: a CRF trained here (its
// artifact stored with it) or an external service reached over the HTTP/JSON
// protocol of pipeline/tagger/external.
type Model struct {
	ent.Schema
}

func (Model) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().Unique().Annotations(entgql.OrderField("NAME")),
		field.Enum("kind").Values("crf", "external").Default("crf"),
		field.Strings("labels").Optional().Comment("the span types the model predicts"),
		field.JSON("config", map[string]any{}).Optional().Annotations(entgql.Type("Map")),
		field.String("training_corpus").Default(""),
		field.Int("training_corpus_id").Optional().Nillable().Annotations(entgql.Skip()).
			Comment("the training corpus's id: who may see the model follows it (a name can be reused)"),
		field.String("training_split").Default(""),
		field.String("training_set").Default(""),
		field.JSON("metrics", map[string]any{}).Optional().
			Comment("training figures (documents, tokens, features, iterations, loss, seconds)").
			Annotations(entgql.Type("Map")),
		field.String("hash").Default("").Comment("content hash of the artifact: the same data and options give the same hash"),
		field.String("format").Default("").Comment("artifact format version"),
		field.Bytes("artifact").Optional().Annotations(entgql.Skip()),
		field.String("endpoint").Default("").Annotations(entgql.Skip()).
			Comment("URL of an external tagger, its credentials (user, password, query values) masked: what curators read"),
		field.Bytes("endpoint_enc").Optional().Sensitive().Annotations(entgql.Skip()).
			Comment("the whole URL, credentials included, encrypted under the key ring (store/models.go); only the tagging job reads it"),
		field.String("endpoint_key_id").Default("").Annotations(entgql.Skip()).
			Comment("the ring key that encrypts endpoint_enc; empty for a row from before (migrated at start)"),
		field.Int("job_id").Optional().Nillable(),
		field.String("created_by").Default(""),
		field.Time("created_at").Default(time.Now).Immutable().Annotations(entgql.OrderField("CREATED_AT")),
	}
}

func (Model) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.QueryField(),
	}
}
