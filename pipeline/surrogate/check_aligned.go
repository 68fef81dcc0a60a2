package surrogate

import "deidcorpus/pipeline"

// misaligned finds the spans of an output document whose text is not the
// text at their offsets, and the document itself where it has no original
// o with as many spans (its spans cannot be paired).
func misaligned(d pipeline.Document, o *pipeline.Document) []SpanProblem {
	var out []SpanProblem
	ix := pipeline.NewIndex(d.Text)
	for _, s := range d.Spans {
		if s.Start < 0 || s.End > ix.Len() || s.Start > s.End || ix.Slice(s.Start, s.End) != s.Text {
			got := ""
			if s.Start >= 0 && s.End <= ix.Len() && s.Start <= s.End {
				got = ix.Slice(s.Start, s.End)
			}
			out = append(out, SpanProblem{Doc: d.ID, Start: s.Start, End: s.End, Type: s.Type, Text: s.Text, AtOffsets: got})
		}
	}
	if o == nil || len(o.Spans) != len(d.Spans) {
		out = append(out, SpanProblem{Doc: d.ID, AtOffsets: "no original document with as many spans"})
	}
	return out
}
