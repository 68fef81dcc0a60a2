package store

import (
	"context"
	"maps"

	"deidcorpus/auth"
	"deidcorpus/pipeline/release"
)

// CorpusProvenance is a corpus's provenance as ctx's viewer may read it:
// whole for those who see sources, the public view (release.PublicProvenance)
// for researchers.
func CorpusProvenance(ctx context.Context, prov map[string]any) map[string]any {
	if auth.SeesSources(ctx) {
		return prov
	}
	return release.PublicProvenance(prov)
}

// ReleaseProvenance is a release's provenance as ctx's viewer may read it:
// its corpus's provenance in it as CorpusProvenance gives it (releases made
// before 6 December 2026 kept the source's name and the seed), and a
// curator's acceptance of unannotated finds without its reason, which may
// quote the values it accepts.
func ReleaseProvenance(ctx context.Context, prov map[string]any) map[string]any {
	if auth.SeesSources(ctx) {
		return prov
	}
	out := maps.Clone(prov)
	if cp, ok := prov["corpusProvenance"].(map[string]any); ok {
		out["corpusProvenance"] = release.PublicProvenance(cp)
	}
	if acc, ok := prov["unannotatedAccepted"].(map[string]any); ok {
		acc = maps.Clone(acc)
		delete(acc, "reason")
		out["unannotatedAccepted"] = acc
	}
	return out
}
