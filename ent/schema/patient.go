package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Patient holds one person's longitudinal record set within a corpus.
type Patient struct {
	ent.Schema
}

func (Patient) Fields() []ent.Field {
	return []ent.Field{
		field.Int("corpus_id").Immutable(),
		field.String("external_id").NotEmpty().
			Comment(`the patient id of the source files ("100" in 100-02.xml)`).
			Annotations(entgql.OrderField("EXTERNAL_ID")),
	}
}

func (Patient) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("corpus", Corpus.Type).Ref("patients").Field("corpus_id").Unique().Required().Immutable(),
		edge.To("documents", Document.Type).Annotations(entgql.RelayConnection(), entsql.OnDelete(entsql.Cascade)),
	}
}

func (Patient) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("corpus_id", "external_id").Unique(),
	}
}

func (Patient) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.QueryField(),
	}
}
