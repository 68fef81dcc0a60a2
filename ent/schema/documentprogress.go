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

// DocumentProgress is a document's state in one annotation set: its status
// (todo, in progress, done) and its version, which every edit of the
// document's spans in the set raises by one. An editor sends the version it
// read; a write made against an older one is refused (store/annotate.go).
// A document of an annotator's set without a row is not assigned to it; in
// other sets a missing row is version 0, todo.
type DocumentProgress struct {
	ent.Schema
}

func (DocumentProgress) Fields() []ent.Field {
	return []ent.Field{
		field.Int("corpus_id").Immutable().Comment("the set's corpus (the row filters follow it)"),
		field.Int("annotation_set_id").Immutable(),
		field.Int("document_id").Immutable(),
		field.Enum("status").Values("todo", "in_progress", "done").Default("todo"),
		field.Int("version").Default(0).NonNegative(),
		field.Time("updated_at").Default(time.Now),
		field.String("updated_by").Default(""),
	}
}

func (DocumentProgress) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("annotation_set", AnnotationSet.Type).Ref("progress").Field("annotation_set_id").Unique().Required().Immutable(),
		edge.From("document", Document.Type).Ref("progress").Field("document_id").Unique().Required().Immutable(),
	}
}

func (DocumentProgress) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("annotation_set_id", "document_id").Unique(),
	}
}

// Annotations keep the rows out of GraphQL's generated schema: they are
// served by the annotation queries (graph/annotation.graphqls).
func (DocumentProgress) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
