package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Span is one PHI mention in one annotation set. Offsets are Unicode code
// points, end exclusive.
type Span struct {
	ent.Schema
}

func (Span) Fields() []ent.Field {
	return []ent.Field{
		field.Int("document_id").Immutable(),
		field.Int("annotation_set_id").Immutable(),
		field.Int("start").NonNegative().Annotations(entgql.OrderField("START")),
		field.Int("end").NonNegative(),
		field.Text("text").Annotations(entgql.Skip(entgql.SkipWhereInput)).
			Comment("no where predicates: a search reads PHI without an audit record"),
		field.String("category").Annotations(entgql.OrderField("CATEGORY")),
		field.String("type").Annotations(entgql.OrderField("TYPE")),
		field.String("comment").Default(""),
		field.String("source_id").Default("").Comment(`the tag's id in the source file ("P3", "T12")`),
		// Copies of the document's split and note type (moved with it), so
		// that the statistics group a set's spans by them without looking
		// up every span's document.
		field.String("split").Default("").Immutable().Annotations(entgql.Skip()).
			Comment("the document's split (copied)"),
		field.String("note_type").Default("").Immutable().Annotations(entgql.Skip()).
			Comment("the document's note type (copied)"),
	}
}

func (Span) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("document", Document.Type).Ref("spans").Field("document_id").Unique().Required().Immutable(),
		edge.From("annotation_set", AnnotationSet.Type).Ref("spans").Field("annotation_set_id").Unique().Required().Immutable(),
	}
}

func (Span) Indexes() []ent.Index {
	return []ent.Index{
		// A set's spans in the order they were written: the statistics and
		// comparisons read a set this way and count in Go. No index is ordered
		// by text: a writer of a batch of spans would dirty a page of it at
		// random for each span, and each batch's commit would write most of
		// the index again (three such indexes made an import 3.7 times slower).
		index.Fields("annotation_set_id"),
		// A set's spans of one label (names for their patterns, the API's
		// spans ordered by category or type): a writer appends to each
		// label's range, a page or two of it per batch.
		index.Fields("annotation_set_id", "category", "type"),
		index.Fields("document_id", "annotation_set_id", "start"),
	}
}

func (Span) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.QueryField(),
	}
}
