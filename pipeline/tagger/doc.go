// Package tagger is deidcorpus's built-in hybrid PHI tagger, after Yang &
// Garibaldi (2015): a tokenizer for clinical text that keeps offsets, feature
// generation kept apart from learning (as in CRFsuite), a linear-chain CRF with
// BIO labels trained by L-BFGS on a softmax-margin objective with L2
// regularization, rules for rare types,
// and post-processing that propagates trusted PHI terms across a patient's
// records.
//
// The job layer calls Train to fit a Model on documents with gold spans,
// Model.Tag to annotate documents (grouped by patient through
// pipeline.Document.Patient), Model.Save / Load to store the artifact and
// Model.Hash to identify it; WriteCRFsuite exports the features in CRFsuite's
// text format so other toolkits can be run on exactly the same features.
//
// Offsets: the package works in byte offsets inside and converts to Unicode
// code points only through pipeline.Index, at its edges.
package tagger
