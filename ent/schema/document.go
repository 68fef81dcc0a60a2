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

	"deidcorpus/pipeline"
)

// Document is one clinical note of a patient. Its text never changes after
// import; annotation layers live in spans.
type Document struct {
	ent.Schema
}

func (Document) Fields() []ent.Field {
	return []ent.Field{
		field.Int("corpus_id").Immutable(),
		field.Int("patient_id").Immutable(),
		field.String("external_id").NotEmpty().
			Comment(`the note's id in the source ("100-02")`).
			Annotations(entgql.OrderField("EXTERNAL_ID")),
		field.Int("record_order").Default(0).
			Comment("position in the patient's record set, from 1; 0 if unknown").
			Annotations(entgql.OrderField("RECORD_ORDER")),
		// Split and note type change only with the copies the spans keep of
		// them, by the store alone (a replacing import, deidcorpus split).
		field.String("note_type").Default("").Immutable().
			Annotations(entgql.OrderField("NOTE_TYPE")),
		field.Time("created").Optional().Nillable().
			Comment("when the note was written, if known"),
		field.Enum("split").Values(pipeline.Splits...).Default("unassigned").Immutable().
			Annotations(entgql.OrderField("SPLIT")),
		// No where predicates on the text: a search reads PHI without an
		// audit record, and answers a yes or no about hidden notes.
		field.Text("text").Immutable().Annotations(entgql.Skip(entgql.SkipWhereInput)),
		field.Int("char_count").Comment("length of the text in Unicode code points").
			Annotations(entgql.OrderField("CHAR_COUNT")),
		field.Int("token_count").Comment("whitespace-separated tokens"),
		field.String("checksum").Comment("SHA-256 of the text, hex"),
		field.Time("imported_at").Default(time.Now).Immutable(),
	}
}

func (Document) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("corpus", Corpus.Type).Ref("documents").Field("corpus_id").Unique().Required().Immutable(),
		edge.From("patient", Patient.Type).Ref("documents").Field("patient_id").Unique().Required().Immutable(),
		edge.To("spans", Span.Type).Annotations(entgql.RelayConnection(), entsql.OnDelete(entsql.Cascade)),
		// Hand edits' bookkeeping (store/annotate.go).
		edge.To("progress", DocumentProgress.Type).Annotations(entgql.Skip(entgql.SkipAll), entsql.OnDelete(entsql.Cascade)),
		edge.To("edits", SpanEdit.Type).Annotations(entgql.Skip(entgql.SkipAll), entsql.OnDelete(entsql.Cascade)),
	}
}

func (Document) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("corpus_id", "external_id").Unique(),
		// Covers the statistics' per-split and per-note-type document totals,
		// so they never read the rows that carry the note text.
		index.Fields("corpus_id", "split", "note_type", "token_count", "char_count"),
		index.Fields("corpus_id", "note_type"),
		index.Fields("patient_id", "record_order"),
	}
}

func (Document) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.QueryField(),
	}
}
