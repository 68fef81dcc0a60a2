package jobs

import (
	"encoding/json"
	"fmt"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/job"
	"deidcorpus/internal/jsonmap"
	"deidcorpus/pipeline/evaluate"
	"deidcorpus/pipeline/experiment"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/pipeline/tagger"
)

// The result of each kind of job, as its handler writes it and the command
// line, the API and the dashboard read it. A job row stores it as a JSON
// object (Result): the field names are those earlier versions stored, so
// that their jobs read the same.

// ImportResult is what an import job wrote.
type ImportResult struct {
	Corpus        int    `json:"corpus"`
	CorpusName    string `json:"corpusName"`
	CreatedCorpus bool   `json:"createdCorpus"`
	Documents     int    `json:"documents"`
	Spans         int    `json:"spans"`
	Replaced      int    `json:"replaced"`
	WithoutSpans  int    `json:"withoutSpans"`
	Moved         int    `json:"moved"`
	Skipped       int    `json:"skipped"`
	Format        string `json:"format"`
	// FromRelease is the release.json that gave the format or tag set.
	FromRelease string `json:"fromRelease,omitempty"`
	// Ignored counts what the files held that the import could not keep,
	// by kind (brat's attributes and relations).
	Ignored map[string]int `json:"ignored,omitempty"`
}

// DeriveResult is the corpus a derive job wrote.
type DeriveResult struct {
	Corpus        int    `json:"corpus"`
	CorpusName    string `json:"corpusName"`
	CreatedCorpus bool   `json:"createdCorpus"`
	Documents     int    `json:"documents"`
	Spans         int    `json:"spans"`
	Dropped       int    `json:"dropped"` // spans the mapping dropped
	WithoutSpans  int    `json:"withoutSpans"`
	Mapping       string `json:"mapping"`
	MappingHash   string `json:"mappingHash"`
}

// ExportResult is the archive an export job stored.
type ExportResult struct {
	Artifact int    `json:"artifact"` // download at /download/artifacts/ID
	Bytes    int    `json:"bytes"`
	Sha256   string `json:"sha256"`
	Files    int    `json:"files"`
}

// EvaluateResult is the evaluation an evaluate job stored, with its strict
// micro figures.
type EvaluateResult struct {
	Evaluation int     `json:"evaluation"`
	Documents  int     `json:"documents"`
	Precision  float64 `json:"precision"`
	Recall     float64 `json:"recall"`
	F1         float64 `json:"f1"`
}

// TrainResult is the model a train job stored.
type TrainResult struct {
	Model     int          `json:"model"`
	ModelName string       `json:"modelName"`
	Hash      string       `json:"hash"`
	Metrics   TrainMetrics `json:"metrics"`
}

// TrainMetrics describe a training run; the model keeps them too.
type TrainMetrics struct {
	Documents   int     `json:"documents"`
	Tokens      int     `json:"tokens"`
	Spans       int     `json:"spans"`
	Attributes  int     `json:"attributes"`
	Features    int     `json:"features"`
	Iterations  int     `json:"iterations"`
	Loss        float64 `json:"loss"`
	Seconds     float64 `json:"seconds"`
	CodeVersion string  `json:"codeVersion"`
	// Uncalibrated says why a default training made no privacy point
	// (too few patients for the calibration's folds); "" when it made one
	// or was asked not to.
	Uncalibrated string `json:"uncalibrated,omitempty"`
}

// TagResult is the annotation set a tag job wrote and, where the corpus has
// gold, the evaluation of it.
type TagResult struct {
	AnnotationSet int    `json:"annotationSet"`
	SetName       string `json:"setName"`
	Documents     int    `json:"documents"`
	// Evaluation and its strict micro figures; nil without gold.
	Evaluation *int     `json:"evaluation,omitempty"`
	Precision  *float64 `json:"precision,omitempty"`
	Recall     *float64 `json:"recall,omitempty"`
	F1         *float64 `json:"f1,omitempty"`
	// Curve is the precision/recall curve over the recall biases asked for.
	Curve []evaluate.CurvePoint `json:"curve,omitempty"`
	// Nets counts the spans each safety net added (privacy point).
	Nets tagger.NetReport `json:"nets"`
}

// ExperimentResult is an experiment's table and tests, with what it ran on;
// a residual-risk experiment's figures instead of a table (RiskFigures).
type ExperimentResult struct {
	experiment.Result
	*experiment.RiskFigures
	Corpus      string         `json:"corpus"`
	Other       string         `json:"other"`
	CodeVersion string         `json:"codeVersion"`
	Tagger      map[string]any `json:"tagger"` // the configuration over the defaults
}

