package surrogate

import "deidcorpus/pipeline/stats"

// namePatterns returns the name pattern (Yeniterzi et al. Table 7) of each
// replaced name span's original and of its surrogate.
func namePatterns(pairs []spanPair) (orig, sur []string) {
	for _, pr := range pairs {
		if pr.class == replacedSpan && pr.rule.Strategy == Name {
			orig = append(orig, stats.NamePattern(pr.o.Text))
			sur = append(sur, stats.NamePattern(pr.s.Text))
		}
	}
	return orig, sur
}

func patternRows(orig, sur map[string]int) []PatternRow {
	pairs := stats.ComparePatterns(stats.PatternCounts(orig), stats.PatternCounts(sur))
	out := make([]PatternRow, len(pairs))
	for i, p := range pairs {
		out[i] = PatternRow{Pattern: p.Pattern, Tokens: p.Tokens, Original: p.A, Surrogate: p.B}
	}
	return out
}
