// Package evaluate scores de-identification output against gold annotations
// the way the field scores it, on plain pipeline.Documents and without a
// database.
//
// The centre is the official i2b2 2014 evaluation script, reproduced quirks
// and all so that figures are comparable with published ones: token, strict
// and relaxed matching over tag sets per document, micro and macro averages,
// the HIPAA subset (the script's list by default, the paper's on request),
// label-blind ("Binary") and per-category evaluations, and a text renderer
// whose output matches the script's line by line (Render). Around it live the
// other scorers a researcher meets: the MEDDOCAN track's measures (Meddocan),
// PhysioNet deid's overlap rule (Overlap), a confusion matrix with missing and
// spurious cells (Yang & Garibaldi, Table 8), Yeniterzi's error taxonomy with
// PHI exposure and token accuracy, agreement between two annotation sets
// (Agreement), and significance between two systems by approximate
// randomization with Bonferroni correction plus bootstrap confidence
// intervals (Compare).
//
// Evaluate runs everything for one gold and one system set and returns a
// Report, a JSON-serializable value the server stores as is.
package evaluate