// ResynthesizeResult is what a resynthesis wrote into its surrogate corpus
// and what its check found.
type ResynthesizeResult struct {
	// Corpus is the surrogate corpus's id; earlier versions stored its
	// name there when the job wrote nothing (UnmarshalJSON reads both).
	Corpus         int               `json:"corpus,omitempty"`
	CorpusName     string            `json:"corpusName,omitempty"`
	Documents      int               `json:"documents"`
	Written        int               `json:"written"`
	RedonePatients int               `json:"redonePatients"`
	NewMappings    int               `json:"newMappings"`
	Reused         []surrogate.Reuse `json:"reused,omitempty"`
	Redo           bool              `json:"redo"`
	Check          *CheckSummary     `json:"check,omitempty"`
	CheckReport    int               `json:"checkReport,omitempty"` // the full report's sealed artifact (PHI)
	Saved          bool              `json:"saved"`
	CheckStatus    string            `json:"checkStatus"`
	CheckFindings  int               `json:"checkFindings"`
	// Message says why the job wrote nothing, or that an earlier attempt did.
	Message string `json:"message,omitempty"`
}

// UnmarshalJSON reads a result of this version or an earlier one, which
// named the corpus rather than giving its id when the job wrote nothing.
func (r *ResynthesizeResult) UnmarshalJSON(data []byte) error {
	type plain ResynthesizeResult
	var v struct {
		plain
		Corpus json.RawMessage `json:"corpus"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*r = ResynthesizeResult(v.plain)
	if len(v.Corpus) == 0 || string(v.Corpus) == "null" {
		return nil
	}
	if err := json.Unmarshal(v.Corpus, &r.Corpus); err == nil {
		return nil
	}
	return json.Unmarshal(v.Corpus, &r.CorpusName)
}

// CheckSummary counts what the check of a resynthesis found; the full
// report is an artifact of the job, sealed (it names original values).
type CheckSummary struct {
	OK              bool                   `json:"ok"`
	Documents       int                    `json:"documents"`
	Spans           int                    `json:"spans"`
	Replaced        int                    `json:"replaced"`
	Misaligned      int                    `json:"misaligned"`
	Leaks           int                    `json:"leaks"`
	Identifiers     int                    `json:"identifiers"` // source ids in the text
	Unannotated     int                    `json:"unannotated"`
	Inconsistent    int                    `json:"inconsistent"`
	IntervalErrors  int                    `json:"intervalErrors"`
	DatesChecked    int                    `json:"datesChecked"`
	EqualToOriginal int                    `json:"equalToOriginal"`
	Metadata        int                    `json:"metadata"`
	Propagated      int                    `json:"propagated"`
	Review          int                    `json:"review"`
	NamePatterns    []surrogate.PatternRow `json:"namePatterns"`
}

// PingResult is a ping job's answer (the queue's own test).
type PingResult struct {
	Pong bool `json:"pong"`
}

// Output is the result of a job: each kind's type names its kind (the
// GraphQL union JobOutput).
type Output interface{ JobKind() string }

func (ImportResult) JobKind() string       { return (ImportParams{}).JobKind() }
func (DeriveResult) JobKind() string       { return (DeriveParams{}).JobKind() }
func (ExportResult) JobKind() string       { return (ExportParams{}).JobKind() }
func (EvaluateResult) JobKind() string     { return (EvaluateParams{}).JobKind() }
func (TrainResult) JobKind() string        { return (TrainParams{}).JobKind() }
func (TagResult) JobKind() string          { return (TagParams{}).JobKind() }
func (ExperimentResult) JobKind() string   { return (ExperimentParams{}).JobKind() }
func (ResynthesizeResult) JobKind() string { return (ResynthesizeParams{}).JobKind() }
func (PingResult) JobKind() string         { return (PingParams{}).JobKind() }

// outputs gives each kind of job a new value of its result type.
var outputs = map[string]func() Output{}

func init() {
	for _, o := range []func() Output{
		func() Output { return new(ImportResult) }, func() Output { return new(DeriveResult) },
		func() Output { return new(ExportResult) }, func() Output { return new(EvaluateResult) },
		func() Output { return new(TrainResult) }, func() Output { return new(TagResult) },
		func() Output { return new(ExperimentResult) }, func() Output { return new(ResynthesizeResult) },
		func() Output { return new(PingResult) }, func() Output { return new(CalibrateResult) },
		func() Output { return new(DeidentifyResult) },
	} {
		outputs[o().JobKind()] = o
	}
}

// ResultOf is the result of a job that succeeded (or whose output failed
// its check), as a pointer to its kind's result type (*TrainResult, ...);
// nil for a job with no result yet and for a kind without one (a part).
func ResultOf(j *ent.Job) (Output, error) {
	newResult, ok := outputs[j.Kind]
	if !ok || len(j.Result) == 0 || Err(j) != nil && j.Status != job.StatusCheckFailed {
		return nil, nil
	}
	v := newResult()
	if err := decodeParams(j.Result, v); err != nil {
		return nil, apperr.New(apperr.Internal, "job %d (%s): its result: %v", j.ID, j.Kind, err)
	}
	return v, nil
}

// DecodeResult is ResultOf for a job known to be of T's kind.
func DecodeResult[T any](j *ent.Job) (*T, error) {
	v, err := ResultOf(j)
	if err != nil || v == nil {
		return nil, err
	}
	t, ok := any(v).(*T)
	if !ok {
		return nil, fmt.Errorf("job %d is a %s job: its result is a %T", j.ID, j.Kind, v)
	}
	return t, nil
}

// resultOf records a job's typed result as the object its row stores.
func resultOf(v any) (Result, error) {
	return jsonmap.Of(v)
}
