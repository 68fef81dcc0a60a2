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

// SpanEdit is one change made by hand to an annotation set (a span added,
// changed or removed, a document's status set), kept so that it can be
// undone: the span's offsets and label before and after, never its text
// (the note's text at the offsets). An undo is an edit of its own that
// names the edit it reverses.
type SpanEdit struct {
	ent.Schema
}

func (SpanEdit) Fields() []ent.Field {
	return []ent.Field{
		field.Int("corpus_id").Immutable(),
		field.Int("annotation_set_id").Immutable(),
		field.Int("document_id").Immutable(),
		field.Int("version").Immutable().Comment("the document's version in the set after the edit"),
		field.Enum("op").Values("add", "change", "remove", "status").Immutable(),
		field.Int("span_id").Optional().Immutable().Comment("the span added, changed or removed"),
		field.Int("before_start").Optional().Nillable().Immutable(),
		field.Int("before_end").Optional().Nillable().Immutable(),
		field.String("before_label").Default("").Immutable().Comment(`"CATEGORY/TYPE", or a status`),
		field.Int("after_start").Optional().Nillable().Immutable(),
		field.Int("after_end").Optional().Nillable().Immutable(),
		field.String("after_label").Default("").Immutable().Comment(`"CATEGORY/TYPE", or a status`),
		field.Int("undoes").Optional().Immutable().Comment("the edit this one reverses, 0 for none"),
		field.Bool("undone").Default(false).Comment("reversed by a later edit"),
		field.String("actor").Immutable(),
		field.Time("at").Default(time.Now).Immutable(),
	}
}

func (SpanEdit) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("annotation_set", AnnotationSet.Type).Ref("edits").Field("annotation_set_id").Unique().Required().Immutable(),
		edge.From("document", Document.Type).Ref("edits").Field("document_id").Unique().Required().Immutable(),
	}
}

func (SpanEdit) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("annotation_set_id", "document_id", "version"),
	}
}

func (SpanEdit) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
