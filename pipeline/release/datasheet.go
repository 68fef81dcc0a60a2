package release

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"deidcorpus/pipeline/gate"
)

// Datasheet is what a release's DATASHEET.md tells a reader: what the corpus
// is, how it was made, what is in it, and how systems scored on it.
type Datasheet struct {
	Name, Version, Corpus, Description, TagSet string
	Sets                                       []string
	Parent                                     string
	Root                                       string
	Created                                    time.Time
	Share                                      bool
	PseudonymousIDs                            bool   // the corpus's ids replaced by keyed hashes
	CorpusPseudonyms                           bool   // the corpus's own ids are keyed hashes of its source's
	UnannotatedAccepted                        string // who shared unannotated finds, and why
	Provenance                                 map[string]any
	Documents, Patients, Characters, Tokens    int
	Spans, UniqueSpans                         int
	Splits, NoteTypes                          []Count
	Labels                                     []LabelCount
	Evaluations                                []EvaluationLine
	// ResidualRisk, for a corpus resynthesized from a system annotation
	// set, is the residual-risk experiment that measured that set against
	// gold (SPEC section 10); nil when none did.
	ResidualRisk *RiskLine
	// Tagged are the resynthesis runs that replaced a tagger's spans, each
	// with the tagger's held-out estimate of the risk left (gate.Run.Words).
	Tagged []gate.Run
}

// RiskLine is the headline of a residual-risk experiment: the leaks of the
// system set against gold, the simulated parrot attack and the
// distinguishability of a leaked original from a surrogate.
type RiskLine struct {
	Job, Seed                          int
	Corpus, System                     string
	GoldSpans, Leaked                  int
	LeakRate, LeakLow, LeakHigh        float64
	Documents, DocumentsWithLeak       int
	ParrotRecall, ParrotPrecision, AUC float64
}

// Count is the size of one split or note type.
type Count struct {
	Name                     string
	Documents, Tokens, Spans int
}

// LabelCount is one label's total and distinct-text count.
type LabelCount struct {
	Category, Type string
	Total, Unique  int
}

// EvaluationLine is one evaluation made on the corpus.
type EvaluationLine struct {
	Gold, System, Metric string
	Precision, Recall    float64
	F1                   float64
}

