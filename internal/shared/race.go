//go:build race

package shared

// RaceEnabled says the tests run under the race detector, which makes
// single-threaded work about ten times slower.
const RaceEnabled = true
