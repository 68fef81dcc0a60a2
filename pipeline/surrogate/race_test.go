//go:build race

package surrogate

// raceEnabled cuts the keys the real-corpus tests try under the race
// detector, which runs them ten times slower; CI runs them in full without it.
const raceEnabled = true
