package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// User is an account. Its role decides what it may see and do (package auth):
// admin everything; curator all corpora, original text and mappings;
// annotator the corpora assigned to it; researcher releases and surrogate
// corpora only.
type User struct {
	ent.Schema
}

func (User) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().Unique().Annotations(entgql.OrderField("NAME")),
		field.Enum("role").Values("admin", "curator", "annotator", "researcher"),
		field.Bool("disabled").Default(false).Comment("a disabled account's tokens are refused"),
		field.Time("created_at").Default(time.Now).Immutable().Annotations(entgql.OrderField("CREATED_AT")),
	}
}

func (User) Edges() []ent.Edge {
	return []ent.Edge{
		// No where predicates on these edges: their subqueries would pass no
		// row filter (package auth), and reach corpora and tokens the viewer
		// may not see.
		edge.To("tokens", Token.Type).Annotations(entsql.OnDelete(entsql.Cascade), entgql.Skip(entgql.SkipWhereInput)),
		edge.To("assigned_corpora", Corpus.Type).Comment("the corpora an annotator works on").
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
	}
}

func (User) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection(), entgql.QueryField()}
}

// Token is an API token of a user. Only its SHA-256 is stored: the token
// itself is shown once, when it is made.
type Token struct {
	ent.Schema
}

func (Token) Fields() []ent.Field {
	return []ent.Field{
		field.Int("user_id").Immutable(),
		field.String("name").Default("").Comment("what the token is for"),
		field.String("hash").Unique().Immutable().Sensitive().Comment("SHA-256 of the token, hex"),
		field.String("prefix").Immutable().Comment("the token's first characters, to recognize it"),
		field.Time("expires_at").Optional().Nillable().Immutable(),
		field.Time("revoked_at").Optional().Nillable(),
		field.Time("last_used_at").Optional().Nillable(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

func (Token) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("user", User.Type).Ref("tokens").Field("user_id").Unique().Required().Immutable().
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
	}
}

func (Token) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.QueryField()}
}
