// Package gate decides whether a surrogate corpus may be released for
// outside sharing given where the spans its resynthesis replaced came from.
// Spans a tagger found leave the PHI it missed in the text: such a corpus
// is shared only with the tagger's held-out estimate of that risk, and not
// when the estimate is above its policy's ceiling (maxNoteLeakRate).
// Annotators' spans (gold) pass as they always did: their misses are what
// the resynthesis check's unannotated finds count.
package gate

import (
	"encoding/json"
	"fmt"
	"strings"

	"deidcorpus/pipeline/tagger"
)

// Key is the provenance key under which a resynthesis run records the
// Tagger whose spans it replaced.
const Key = "tagger"

// Tagger is what a resynthesis run made from a tagger's spans records: the
// annotation set, the model and the point it tagged at, and the model's
// held-out estimate of the risk at that point (Risk), or why there is none
// (NoEstimate).
type Tagger struct {
	Set          string                `json:"set"`
	Model        string                `json:"model,omitempty"` // "": the set names none (imported)
	ModelHash    string                `json:"modelHash,omitempty"`
	Point        tagger.OperatingPoint `json:"operatingPoint"`
	TargetRecall float64               `json:"targetRecall,omitempty"` // privacy point: what was asked (0: the calibrated recall)
	// Folds are the held-out patient folds the estimate was measured on.
	Folds      int                 `json:"folds,omitempty"`
	Risk       *tagger.HeldOutRisk `json:"risk,omitempty"`
	NoEstimate string              `json:"noEstimate,omitempty"`
}

// Run is what the gate reads of one resynthesis run's provenance.
type Run struct {
	Tagger *Tagger `json:"tagger"`
	Policy *Policy `json:"policy"`
}

// Policy is what the gate reads of a run's resynthesis policy
// (surrogate.Policy): the ceiling on notes with a leaked value.
type Policy struct {
	MaxNoteLeakRate *float64 `json:"maxNoteLeakRate"`
}

// Ceiling is the run's policy's maxNoteLeakRate, if it has one.
func (r Run) Ceiling() (float64, bool) {
	if r.Policy == nil || r.Policy.MaxNoteLeakRate == nil {
		return 0, false
	}
	return *r.Policy.MaxNoteLeakRate, true
}

// Runs reads a surrogate corpus's resynthesis runs from its provenance:
// the run that made it and those that added notes since.
func Runs(prov map[string]any) ([]Run, error) {
	data, err := json.Marshal(prov)
	if err != nil {
		return nil, err
	}
	var p struct {
		Run
		Runs []Run `json:"runs"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("the corpus's provenance: %w", err)
	}
	return append([]Run{p.Run}, p.Runs...), nil
}

// Check refuses to share corpus when one of its runs replaced a tagger's
// spans without a held-out estimate, or with an estimate of notes with a
// leaked value above its policy's ceiling, naming the figure and the
// ceiling.
func Check(corpus string, runs []Run) error {
	for _, r := range runs {
		t := r.Tagger
		if t == nil {
			continue
		}
		if t.Risk == nil {
			return fmt.Errorf("corpus %q was resynthesized from the spans of %s without a held-out estimate of the risk they leave (%s): "+
				"it cannot be released for outside sharing; make it with deidcorpus deidentify, which tags at a calibrated model's "+
				"privacy point and records the estimate", corpus, t.what(), t.NoEstimate)
		}
		if ceiling, ok := r.Ceiling(); ok && t.Risk.NoteLeakRate > ceiling {
			return fmt.Errorf("corpus %q: notes with a leaked value, %.4f (95%% CI %.4f to %.4f; the held-out estimate of %s), "+
				"are above the policy's maxNoteLeakRate %.4f: it cannot be released for outside sharing (calibrating the model at a "+
				"higher target recall, deidcorpus models calibrate --model %s --target-recall R, or training it on more annotated "+
				"notes may lower the estimate; deidentify again with the new model)",
				corpus, t.Risk.NoteLeakRate, t.Risk.NoteLeakRateCI.Low, t.Risk.NoteLeakRateCI.High, t.what(), ceiling, t.Model)
		}
	}
	return nil
}

// what names the tagger and its set in a sentence.
func (t Tagger) what() string {
	if t.Model == "" {
		return fmt.Sprintf("annotation set %q (a system's, made outside deidcorpus)", t.Set)
	}
	return fmt.Sprintf("model %s at its %s point (annotation set %q)", t.Model, t.Point, t.Set)
}

// Words is the datasheet's account of the risk the run may still hold, in
// words: what found the PHI, the held-out figures with their intervals,
// and the ceiling it was shared under.
func (r Run) Words() string {
	t := r.Tagger
	if t == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The PHI that resynthesis replaced in these notes was found by a tagger, not by annotators: %s. ", t.what())
	if t.Risk == nil {
		fmt.Fprintf(&b, "There is no held-out estimate of what it missed (%s).", t.NoEstimate)
		return b.String()
	}
	k := t.Risk
	pct := func(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) }
	fmt.Fprintf(&b, "What it misses stands in the text as it was written. Measured on %d held-out patient folds of the model's own "+
		"training data (%d notes, %d values the policy replaces), a corpus made from its tags keeps %.1f of every 1,000 such values "+
		"(95%% CI %.1f to %.1f); %s of notes hold at least one (95%% CI %s to %s), and %s hold a direct identifier: a name, id, "+
		"contact, street or date (95%% CI %s to %s). It found %s of PHI characters; %s of its spans touch PHI (the others put a "+
		"surrogate where an ordinary word was).",
		t.Folds, k.Documents, k.Values, k.ValuesLeakedPer1000, k.ValuesLeakedPer1000CI.Low, k.ValuesLeakedPer1000CI.High,
		pct(k.NoteLeakRate), pct(k.NoteLeakRateCI.Low), pct(k.NoteLeakRateCI.High),
		pct(k.NoteDirectRate), pct(k.NoteDirectRateCI.Low), pct(k.NoteDirectRateCI.High), pct(k.CharRecall), pct(k.SpanPrecision))
	if k.Point == tagger.Privacy && t.TargetRecall > k.TargetRecall {
		fmt.Fprintf(&b, " The figures were measured at the calibrated target recall %g; these notes were tagged at %g, which calls at "+
			"least as many tokens PHI, so they bound the risk from above.", k.TargetRecall, t.TargetRecall)
	}
	if ceiling, ok := r.Ceiling(); ok {
		fmt.Fprintf(&b, " The policy allows at most %s of notes with a leaked value.", pct(ceiling))
	}
	b.WriteString(" The estimate holds for notes like those the model was trained on; notes of other kinds may leak more.")
	return b.String()
}
