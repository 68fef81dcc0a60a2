package evaluate

import (
	"fmt"
	"io"
	"sort"
	"strconv"

	"deidcorpus/pipeline"
)

// Metric names the headline scorer of a report.
type Metric string

const (
	MetricI2B2      Metric = "i2b2"      // the official i2b2 2014 script's measures
	MetricMeddocan  Metric = "meddocan"  // the MEDDOCAN track's measures
	MetricPhysioNet Metric = "physionet" // PhysioNet deid's runStat overlap rule
)

// Metrics lists the metrics Evaluate knows.
func Metrics() []Metric { return []Metric{MetricI2B2, MetricMeddocan, MetricPhysioNet} }

// HIPAA list names, as a Report records them.
const (
	HIPAAScript = "script" // the official script's list, without IDNUM
	HIPAAPaper  = "paper"  // Stubbs & Uzuner 2015 section 8, with IDNUM
)

// Options tune Evaluate.
type Options struct {
	Metric Metric // default MetricI2B2
	// PaperHIPAA uses the paper's HIPAA list (with IDNUM) instead of the
	// script's everywhere the HIPAA subset is used.
	PaperHIPAA bool
	// HIPAAOnly restricts the analyses (per-type scores, confusion matrix,
	// error taxonomy, token accuracy) to HIPAA tags. The headline measures
	// keep the script's layout, which has its own HIPAA sections.
	HIPAAOnly bool
	// Summary leaves out of the report the lists that grow with the corpus:
	// each measure's per-document scores and the error instances. Every
	// figure stays; what a stored evaluation of a whole corpus keeps.
	Summary bool
}

// TypeScores are one label's micro scores in each mode.
type TypeScores struct {
	Category string `json:"category"`
	Type     string `json:"type"`
	HIPAA    bool   `json:"hipaa"`
	Token    Score  `json:"token"`
	Strict   Score  `json:"strict"`
	Relaxed  Score  `json:"relaxed"`
}

// Report is everything one evaluation found. It is plain data, stored by the
// server as JSON and rendered by Render.
type Report struct {
	Metric     Metric   `json:"metric"`
	HIPAAList  string   `json:"hipaa_list"` // HIPAAScript or HIPAAPaper
	HIPAATypes []string `json:"hipaa_types"`
	HIPAAOnly  bool     `json:"hipaa_only_analyses"`
	Documents  int      `json:"documents"` // paired documents
	GoldOnly   []string `json:"gold_only,omitempty"`
	SystemOnly []string `json:"system_only,omitempty"`

	// Measures are the i2b2 script's evaluations, in its order (i2b2 metric).
	Measures []Measure       `json:"measures,omitempty"`
	Meddocan *MeddocanScores `json:"meddocan,omitempty"`
	Overlap  *OverlapScores  `json:"overlap,omitempty"`

	PerType   []TypeScores  `json:"per_type,omitempty"`
	Confusion Confusion     `json:"confusion"`
	Errors    ErrorAnalysis `json:"errors"`
	Accuracy  TokenAccuracy `json:"token_accuracy"`

	// RecallBiasCurve is filled by a tagging run asked for one: the same
	// model's strict micro scores at each recall bias (MIST's knob).
	RecallBiasCurve []CurvePoint `json:"recall_bias_curve,omitempty"`
}

