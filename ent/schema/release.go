package schema

import (
	"context"
	"errors"
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Release is an immutable, versioned snapshot of a corpus and chosen
// annotation sets: its content (frozen when made, stored in chunks), the
// manifest of content hashes and their root hash, and a datasheet.
type Release struct {
	ent.Schema
}

func (Release) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().Immutable().Annotations(entgql.OrderField("NAME")),
		field.String("version").NotEmpty().Immutable().Comment("semantic version"),
		field.String("corpus").Immutable().Comment("name of the corpus it was frozen from"),
		field.Int("corpus_id").Optional().Immutable().Comment("the corpus's id when frozen (the corpus may be deleted since)"),
		field.Strings("sets").Immutable(),
		field.String("root_hash").Immutable(),
		field.Int("documents").Immutable(),
		field.Int("spans").Immutable(),
		field.Bool("share").Default(false).Immutable().Comment("released for outside sharing (surrogate text that passed its check)"),
		field.Text("datasheet").Immutable(),
		// The default lets the migration add the column to releases made
		// before chunks (their content is moved to chunks when the store
		// opens the database); store always sets it.
		field.String("content_key").Default("").Immutable().Annotations(entgql.Skip()).
			Comment("the key of the snapshot's chunks (ReleaseChunk): the snapshot is gzipped JSON"),
		field.JSON("provenance", map[string]any{}).Optional().Immutable().Annotations(entgql.Type("Map")),
		field.String("created_by").Default("").Immutable(),
		field.Time("created_at").Default(time.Now).Immutable().Annotations(entgql.OrderField("CREATED_AT")),
		// Not in the GraphQL schema: parentRef is, and is null when the parent
		// is hidden from the viewer.
		field.Int("parent_id").Optional().Nillable().Immutable().Annotations(entgql.Skip()),
	}
}

func (Release) Edges() []ent.Edge {
	return []ent.Edge{
		// No where predicates: a parent or child may be a release the viewer
		// may not see, and ent's subqueries pass no row filter (auth).
		edge.To("children", Release.Type).Annotations(entgql.Skip(entgql.SkipWhereInput)).
			From("parent").Field("parent_id").Unique().Immutable().Annotations(entgql.Skip(entgql.SkipWhereInput)),
	}
}

func (Release) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name", "version").Unique()}
}

func (Release) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection(), entgql.QueryField()}
}

// ErrReleaseImmutable is returned by any attempt to change or delete a release.
var ErrReleaseImmutable = errors.New("releases are immutable: make a new version instead")

// Hooks refuse every update and delete: a release, once made, never changes.
func (Release) Hooks() []ent.Hook {
	return []ent.Hook{
		func(next ent.Mutator) ent.Mutator {
			return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
				if !m.Op().Is(ent.OpCreate) {
					return nil, ErrReleaseImmutable
				}
				return next.Mutate(ctx, m)
			})
		},
	}
}
