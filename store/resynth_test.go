package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/apperr"
	"deidcorpus/ent/surrogatemapping"
	"deidcorpus/pipeline/surrogate"
	"deidcorpus/store"
	"deidcorpus/store/storetest"
)

// TestCheckFindingsCountEveryKind: the source identifiers a check found in
// the text count as findings, as the job makes a summary and as JSON
// decodes it; a summary that says the check failed counts one at least,
// whatever kinds it counts, so its corpus is quarantined.
func TestCheckFindingsCountEveryKind(t *testing.T) {
	for _, c := range []struct {
		summary map[string]any
		want    int
	}{
		{map[string]any{"ok": false, "leaks": 1, "identifiers": 2, "unannotated": 7}, 10},
		{map[string]any{"ok": false, "leaks": 0.0, "identifiers": 4.0}, 4},
		{map[string]any{"ok": false, "leaks": 0, "misaligned": 0}, 1},
		{map[string]any{"ok": true, "leaks": 0, "unannotated": 7}, 7},
		{map[string]any{"leaks": 2}, 2},
	} {
		assert.Equal(t, c.want, store.CheckFindings(c.summary), "%v", c.summary)
	}
}

// TestBeginResynthesisDropsRedrawnMappings: the stored corpus-scope mappings
// a run draws anew are deleted when it begins, and no other: not the same
// value's mapping of another type, nor a patient's of the same value.
func TestBeginResynthesisDropsRedrawnMappings(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b)
			src, _, _ := resynthesized(t, st, 2, 5)
			m := func(scope, typ, original string) surrogate.Mapping {
				return surrogate.Mapping{Scope: scope, Category: "NAME", Type: typ, Original: original, Surrogate: "S" + original,
					Strategy: "name", New: true}
			}
			kept := []surrogate.Mapping{m(surrogate.ScopeCorpus, "HOSPITAL", "Mercy"), m(surrogate.PatientScope("p1"), "DOCTOR", "Mercy"),
				m(surrogate.ScopeCorpus, "DOCTOR", "Hale")}
			dropped := []surrogate.Mapping{m(surrogate.ScopeCorpus, "DOCTOR", "Mercy"), m(surrogate.ScopeCorpus, "DOCTOR", "Lowe")}
			require.NoError(t, st.SaveMappings(ctx, src.ID, 1, append(slices.Clone(kept), dropped...)))

			_, _, err := st.BeginResynthesis(ctx, store.ResynthesisStart{SourceID: src.ID, Target: "notes-r", TagSet: src.Tagset,
				From: "notes", JobID: 2, Dropped: dropped})
			require.NoError(t, err)
			state, err := st.SurrogateStateBefore(ctx, src.ID, 3)
			require.NoError(t, err)
			var got, want []string
			for _, m := range state.Mappings {
				got = append(got, m.Scope+" "+m.Type+" "+m.Original)
			}
			for _, m := range kept {
				want = append(want, m.Scope+" "+m.Type+" "+m.Original)
			}
			assert.ElementsMatch(t, want, got)
		})
	}
}

// A source corpus deleted while a resynthesis of it runs keeps nothing: the
// job's next save of mappings fails instead of leaving sealed originals of a
// corpus that is gone.
func TestMappingsOfADeletedSourceAreRefused(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b)
			src, _, _ := resynthesized(t, st, 2, 5)
			require.NoError(t, st.DeleteCorpus(ctx, src.Name))
			err := st.SaveMappings(ctx, src.ID, 9, []surrogate.Mapping{{Scope: surrogate.ScopeCorpus, Category: "NAME", Type: "DOCTOR",
				Original: "Hale", Surrogate: "Lowe", Strategy: "name", New: true}})
			require.Error(t, err)
			assert.Equal(t, apperr.NotFound, apperr.CodeOf(err), err.Error())
			assert.Contains(t, err.Error(), "was deleted while job 9 ran")
			n, err := st.Client.SurrogateMapping.Query().Where(surrogatemapping.CorpusID(src.ID)).Count(ctx)
			require.NoError(t, err)
			assert.Zero(t, n)
		})
	}
}

// TestResynthesisBatchesOfASlowClock: a writer whose clock is an hour behind
// the machine that began the job (the marker's time) still writes documents
// that count as the job's, so that a retried batch skips them instead of
// writing them and their mappings again.
func TestResynthesisBatchesOfASlowClock(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, b)
			src, docs, res := resynthesized(t, st, 3, 4)
			target, marker, err := st.BeginResynthesis(ctx, store.ResynthesisStart{SourceID: src.ID, Target: "notes-r", TagSet: src.Tagset,
				From: "notes", JobID: 1})
			require.NoError(t, err)
			ahead := *marker
			ahead.Since = marker.Since.Add(time.Hour)
			batch := store.ResynthesisBatch{SourceID: src.ID, TargetID: target.ID, JobID: 1, Marker: &ahead, Result: res}
			n, err := st.SaveResynthesisBatch(ctx, batch)
			require.NoError(t, err)
			require.Equal(t, len(docs), n)
			n, err = st.SaveResynthesisBatch(ctx, batch)
			require.NoError(t, err)
			assert.Zero(t, n, "a retried batch rewrote documents the job had written")
			ids, err := st.DocumentIDsBefore(ctx, target.ID, ahead.Since)
			require.NoError(t, err)
			assert.Empty(t, ids, "the job's documents were taken for ones the target held before it began")
		})
	}
}