// Markdown renders the datasheet.
func (d Datasheet) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", Ref(d.Name, d.Version))
	if d.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", d.Description)
	}
	fmt.Fprintf(&b, "| | |\n|---|---|\n| corpus | %s |\n| tag set | %s |\n| annotation sets | %s |\n| created | %s |\n| root hash (SHA-256) | `%s` |\n",
		d.Corpus, d.TagSet, strings.Join(d.Sets, ", "), d.Created.UTC().Format(time.RFC3339), d.Root)
	if d.Parent != "" {
		fmt.Fprintf(&b, "| parent release | %s |\n", d.Parent)
	}
	fmt.Fprintf(&b, sharedLine, d.Share)
	if d.PseudonymousIDs {
		b.WriteString("| document and patient ids | pseudonymous: keyed hashes of the corpus's ids, the same in every version of this release's line |\n\n")
	} else if d.CorpusPseudonyms {
		b.WriteString("| document and patient ids | the corpus's own: keyed hashes of its source's ids, the same in every run from that source |\n\n")
	} else {
		b.WriteString("| document and patient ids | the corpus's own |\n\n")
	}

	b.WriteString("## Size\n\n")
	fmt.Fprintf(&b, "%d documents of %d patients, %d characters, %d whitespace tokens; %d PHI spans (%d distinct texts)",
		d.Documents, d.Patients, d.Characters, d.Tokens, d.Spans, d.UniqueSpans)
	if d.Documents > 0 {
		fmt.Fprintf(&b, ", %.2f per document", float64(d.Spans)/float64(d.Documents))
	}
	b.WriteString(".\n\n")
	counts := func(title string, cs []Count) {
		if len(cs) == 0 {
			return
		}
		fmt.Fprintf(&b, "| %s | documents | tokens | PHI |\n|---|---:|---:|---:|\n", title)
		for _, c := range cs {
			name := c.Name
			if name == "" {
				name = "(none)"
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", name, c.Documents, c.Tokens, c.Spans)
		}
		b.WriteString("\n")
	}
	counts("split", d.Splits)
	counts("note type", d.NoteTypes)

	if len(d.Labels) > 0 {
		// A tag set whose categories are its types (an open one) has one
		// column for the label.
		open := true
		for _, l := range d.Labels {
			open = open && (l.Category == "" || l.Category == l.Type)
		}
		if open {
			b.WriteString("## PHI by type\n\n| type | total | unique |\n|---|---:|---:|\n")
		} else {
			b.WriteString("## PHI by type\n\n| category | type | total | unique |\n|---|---|---:|---:|\n")
		}
		for _, l := range d.Labels {
			if open {
				fmt.Fprintf(&b, "| %s | %d | %d |\n", l.Type, l.Total, l.Unique)
			} else {
				fmt.Fprintf(&b, "| %s | %s | %d | %d |\n", l.Category, l.Type, l.Total, l.Unique)
			}
		}
		b.WriteString("\n")
	}

	b.WriteString("## Provenance\n\n")
	if check, ok := d.Provenance["check"].(map[string]any); ok {
		ids := check["identifiers"]
		if ids == nil {
			ids = "unsearched" // a check older than the search for source ids
		}
		fmt.Fprintf(&b, "A surrogate corpus: PHI replaced by resynthesis (its policy below). Check: ok=%v, %v leaks, %v source ids in the text, %v misaligned spans, %v inconsistent mappings, %v interval errors, %v dates checked, %v items listed for review.",
			check["ok"], check["leaks"], ids, check["misaligned"],
			check["inconsistent"], check["intervalErrors"], check["datesChecked"], check["review"])
		// Originals written where the gold has no span: copied as they were.
		if n, _ := UnannotatedTotal(d.Provenance); n > 0 {
			fmt.Fprintf(&b, " **%v original values were found outside the gold spans and copied unchanged** (unannotated: the "+
				"source's annotation missed them; a curator reads them in the check report).", n)
		}
		b.WriteString("\n\n")
		if d.UnannotatedAccepted != "" {
			fmt.Fprintf(&b, "**%s.**\n\n", d.UnannotatedAccepted)
		}
	}
	if m, ok := d.Provenance["mapping"]; ok {
		fmt.Fprintf(&b, "Derived from `%v` with the tag-set mapping `%v` (%v).\n\n", d.Provenance["from"], m, d.Provenance["mappingHash"])
	}
	writeProvenance(&b, PublicProvenance(d.Provenance))

	if len(d.Evaluations) > 0 {
		b.WriteString("## Evaluations on this corpus\n\n| gold | system | metric | P | R | F1 |\n|---|---|---|---:|---:|---:|\n")
		evs := append([]EvaluationLine(nil), d.Evaluations...)
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].F1 > evs[j].F1 })
		for _, e := range evs {
			fmt.Fprintf(&b, "| %s | %s | %s | %.4f | %.4f | %.4f |\n", e.Gold, e.System, e.Metric, e.Precision, e.Recall, e.F1)
		}
		b.WriteString("\n")
	}
	if len(d.Tagged) > 0 || d.ResidualRisk != nil {
		b.WriteString("## Residual risk\n\n")
	}
	for _, r := range d.Tagged {
		fmt.Fprintf(&b, "%s\n\n", r.Words())
	}
	if r := d.ResidualRisk; r != nil {
		fmt.Fprintf(&b, "The annotation set `%s` that resynthesis replaced was measured against the gold of `%s` "+
			"(residual-risk experiment, job %d, seed %d): %d of %d gold spans (%.4f, 95%% CI %.4f to %.4f) were missed and stand in the "+
			"surrogate text as they were, in %d of %d notes. A simulated parrot attack (Carrell et al. 2019: recall 0.68, precision 0.52) "+
			"found them with recall %.3f and precision %.3f; a classifier told a leaked original from a surrogate with ROC AUC %.3f "+
			"(0.5: indistinguishable).\n\n", r.System, r.Corpus, r.Job, r.Seed, r.Leaked, r.GoldSpans, r.LeakRate, r.LeakLow, r.LeakHigh,
			r.DocumentsWithLeak, r.Documents, r.ParrotRecall, r.ParrotPrecision, r.AUC)
	}
	b.WriteString("Verify an archive of this release with `deidcorpus release verify FILE.zip`: it recomputes every file's SHA-256 against MANIFEST and every document's content hash against the root hash.\n")
	return b.String()
}

// provenanceWords names a provenance's keys in words, in the order the
// datasheet lists them; a key not named here follows, as it is.
var provenanceWords = []struct{ key, words string }{
	{"source", "made by"}, {"from", "derived from"}, {"mapping", "tag-set mapping"}, {"mappingHash", "mapping's hash"},
	{"format", "format"}, {"note", "note"}, {"patients", "patients"}, {"documents", "notes"}, {"tagset", "tag set"},
	{"set", "from the annotation set"}, {"language", "language"}, {"policy", "policy"}, {"labels", "label rules"},
	{"parts", "parts"}, {"unannotatedFinds", "originals found outside the gold spans"}, {"unannotatedNotes", "notes holding them"},
	{"tagger", "tagged by"}, {"seed", "seed"}, {"codeVersion", "code version"},
}

// sources says what a provenance's source means.
var sources = map[string]string{"resynthesis": "resynthesis (PHI replaced by surrogates)", "synth": "synthesis (no real PHI)",
	"import": "import", "demo": "the demo"}

