package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"deidcorpus/auth"
)

// TestProvenanceAsAViewerReadsIt: a researcher reads a surrogate corpus's
// and its release's provenance without the source, the seed, the per-note
// counts or a curator's reason, and so does an annotator; a curator reads
// them whole.
func TestProvenanceAsAViewerReadsIt(t *testing.T) {
	corpus := map[string]any{"source": "resynthesis", "from": "hospital-x", "fromID": 7.0, "seed": 424242.0, "job": 9.0,
		"policy": map[string]any{"comments": "drop"}, "language": "es", "documents": 3.0,
		"check":                map[string]any{"ok": true, "leaks": 0.0, "replaced": 12.0, "namePatterns": []any{}},
		"unannotatedDocuments": map[string]any{"MRN-1-01": 2.0}, "runs": []any{map[string]any{"seed": 1.0}}}
	rel := map[string]any{"corpus": "notes-r", "corpusProvenance": corpus,
		"unannotatedAccepted": map[string]any{"finds": 2, "documents": 1, "reason": "Zamacola is a nickname", "by": "cara"}}
	researcher := auth.NewContext(context.Background(), auth.NewViewer(5, "rita", auth.Researcher))
	curator := auth.NewContext(context.Background(), auth.NewViewer(6, "cara", auth.Curator))

	pub := CorpusProvenance(researcher, corpus)
	for _, k := range []string{"from", "fromID", "seed", "job", "unannotatedDocuments", "runs"} {
		assert.NotContains(t, pub, k)
	}
	assert.Equal(t, map[string]any{"ok": true, "leaks": 0.0}, pub["check"])
	assert.Equal(t, 2, pub["unannotatedFinds"])
	assert.Equal(t, "es", pub["language"])
	assert.Equal(t, corpus, CorpusProvenance(curator, corpus))

	r := ReleaseProvenance(researcher, rel)
	assert.NotContains(t, r["corpusProvenance"], "seed")
	assert.Equal(t, map[string]any{"finds": 2, "documents": 1, "by": "cara"}, r["unannotatedAccepted"])
	assert.Equal(t, "Zamacola is a nickname", rel["unannotatedAccepted"].(map[string]any)["reason"], "the stored provenance is untouched")
	assert.Equal(t, rel, ReleaseProvenance(curator, rel))

	// An annotator reads what a researcher reads (issue 60): no reason, no
	// source, seed or job.
	annotator := auth.NewContext(context.Background(), auth.NewViewer(7, "ann", auth.Annotator))
	assert.Equal(t, r, ReleaseProvenance(annotator, rel))
	assert.Equal(t, pub, CorpusProvenance(annotator, corpus))
}
