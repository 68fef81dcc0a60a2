package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// StatisticsResult is one measure of an annotation set (its PHI
// distribution grouped one way, store.Statistics, or its name patterns,
// store.NamePatterns) as counted at one content version of its corpus. A
// corpus of a million notes takes most of a minute to count; kept here, the
// count is made once per version of the corpus, whichever process asks (the
// CLI, every server and worker on the database) and across restarts. It
// holds counts, label names and name patterns ("Xx Xx"), never a span's text.
type StatisticsResult struct {
	ent.Schema
}

func (StatisticsResult) Fields() []ent.Field {
	return []ent.Field{
		field.Int("annotation_set_id").Immutable(),
		field.String("measure").Immutable().Comment(`what was counted: "statistics by category,type", "name patterns"`),
		field.Int("content_version").Comment("the corpus's content version the result was counted at"),
		field.Bytes("result").Comment("the measure, JSON"),
		field.Time("counted_at").Default(time.Now),
	}
}

func (StatisticsResult) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("annotation_set", AnnotationSet.Type).Ref("statistics").Field("annotation_set_id").
			Unique().Required().Immutable(),
	}
}

func (StatisticsResult) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("annotation_set_id", "measure").Unique(),
	}
}

// Annotations keep the results out of GraphQL: they are served through the
// statistics queries that count them.
func (StatisticsResult) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
