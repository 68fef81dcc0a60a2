package surrogate

import (
	"cmp"
	"maps"
	"slices"
)

// surrogatesByValue returns the folded surrogates of each replaced value of
// a patient, keyed by scope (the corpus, or the patient's scope for a rule
// of that scope or a strategy that is per patient), type and folded
// original: one surrogate per key is consistent.
func surrogatesByValue(pairs []spanPair, patientScope string) map[[3]string]map[string]bool {
	seen := map[[3]string]map[string]bool{}
	for _, pr := range pairs {
		if pr.class != replacedSpan || pr.rule.Scope == ScopeMention && !patientOnly[pr.rule.Strategy] {
			continue // each mention of its own
		}
		sc := ScopeCorpus
		if pr.rule.Scope == ScopePatient || patientOnly[pr.rule.Strategy] {
			sc = patientScope
		}
		k := [3]string{sc, pr.o.Type, fold(pr.o.Text)}
		if seen[k] == nil {
			seen[k] = map[string]bool{}
		}
		seen[k][fold(pr.s.Text)] = true
	}
	return seen
}

// surrogateSets are the folded surrogates of each (scope, type, folded
// original) of a corpus scope: one per corpus value of a run, kept by the
// key's hash (keyHash), so a value with one surrogate, as every value of a
// consistent run has, costs its surrogate and a number. Two keys with one
// hash and different surrogates would be reported as one inconsistent
// value, never hide one (about one run in six million at 2.5 million
// values).
type surrogateSets struct {
	first map[uint64]string
	more  map[[3]string]map[string]bool // the values with a second surrogate
	keys  map[uint64][3]string          // each hash's key, kept only for State
}

func newSurrogateSets() surrogateSets {
	return surrogateSets{first: map[uint64]string{}, more: map[[3]string]map[string]bool{}}
}

func (s surrogateSets) add(k [3]string, sur string) {
	var arr [128]byte
	h := keyHash(append(append(append(append(append(arr[:0], k[0]...), 0), k[1]...), 0), k[2]...))
	first, ok := s.first[h]
	switch {
	case !ok:
		s.first[h] = sur
		if s.keys != nil {
			s.keys[h] = k
		}
	case first != sur:
		if s.more[k] == nil {
			s.more[k] = map[string]bool{first: true}
		}
		s.more[k][sur] = true
	}
}

// inconsistencies lists the values with more than one surrogate, sorted.
func (s surrogateSets) inconsistencies() []Inconsistency {
	var out []Inconsistency
	for _, k := range inconsistentKeys(s.more) {
		out = append(out, inconsistency(k, s.more[k]))
	}
	return out
}

// inconsistency lists the surrogates of one original, sorted.
func inconsistency(k [3]string, surrogates map[string]bool) Inconsistency {
	return Inconsistency{k[0], k[1], k[2], slices.Sorted(maps.Keys(surrogates))}
}

// inconsistentKeys returns, sorted, the keys with more than one surrogate.
func inconsistentKeys(m map[[3]string]map[string]bool) [][3]string {
	var keys [][3]string
	for k, v := range m {
		if len(v) > 1 {
			keys = append(keys, k)
		}
	}
	return sortKeys3(keys)
}

func sortKeys3(keys [][3]string) [][3]string {
	slices.SortFunc(keys, func(a, b [3]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]), cmp.Compare(a[2], b[2]))
	})
	return keys
}

// addMappings checks that the run mapped each original to one surrogate in
// its scope: a patient scope's mappings come in one part, the corpus's are
// kept until the report.
func (c *Checker) addMappings(ms []Mapping) {
	byMap := map[[3]string]map[string]bool{}
	for _, m := range ms {
		k := [3]string{m.Scope, m.Type, fold(m.Original)}
		if m.Scope == ScopeCorpus {
			c.corpusMaps.add(k, fold(m.Surrogate))
			continue
		}
		if byMap[k] == nil {
			byMap[k] = map[string]bool{}
		}
		byMap[k][fold(m.Surrogate)] = true
	}
	for _, k := range inconsistentKeys(byMap) {
		c.mapProblems = append(c.mapProblems, inconsistency(k, byMap[k]))
	}
}
