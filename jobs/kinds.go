package jobs

import (
	"context"
	"deidcorpus/store"
	"fmt"
	"maps"
	"slices"

	"deidcorpus/apperr"
)

// Params are a job's parameters. JobKind names the kind of job they ask for,
// and so the handler that runs it: the one place each kind is spelled. The
// API, the command line and the dashboard (Query.jobKinds) take kinds from
// here.
type Params interface{ JobKind() string }

func (PingParams) JobKind() string         { return "ping" }
func (ImportParams) JobKind() string       { return "import" }
func (ExportParams) JobKind() string       { return "export" }
func (DeriveParams) JobKind() string       { return "derive" }
func (EvaluateParams) JobKind() string     { return "evaluate" }
func (ResynthesizeParams) JobKind() string { return "resynthesize" }
func (TrainParams) JobKind() string        { return "train" }
func (TagParams) JobKind() string          { return "tag" }
func (ExperimentParams) JobKind() string   { return "experiment" }
func (PartParams) JobKind() string         { return "part" }

// validator is implemented by parameters that can be checked without the
// database. Enqueue refuses parameters that fail, so that a mistake the user
// can fix (no model name, an unknown key in a tagger config, an unknown type
// in a policy) is the error of the request that made it, naming the field,
// rather than a job that fails in a worker later. Run.Params checks again,
// for jobs queued before a check existed.
type validator interface{ Validate() error }

// precondition is implemented by parameters whose job would fail, late,
// on the database's state as it is when the job is queued (a training job
// whose model name is taken fails when it saves, minutes later). Enqueue
// refuses them; the job checks again when it starts.
type precondition interface {
	precondition(ctx context.Context, st *store.Store) error
}

// sourcePrecondition checks, as a job is queued, what its handler reads
// first: the corpus, its annotation set and the splits (a comma-separated
// list, or "all"), each of which must hold documents. A mistyped name is then
// the error of the request that made it, not a failed job.
func sourcePrecondition(ctx context.Context, st *store.Store, corpus, set, splits string) error {
	c, err := st.CorpusByName(ctx, corpus)
	if err != nil {
		return err
	}
	if _, err := st.AnnotationSet(ctx, c, set); err != nil {
		return err
	}
	names, err := splitNames(splits)
	if err != nil {
		return err
	}
	for _, split := range names {
		n, err := st.CountDocuments(ctx, c, split)
		if err != nil {
			return err
		}
		if n == 0 {
			return st.NoDocumentsIn(ctx, c, split)
		}
	}
	return nil
}

// validate checks p when its kind can be checked before it runs.
func validate(p any) error {
	v, ok := p.(validator)
	if !ok {
		return nil
	}
	return apperr.Wrap(apperr.Invalid, v.Validate())
}

// required says that a parameter has no value.
func required(field string) error { return fmt.Errorf("%s is required", field) }

// Handlers are the job kinds deidcorpus runs. Every process that works jobs
// registers the same set.
func Handlers() map[string]Handler {
	return map[string]Handler{
		PingParams{}.JobKind():         ping,
		ImportParams{}.JobKind():       importFiles,
		ExportParams{}.JobKind():       export,
		DeriveParams{}.JobKind():       derive,
		EvaluateParams{}.JobKind():     evaluateSets,
		ResynthesizeParams{}.JobKind(): resynthesize,
		TrainParams{}.JobKind():        train,
		CalibrateParams{}.JobKind():    calibrateJob,
		ExperimentParams{}.JobKind():   runExperiment,
		PartParams{}.JobKind():         runPart,
		DeidentifyParams{}.JobKind():   deidentify,
	}
}

// queuedBy names, per kind, the rule (auth/rules.go) of the mutation that
// queues its jobs. A job runs as its creator's account is now, so the rule's
// role is checked again when it starts: an account demoted since it queued
// the job (and retries it) is refused as the mutation would refuse it.
var queuedBy = map[string]string{
	ImportParams{}.JobKind():       "Mutation.startImport",
	ExportParams{}.JobKind():       "Mutation.startExport",
	DeriveParams{}.JobKind():       "Mutation.startDerive",
	EvaluateParams{}.JobKind():     "Mutation.startEvaluation",
	ResynthesizeParams{}.JobKind(): "Mutation.startResynthesis",
	TrainParams{}.JobKind():        "Mutation.startTraining",
	CalibrateParams{}.JobKind():    "Mutation.startTraining",
	TagParams{}.JobKind():          "Mutation.startTagging",
	ExperimentParams{}.JobKind():   "Mutation.startExperiment",
	DeidentifyParams{}.JobKind():   "Mutation.deidentify",
}

// Splits are the kinds whose jobs are cut into parts that every worker
// takes (see Split): every tag job, and a resynthesis that asks for parts.
func Splits() map[string]Split {
	return map[string]Split{TagParams{}.JobKind(): tagSplit, ResynthesizeParams{}.JobKind(): resynthSplit}
}

// Kinds lists the job kinds, sorted: what the API offers to filter jobs by.
func Kinds() []string {
	kinds := Handlers()
	for k := range Splits() {
		kinds[k] = nil
	}
	return slices.Sorted(maps.Keys(kinds))
}

// PingParams ask for a job that does nothing.
type PingParams struct{}

// ping does nothing; it measures the queue itself (benchmarks, health checks).
func ping(ctx context.Context, run *Run) (Result, error) {
	return resultOf(PingResult{Pong: true})
}
