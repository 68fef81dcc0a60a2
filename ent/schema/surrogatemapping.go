package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SurrogateMapping records that, in a scope of a source corpus (a patient, or
// the whole corpus), an original PHI value was replaced by a surrogate. Later
// resynthesis jobs over the same corpus reuse it, so a patient's new notes get
// the same surrogates. Original values are PHI: they are stored only
// encrypted (AES-256-GCM under the key ring of internal/keys, original_enc and
// key_id) and found through a keyed hash (original_hash), so the database alone
// does not reveal them. Surrogates are not PHI and stay in clear.
type SurrogateMapping struct {
	ent.Schema
}

func (SurrogateMapping) Fields() []ent.Field {
	return []ent.Field{
		field.Int("corpus_id").Immutable().Comment("the source corpus whose PHI was replaced"),
		field.String("scope").Immutable().Comment(`"corpus" or "patient:<external id>"`),
		field.String("category").Immutable(),
		field.String("type").Immutable(),
		// Optional and the defaults only let the migration of a database from
		// before encryption add the columns; store always sets all three.
		field.Bytes("original_enc").Optional().Comment("the original value, encrypted (nonce + AES-GCM ciphertext)"),
		field.String("original_hash").Default("").Comment("HMAC-SHA256 of the original value under the lookup key (hex)"),
		field.String("key_id").Default("").Comment("id of the key that encrypted original_enc"),
		field.Text("surrogate").Immutable(),
		field.String("strategy").Immutable(),
		field.Int("job_id").Immutable(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Annotations keep mappings out of the generated GraphQL types: originals are
// PHI and are served only through the authorized mappings query.
func (SurrogateMapping) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}

// Indexes: none by original_hash. Its entries would be in random order, so
// each mapping a resynthesis writes would dirty a page of its own (a third of
// the run's time at 105,052 notes, more beyond); lookups by hash read a
// scope's or a corpus's rows instead.
func (SurrogateMapping) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("corpus_id", "scope"),
		index.Fields("job_id"),
		index.Fields("key_id"),
	}
}

// DateShift is a patient's resynthesis state besides the mappings: the number
// of days every date moves, and how many years the ages moved down.
type DateShift struct {
	ent.Schema
}

func (DateShift) Fields() []ent.Field {
	return []ent.Field{
		field.Int("corpus_id").Immutable(),
		field.String("patient").Immutable().Comment("the patient's external id"),
		field.Int("days").Immutable(),
		field.Int("age_shift").Immutable(),
		field.Int("job_id").Immutable(),
	}
}

func (DateShift) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}

func (DateShift) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("corpus_id", "patient").Unique(),
	}
}