// CurvePoint is a tagger's strict micro score at one recall bias.
type CurvePoint struct {
	Bias float64 `json:"bias"`
	Counts
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// Evaluate scores a system's documents against gold ones. Documents pair by
// ID; those on one side only are listed in the report and, except under the
// PhysioNet metric (whose runStat counts them), left out. Offsets-only
// documents (empty text) score under the PhysioNet and MEDDOCAN span rules;
// token measures need text, so the i2b2 metric then needs span texts.
func Evaluate(gold, system []pipeline.Document, opt Options) (*Report, error) {
	a, err := NewAccumulator(opt)
	if err != nil {
		return nil, err
	}
	if err := a.Add(gold, system); err != nil {
		return nil, err
	}
	return a.Report()
}

// Agreement measures how far two annotation sets of the same documents agree,
// with the same scorer as system evaluation: a is taken as the reference,
// and F1 (symmetric under exact matching) is the pairwise agreement. It
// reports token, strict and relaxed matching, label-aware and label-blind,
// micro and macro.
func Agreement(a, b []pipeline.Document, paperHIPAA bool) (*AgreementReport, error) {
	pairs, aOnly, bOnly, err := PairDocuments(a, b)
	if err != nil {
		return nil, err
	}
	sc := NewScorer(pairs, paperHIPAA)
	ms, err := sc.Run([]Spec{
		{Label: "Token", Mode: Token},
		{Label: "Strict", Mode: Strict},
		{Label: "Relaxed", Mode: Relaxed},
		{Label: "Binary Token", Mode: Token, Binary: true},
		{Label: "Binary Strict", Mode: Strict, Binary: true},
	})
	if err != nil {
		return nil, err
	}
	return &AgreementReport{Documents: len(pairs), AOnly: aOnly, BOnly: bOnly, Measures: ms}, nil
}

// AgreementReport is the result of Agreement.
type AgreementReport struct {
	Documents int       `json:"documents"`
	AOnly     []string  `json:"a_only,omitempty"`
	BOnly     []string  `json:"b_only,omitempty"`
	Measures  []Measure `json:"measures"`
}

// Render writes a report's headline measures in the layout of the scorer
// they come from (the i2b2 script, the MEDDOCAN script or runStat), so that
// it compares line by line with that scorer's output.
func Render(w io.Writer, r *Report, verbose bool) error {
	switch r.Metric {
	case MetricMeddocan:
		if r.Meddocan != nil {
			return RenderMeddocan(w, *r.Meddocan)
		}
	case MetricPhysioNet:
		if r.Overlap != nil {
			return RenderOverlap(w, *r.Overlap)
		}
	default:
		return RenderI2B2(w, r.Measures, verbose)
	}
	return nil
}

// RenderAnalysis writes the analyses no official scorer prints: per-type
// scores, the confusion matrix, the error taxonomy with exposure, and token
// accuracy.
func RenderAnalysis(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	f4 := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	fmt.Fprintf(ew, "HIPAA list: %s (%d types)", r.HIPAAList, len(r.HIPAATypes))
	if r.HIPAAOnly {
		fmt.Fprint(ew, "; analyses below cover HIPAA tags only")
	}
	fmt.Fprintf(ew, "\nDocuments scored: %d", r.Documents)
	if len(r.GoldOnly)+len(r.SystemOnly) > 0 {
		fmt.Fprintf(ew, " (not scored: %d gold only, %d system only)", len(r.GoldOnly), len(r.SystemOnly))
	}
	fmt.Fprint(ew, "\n\n")
	// Types in full (MEDDOCAN's run to thirty letters), the columns aligned.
	typeW := 20
	for _, t := range r.PerType {
		typeW = max(typeW, len(t.Type)+2)
	}
	for t := range r.Errors.ByType {
		typeW = max(typeW, len(t)+2)
	}
	if len(r.PerType) > 0 {
		fmt.Fprintf(ew, "%s%s%s%s\n", pad("Type", typeW), pad("Token P/R/F1", 24), pad("Strict P/R/F1", 24), "Relaxed P/R/F1")
		for _, t := range r.PerType {
			prf := func(s Score) string { return f4(s.Precision) + " " + f4(s.Recall) + " " + f4(s.F1) }
			fmt.Fprintf(ew, "%s%s%s%s\n", pad(t.Type, typeW), pad(prf(t.Token), 24), pad(prf(t.Strict), 24), prf(t.Relaxed))
		}
		fmt.Fprintln(ew)
	}
	renderConfusion(ew, r.Confusion)
	e := r.Errors
	fmt.Fprintln(ew, "Gold tags by outcome (exposed = leaves PHI characters uncovered by every system tag):")
	fmt.Fprintf(ew, "%s%s%s%s%s%s%s%s\n", pad("Type", typeW), pad("gold", 8), pad("correct", 9), pad("missed", 8),
		pad("span", 8), pad("tag", 8), pad("both", 8), "exposed (chars)")
	line := func(name string, x ErrorCounts) {
		fmt.Fprintf(ew, "%s%s%s%s%s%s%s%d (%d/%d)\n", pad(name, typeW), pad(strconv.Itoa(x.Gold), 8), pad(strconv.Itoa(x.Correct), 9),
			pad(strconv.Itoa(x.Missed), 8), pad(strconv.Itoa(x.SpanClash), 8), pad(strconv.Itoa(x.TagClash), 8),
			pad(strconv.Itoa(x.BothClash), 8), x.Exposed, x.ExposedChars, x.GoldChars)
	}
	types := make([]string, 0, len(e.ByType))
	for t := range e.ByType {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		line(t, e.ByType[t])
	}
	line("ALL", e.Total)
	a := r.Accuracy
	if a.Documents > 0 {
		fmt.Fprintf(ew, "\nToken accuracy over %d words of %d documents: %s (label-blind %s); PHI words left unmasked: %d of %d (exposure %s)\n",
			a.Words, a.Documents, f4(a.Accuracy), f4(a.LabelBlind), a.PHIWords-a.MaskedPHIWords, a.PHIWords, f4(a.Exposure))
	}
	return ew.err
}

// renderConfusion writes the confusion matrix with every type in full: the
// rows are numbered, and each column is headed by its type's row number, so
// that a column is as narrow as its counts whatever the length of the types.
func renderConfusion(w io.Writer, c Confusion) {
	if len(c.Types) == 0 {
		return
	}
	nameW := len(Spurious)
	for _, t := range c.Types {
		nameW = max(nameW, len(t))
	}
	cellW := len(strconv.Itoa(len(c.Types)))
	for _, row := range c.Cells {
		for _, v := range row {
			cellW = max(cellW, len(strconv.Itoa(v)))
		}
	}
	numW := len(strconv.Itoa(len(c.Types)))
	fmt.Fprintln(w, "Confusion matrix, strict offsets (rows gold; columns system, headed by the number of their type's row):")
	fmt.Fprintf(w, "%*s  %-*s", numW, "", nameW, "")
	for j := range c.Types {
		fmt.Fprintf(w, " %*d", cellW, j+1)
	}
	fmt.Fprintf(w, " %s\n", Missing)
	for i, row := range c.Cells {
		num, name := "", Spurious
		if i < len(c.Types) {
			num, name = strconv.Itoa(i+1), c.Types[i]
		}
		fmt.Fprintf(w, "%*s  %-*s", numW, num, nameW, name)
		for j, v := range row {
			width := cellW
			if j == len(c.Types) {
				width = len(Missing)
			}
			fmt.Fprintf(w, " %*d", width, v)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// Headline is the figure a list of evaluations shows: strict entity micro
// scores for the i2b2 metric, Subtask 1 for MEDDOCAN, and overlap recall and
// PPV (as precision) for PhysioNet.
func (r *Report) Headline() (precision, recall, f1 float64) {
	switch {
	case r.Meddocan != nil:
		s := r.Meddocan.Subtask1
		return s.Precision, s.Recall, s.F1
	case r.Overlap != nil:
		p, rc := r.Overlap.PPV, r.Overlap.Recall
		if p+rc == 0 {
			return p, rc, 0
		}
		return p, rc, 2 * p * rc / (p + rc)
	}
	for _, m := range r.Measures {
		if m.Label == "Strict" {
			return m.MicroPrecision, m.MicroRecall, m.MicroF1
		}
	}
	return 0, 0, 0
}
