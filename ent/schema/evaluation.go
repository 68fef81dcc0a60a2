package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Evaluation is one scoring of a system annotation set against a gold set of
// the same corpus. The full report (every figure of pipeline/evaluate) is kept
// as JSON; the headline figures are columns so evaluations can be listed and
// ordered without decoding it.
type Evaluation struct {
	ent.Schema
}

func (Evaluation) Fields() []ent.Field {
	return []ent.Field{
		field.Int("corpus_id").Immutable(),
		field.String("gold_set").Immutable(),
		field.String("system_set").Immutable(),
		field.String("metric").Default("i2b2").Immutable(),
		field.JSON("options", map[string]any{}).Optional().Immutable().
			Annotations(entgql.Type("Map")),
		field.Float("precision").Default(0).Comment("strict entity micro precision (i2b2 metric), or the metric's headline"),
		field.Float("recall").Default(0),
		field.Float("f1").Default(0).Annotations(entgql.OrderField("F1")),
		field.Bytes("report").Comment("pipeline/evaluate.Report as JSON").
			Annotations(entgql.Skip()),
		field.Int("job_id").Optional().Nillable(),
		field.String("created_by").Default(""),
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
	}
}

func (Evaluation) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("corpus", Corpus.Type).Ref("evaluations").Field("corpus_id").Unique().Required().Immutable(),
	}
}

func (Evaluation) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.QueryField(),
	}
}