// writeProvenance writes a provenance as a table in words; the check has
// its sentence above, and a custom policy, data by nature, follows as JSON.
func writeProvenance(b *strings.Builder, prov map[string]any) {
	named := map[string]bool{"check": true}
	var rows [][2]string
	add := func(k string, words string) {
		named[k] = true
		if v, ok := prov[k]; ok {
			rows = append(rows, [2]string{words, provenanceValue(k, v)})
		}
	}
	for _, w := range provenanceWords {
		add(w.key, w.words)
	}
	var rest []string
	for k := range prov {
		if !named[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		add(k, k)
	}
	if len(rows) > 0 {
		b.WriteString("| | |\n|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(b, "| %s | %s |\n", r[0], cell(r[1]))
		}
		b.WriteString("\n")
	}
	if p, ok := prov["policy"].(map[string]any); ok && len(p) > 0 {
		js, _ := json.MarshalIndent(p, "", "  ")
		fmt.Fprintf(b, "The policy, as given:\n\n```json\n%s\n```\n\n", js)
	}
}

// cell keeps a value inside its Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

// provenanceValue writes one provenance value for people: label rules as
// "LABEL: strategy", a missing policy as the built-in one, other maps as
// "key value" pairs.
func provenanceValue(key string, v any) string {
	switch x := v.(type) {
	case nil:
		if key == "policy" {
			return "built-in (the papers')"
		}
		return "none"
	case string:
		if key == "source" && sources[x] != "" {
			return sources[x]
		}
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case map[string]any:
		if key == "policy" {
			return "custom (below)"
		}
		keys := slices.Sorted(maps.Keys(x))
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+" "+provenanceValue(k, x[k]))
		}
		return strings.Join(parts, ", ")
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			if r, ok := e.(map[string]any); ok && r["Label"] != nil {
				strategy, _ := r["Strategy"].(string)
				rule := fmt.Sprintf("%v: %s", r["Label"], cmp.Or(strategy, "kept"))
				if via, _ := r["Via"].(string); via != "" {
					rule += fmt.Sprintf(" (via %s as %v)", via, r["As"])
				}
				parts = append(parts, rule)
				continue
			}
			parts = append(parts, provenanceValue("", e))
		}
		return strings.Join(parts, "; ")
	default:
		return fmt.Sprint(v)
	}
}

// UnannotatedKey is the provenance key under which a surrogate corpus
// counts, per note, the originals its text holds where the source's gold
// has no span (unannotated finds): kept across runs, a rewritten note
// counted afresh.
const UnannotatedKey = "unannotatedDocuments"

// Unannotated reads a surrogate corpus's count of unannotated finds per
// note; known is false for a corpus from before the count.
func Unannotated(prov map[string]any) (perNote map[string]int, known bool) {
	m, known := prov[UnannotatedKey].(map[string]any)
	perNote = map[string]int{}
	for id, n := range m {
		if f, ok := n.(float64); ok && f > 0 {
			perNote[id] = int(f)
		}
	}
	return perNote, known
}

// UnannotatedTotal is how many unannotated finds a surrogate corpus holds,
// and in how many notes; for a corpus from before the count per note, its
// first run's check count, in notes not counted (docs 0).
func UnannotatedTotal(prov map[string]any) (finds, docs int) {
	perNote, known := Unannotated(prov)
	if !known {
		check, _ := prov["check"].(map[string]any)
		n, _ := check["unannotated"].(float64)
		return int(n), 0
	}
	for _, n := range perNote {
		finds, docs = finds+n, docs+1
	}
	return finds, docs
}

// PublicProvenance is a corpus's provenance as a release and a researcher
// read it. A surrogate corpus's says how it was made (policy, code, check
// counts), never from what: not its source corpus's name or id, the seed,
// the jobs and runs, nor what counts the source's values (mappings drawn and
// reused, name patterns, the notes with unannotated finds, which name notes
// by the corpus's own ids). Other provenance loses the per-note counts only.
func PublicProvenance(prov map[string]any) map[string]any {
	if prov["source"] != "resynthesis" {
		if _, ok := prov[UnannotatedKey]; !ok {
			return prov
		}
		out := maps.Clone(prov)
		delete(out, UnannotatedKey)
		return out
	}
	out := map[string]any{}
	for k, v := range prov {
		if publicResynthesis[k] {
			out[k] = v
		}
	}
	if check, ok := prov["check"].(map[string]any); ok {
		public := map[string]any{}
		for k, v := range check {
			if publicCheck[k] {
				public[k] = v
			}
		}
		out["check"] = public
	}
	if n, docs := UnannotatedTotal(prov); n > 0 {
		out["unannotatedFinds"], out["unannotatedNotes"] = n, docs
	}
	return out
}

// The keys of a surrogate corpus's provenance, and of its check summary,
// that PublicProvenance keeps.
var (
	publicResynthesis = map[string]bool{"source": true, "set": true, "policy": true, "codeVersion": true,
		"language": true, "documents": true, "labels": true, "parts": true, gate.Key: true}
	publicCheck = map[string]bool{"ok": true, "documents": true, "misaligned": true, "leaks": true, "identifiers": true,
		"inconsistent": true, "intervalErrors": true, "equalToOriginal": true, "metadata": true, "unannotated": true,
		"datesChecked": true, "review": true}
)
