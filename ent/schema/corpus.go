// Package schema is the hand-written data model of deidcorpus; everything else
// under ent/ is generated from it by `go generate ./...`.
package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"deidcorpus/pipeline/surrogate"
)

// Corpus is a named collection of patients' notes with a declared tag set.
type Corpus struct {
	ent.Schema
}

func (Corpus) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().Unique().
			Annotations(entgql.OrderField("NAME")),
		field.Text("description").Default(""),
		field.String("tagset").Default("open").
			Comment(`"i2b2-2014" or "meddocan" (labels validated, categories filled in) or "open" (any label)`),
		field.Enum("kind").Values("original", "surrogate").Default("original").
			Comment("surrogate: PHI replaced by resynthesis (or attested so by a curator); researchers see only these").
			Annotations(entgql.OrderField("KIND")),
		field.Enum("check_status").Values("none", "passed", "failed", "resolved").Default("none").
			Comment("the resynthesis check of a surrogate corpus: none (not made by resynthesis), passed, " +
				"failed (quarantined: only curators and admins see it, and it cannot be released) or " +
				"resolved (a curator resolved every finding, with a reason: check_resolution)"),
		field.Int("check_findings").Default(0).
			Comment("findings of the failed checks not yet resolved (leaks, misaligned spans, inconsistent mappings, interval errors, surrogates equal to originals)"),
		// Not in the Corpus type: a reason may quote the values it excuses.
		// Curators read it in checkReport.
		field.JSON("check_resolution", map[string]any{}).Optional().
			Comment("the curator's resolution of a failed check: by, at, reason, findings").
			Annotations(entgql.Skip()),
		field.Enum("ids").Values("source", "pseudonymous").Default("source").
			Comment("how the corpus names its notes and patients: by the source's ids (an import's own, or a surrogate " +
				"corpus made before 6 December 2026) or by keyed pseudonyms of its source's ids, as resynthesis names them; " +
				"curators read the pairs (deidcorpus resynth ids)"),
		// Not in any GraphQL type: key material (wrapped), see store/seal.go.
		field.Bytes("data_key").Optional().Sensitive().Annotations(entgql.Skip()).
			Comment("the key that seals an original corpus's note and span text at rest, wrapped (AES-GCM) by the key ring's key data_key_id; empty for surrogate corpora"),
		field.String("data_key_id").Default("").Annotations(entgql.Skip()).
			Comment("the key ring's key that wraps data_key"),
		field.JSON("provenance", map[string]any{}).Optional().
			Comment("how the corpus came to be: imported, derived by a mapping, resynthesized by a job, ...").
			Annotations(entgql.Type("Map")),
		// What code decides on is here, typed; provenance says it for people.
		// Not in the Corpus type: the source's id is the curators' (see
		// store.CorpusProvenance), and the rest is what provenance says.
		field.Enum("origin").Values("import", "created", "derived", "resynthesis", "synth", "demo").Default("import").
			Comment("how the corpus was made: imported, created empty, derived by a tag-set mapping, resynthesized, " +
				"generated (synth), or the demo's corpus, whose demo jobs the server runs").
			Annotations(entgql.Skip()),
		field.Int("source_id").Optional().Nillable().
			Comment("the corpus a derived or resynthesized corpus was made from: an id, not an edge, since the link " +
				"outlives the source (a surrogate corpus's pseudonymous ids are keyed by it)").
			Annotations(entgql.Skip()),
		field.Enum("state").Values("ready", "importing", "resynthesizing").Default("ready").
			Comment("importing: the import that made the corpus has not written its last batch (still running, or " +
				"its process ended first); resynthesizing: a resynthesis writes into it (resynthesis says which)").
			Annotations(entgql.Skip()),
		field.JSON("resynthesis", &surrogate.RunState{}).Optional().
			Comment("the run writing into the corpus while state is resynthesizing: what a retry resumes from").
			Annotations(entgql.Skip()),
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Int("content_version").Default(0).Annotations(entgql.Skip()).
			Comment("bumped by every transaction that writes the corpus's patients, documents or spans: " +
				"statistics cached at an older version are stale, in whichever process cached them"),
	}
}

func (Corpus) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("patients", Patient.Type).Annotations(entgql.RelayConnection(), entsql.OnDelete(entsql.Cascade)),
		edge.To("documents", Document.Type).Annotations(entgql.RelayConnection(), entsql.OnDelete(entsql.Cascade)),
		edge.To("annotation_sets", AnnotationSet.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("evaluations", Evaluation.Type).Annotations(entgql.RelayConnection(), entsql.OnDelete(entsql.Cascade)),
		// No where predicate: the subquery would pass no row filter (auth).
		edge.From("annotators", User.Type).Ref("assigned_corpora").Annotations(entgql.Skip(entgql.SkipWhereInput)),
	}
}

func (Corpus) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entsql.Table("corpora"),
		entgql.RelayConnection(),
		entgql.QueryField("corpora"),
	}
}
