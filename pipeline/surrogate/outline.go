package surrogate

import (
	"cmp"
	"crypto/sha256"
	"slices"
	"strconv"

	"deidcorpus/pipeline"
)

// Outline is what resynthesis leaves of a document as it was: its text
// outside the spans (but the English article just before a span, which
// agrees with the surrogate) and its spans' labels. A surrogate note has the outline
// of the source note it was made from, so a source note whose outline
// differs from its surrogate's was changed since (a span added, removed,
// moved or relabelled, its text edited around them) and must be
// resynthesized again: a name annotated after the first run would
// otherwise stay in the surrogate text. A note where the run replaced an
// unannotated occurrence of an annotated value (Result.Propagated) changed
// outside its spans: its outline is not its source's, and a run into its
// corpus rewrites it again, alike.
type Outline [16]byte

// OutlineOf is a document's outline.
func OutlineOf(d pipeline.Document) Outline {
	spans := slices.Clone(d.Spans)
	slices.SortFunc(spans, func(a, b pipeline.Span) int { return cmp.Compare(a.Start, b.Start) })
	labels := make([]string, len(spans))
	for i, s := range spans {
		labels[i] = s.Category + "\x00" + s.Type
	}
	slices.Sort(labels) // realigned spans of one start may come in another order
	h := sha256.New()
	for _, l := range labels {
		h.Write([]byte(l + "\x01"))
	}
	ix := pipeline.NewIndex(d.Text)
	prev := 0
	for _, s := range spans {
		if s.Start > prev {
			gap := withoutArticle(ix.Slice(prev, s.Start), prev == 0)
			h.Write([]byte(strconv.Itoa(len(gap)) + ":" + gap))
		}
		prev = max(prev, s.End)
	}
	h.Write([]byte(ix.Slice(prev, ix.Len())))
	return Outline(h.Sum(nil)[:16])
}
