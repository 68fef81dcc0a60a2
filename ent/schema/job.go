package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Job is one long operation (import, export, evaluation, resynthesis,
// training, tagging, ...) run in the background on the River queue. The row
// is what users see; River's own table holds the queue mechanics.
type Job struct {
	ent.Schema
}

func (Job) Fields() []ent.Field {
	return []ent.Field{
		field.String("kind").NotEmpty().Immutable().
			Annotations(entgql.OrderField("KIND")),
		field.Enum("status").Values("queued", "running", "succeeded", "failed", "cancelled", "check_failed").Default("queued").
			Comment("check_failed: the job wrote its output, and the output failed its check (a resynthesis whose corpus is now quarantined)").
			Annotations(entgql.OrderField("STATUS")),
		field.JSON("params", map[string]any{}).Optional().Immutable().
			Annotations(entgql.Type("Map")),
		field.JSON("result", map[string]any{}).Optional().
			Comment("references to what the job produced: corpus, annotation set, model, evaluation, export").
			Annotations(entgql.Type("Map")),
		field.Text("error").Default(""),
		field.Int("progress_done").Default(0),
		field.Int("progress_total").Default(0),
		field.String("message").Default(""),
		field.Int("attempts").Default(0),
		field.Int64("river_job_id").Optional().Nillable().
			Annotations(entgql.Skip()),
		field.Bool("cancel_requested").Default(false),
		field.String("created_by").Default(""),
		field.String("worker").Default("").Comment("host:pid of the process that ran the latest attempt"),
		field.String("code_version").Default("").Comment("version of the code that ran the latest attempt"),
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("started_at").Optional().Nillable(),
		field.Time("finished_at").Optional().Nillable(),
		field.Time("heartbeat_at").Optional().Nillable().
			Comment("set by the worker every second while the job runs; a stale heartbeat means the worker died").
			Annotations(entgql.Skip()),
	}
}

func (Job) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("status", "heartbeat_at"),
		index.Fields("kind", "created_at"),
	}
}

func (Job) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.QueryField(),
	}
}
