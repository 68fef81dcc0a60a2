package release

import (
	"strings"
	"testing"

	"deidcorpus/pipeline/gate"
	"deidcorpus/pipeline/tagger"
)

// A datasheet states a surrogate corpus's check, and says plainly when the
// check found originals copied where the gold had no span, and which ids
// the release carries.
func TestDatasheetStatesTheCheck(t *testing.T) {
	check := map[string]any{"ok": true, "leaks": 0.0, "identifiers": 0.0, "misaligned": 0.0, "inconsistent": 0.0,
		"intervalErrors": 0.0, "datesChecked": 12.0, "review": 3.0, "unannotated": 0.0}
	d := Datasheet{Name: "n", Version: "1.0.0", Provenance: map[string]any{"from": "src", "seed": 7.0, "check": check}}
	clean := d.Markdown()
	for _, want := range []string{"Check: ok=true, 0 leaks, 0 source ids in the text", "12 dates checked, 3 items listed for review.\n",
		"| document and patient ids | the corpus's own |"} {
		if !strings.Contains(clean, want) {
			t.Errorf("the datasheet lacks %q:\n%s", want, clean)
		}
	}
	if strings.Contains(clean, "copied unchanged") {
		t.Errorf("a check without unannotated finds mentions them:\n%s", clean)
	}
	check["unannotated"] = 2.0
	d.PseudonymousIDs = true
	sheet := d.Markdown()
	for _, want := range []string{"**2 original values were found outside the gold spans and copied unchanged**",
		"| document and patient ids | pseudonymous"} {
		if !strings.Contains(sheet, want) {
			t.Errorf("the datasheet lacks %q:\n%s", want, sheet)
		}
	}
	// The count per note, where the corpus keeps one, is what the text
	// holds now: later runs rewrote notes the first run counted.
	d.Provenance["unannotatedDocuments"] = map[string]any{"a": 1.0, "b": 2.0}
	if sheet := d.Markdown(); !strings.Contains(sheet, "**3 original values were found") {
		t.Errorf("the count per note is not stated:\n%s", sheet)
	}
	d.Provenance["unannotatedDocuments"] = map[string]any{}
	if sheet := d.Markdown(); strings.Contains(sheet, "copied unchanged") {
		t.Errorf("a corpus whose notes hold no unannotated find mentions them:\n%s", sheet)
	}
}

// The PHI table names each label once where the tag set's categories are
// its types (an open tag set, as MEDDOCAN's own), and both otherwise.
func TestDatasheetLabels(t *testing.T) {
	open := Datasheet{Name: "n", Version: "1.0.0", Labels: []LabelCount{{"CALLE", "CALLE", 4, 3}, {"PAIS", "PAIS", 2, 1}}}
	sheet := open.Markdown()
	for _, want := range []string{"| type | total | unique |", "| CALLE | 4 | 3 |"} {
		if !strings.Contains(sheet, want) {
			t.Errorf("the datasheet lacks %q:\n%s", want, sheet)
		}
	}
	if strings.Contains(sheet, "| CALLE | CALLE |") {
		t.Errorf("an open tag set's label is written twice:\n%s", sheet)
	}
	i2b2 := Datasheet{Name: "n", Version: "1.0.0", Labels: []LabelCount{{"NAME", "DOCTOR", 4, 3}, {"LOCATION", "CITY", 2, 1}}}
	if sheet := i2b2.Markdown(); !strings.Contains(sheet, "| NAME | DOCTOR | 4 | 3 |") {
		t.Errorf("the datasheet lacks the category and type:\n%s", sheet)
	}
}

// A datasheet's provenance reads in words, and a shared surrogate corpus's
// names neither its source nor its seed; a custom policy follows as JSON.
func TestDatasheetProvenanceInWords(t *testing.T) {
	prov := map[string]any{"source": "resynthesis", "from": "ward-original", "seed": 7.0, "policy": nil, "language": "es",
		"labels": []any{map[string]any{"Label": "NAME/PATIENT", "Strategy": "name"}, map[string]any{"Label": "AGE/AGE", "Strategy": ""}},
		"check":  map[string]any{"ok": true}}
	sheet := Datasheet{Name: "n", Version: "1.0.0", Provenance: prov}.Markdown()
	for _, want := range []string{"| made by | resynthesis (PHI replaced by surrogates) |", "| policy | built-in (the papers') |",
		"| language | es |", "| label rules | NAME/PATIENT: name; AGE/AGE: kept |"} {
		if !strings.Contains(sheet, want) {
			t.Errorf("the datasheet lacks %q:\n%s", want, sheet)
		}
	}
	for _, never := range []string{"ward-original", "seed", "```json"} {
		if strings.Contains(sheet, never) {
			t.Errorf("the datasheet holds %q:\n%s", never, sheet)
		}
	}
	prov["policy"] = map[string]any{"types": map[string]any{"DATE": map[string]any{"strategy": "shift"}}}
	sheet = Datasheet{Name: "n", Version: "1.0.0", Provenance: prov}.Markdown()
	if !strings.Contains(sheet, "| policy | custom (below) |") || !strings.Contains(sheet, "The policy, as given:\n\n```json\n{\n  \"types\"") {
		t.Errorf("a custom policy is not given whole:\n%s", sheet)
	}
}

// A corpus made from a tagger's spans has a residual-risk section in words,
// and the public provenance keeps the tagger's record (no source name).
func TestDatasheetStatesATaggersRisk(t *testing.T) {
	tagged := gate.Run{Tagger: &gate.Tagger{Set: "deidentify-4", Model: "crf1", Point: tagger.Privacy, Folds: 5,
		Risk: &tagger.HeldOutRisk{Point: tagger.Privacy, NoteLeakRate: 0.012}}}
	d := Datasheet{Name: "n", Version: "1.0.0", Tagged: []gate.Run{tagged},
		Provenance: map[string]any{"source": "resynthesis", "from": "ward", gate.Key: map[string]any{"model": "crf1"}}}
	sheet := d.Markdown()
	for _, want := range []string{"## Residual risk\n\nThe PHI that resynthesis replaced in these notes was found by a tagger",
		"1.20% of notes hold at least one", "| tagged by | model crf1 |"} {
		if !strings.Contains(sheet, want) {
			t.Errorf("the datasheet lacks %q:\n%s", want, sheet)
		}
	}
	if strings.Contains(sheet, "ward") {
		t.Errorf("the datasheet names the source corpus:\n%s", sheet)
	}
	if strings.Contains(Datasheet{Name: "n", Version: "1.0.0"}.Markdown(), "Residual risk") {
		t.Error("a datasheet without a tagger or an experiment has a residual-risk section")
	}
}
