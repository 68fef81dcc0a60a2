// Package shared locates ../shared/data, the real corpora and word lists that
// tests and benchmarks read. Tests that need it skip with a message when it is
// absent; CI sets DEIDCORPUS_REQUIRE_DATA=1 so that a missing directory fails
// instead of silently skipping.
package shared

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared data directory: $DEIDCORPUS_DATA, or the first
// "shared/data" found beside the module root or one of its parents.
func Dir() (string, bool) {
	if d := os.Getenv("DEIDCORPUS_DATA"); d != "" {
		_, err := os.Stat(d)
		return d, err == nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "shared", "data")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, true
		}
		if filepath.Dir(dir) == dir {
			return "", false
		}
	}
}

// Path returns the path of rel inside the shared data directory, skipping tb
// when it is absent (or failing it when DEIDCORPUS_REQUIRE_DATA is set).
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	dir, ok := Dir()
	if ok {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("DEIDCORPUS_REQUIRE_DATA") != "" {
		tb.Fatalf("shared data %s not found (set DEIDCORPUS_DATA)", rel)
	}
	tb.Skipf("shared data %s not found: set DEIDCORPUS_DATA to ../shared/data to run this test", rel)
	return ""
}

// LongEnv is the one switch of the long tests and benchmarks (minutes to an
// hour: training on all of MEDDOCAN train, cross-validation, the research
// value of resynthesis): DEIDCORPUS_LONG=1 runs them. Their other
// DEIDCORPUS_ variables are parameters (a model path, a fold count), never
// switches.
const LongEnv = "DEIDCORPUS_LONG"

// Long skips tb unless DEIDCORPUS_LONG is set, saying what it would do.
func Long(tb testing.TB, what string) {
	tb.Helper()
	if os.Getenv(LongEnv) == "" {
		tb.Skipf("set %s=1 to %s", LongEnv, what)
	}
}

// NotUnderRace skips tb under the race detector, for a test whose work is
// single-threaded and long (training on real notes): .ci/run runs it in a
// step without the detector, named by step.
func NotUnderRace(tb testing.TB, step string) {
	tb.Helper()
	if RaceEnabled {
		tb.Skipf("single-threaded and ten times slower under -race: .ci/run runs it without the detector (%s)", step)
	}
}
