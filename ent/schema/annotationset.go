package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// AnnotationSet is one layer of spans over a corpus's documents: the gold
// standard, an annotator's pass, an adjudication, a model run's output, or the
// spans of a surrogate corpus. Several layers coexist over the same text.
type AnnotationSet struct {
	ent.Schema
}

func (AnnotationSet) Fields() []ent.Field {
	return []ent.Field{
		field.Int("corpus_id").Immutable(),
		field.String("name").NotEmpty().
			Annotations(entgql.OrderField("NAME")),
		field.Enum("kind").Values("gold", "annotator", "adjudicated", "system", "surrogate").Default("gold"),
		field.Text("description").Default(""),
		field.String("annotator").Default("").
			Comment("the account that annotates this set (kind annotator); the only annotator who may edit it"),
		field.Bool("open").Default(false).
			Comment("open annotation: the set's annotator also reads the corpus's other sets (gold, other annotators'); "+
				"without it an annotator reads only its own sets (auth/filter.go)"),
		field.JSON("provenance", map[string]any{}).Optional().
			Annotations(entgql.Type("Map")),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

func (AnnotationSet) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("corpus", Corpus.Type).Ref("annotation_sets").Field("corpus_id").Unique().Required().Immutable(),
		edge.To("spans", Span.Type).Annotations(entgql.RelayConnection(), entsql.OnDelete(entsql.Cascade)),
		// Hand edits' bookkeeping (store/annotate.go).
		edge.To("progress", DocumentProgress.Type).Annotations(entgql.Skip(entgql.SkipAll), entsql.OnDelete(entsql.Cascade)),
		edge.To("edits", SpanEdit.Type).Annotations(entgql.Skip(entgql.SkipAll), entsql.OnDelete(entsql.Cascade)),
		// The set's statistics as last counted (store/statscache.go).
		edge.To("statistics", StatisticsResult.Type).
			Annotations(entgql.Skip(entgql.SkipAll), entsql.OnDelete(entsql.Cascade)),
	}
}

func (AnnotationSet) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("corpus_id", "name").Unique(),
	}
}

func (AnnotationSet) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
	}
}
