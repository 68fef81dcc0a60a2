package store

import "testing"

// firstIDs names the smallest ids added, in order, whatever order they
// came in, and counts the rest.
func TestFirstIDs(t *testing.T) {
	var f firstIDs
	f.add("09", "03", "11", "01")
	f.add("07", "05", "02", "10")
	if got, want := f.describe("document(s)"), "document(s) 01, 02, 03, 05, 07 and 3 more"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	var one firstIDs
	one.add("x")
	if got := one.describe("document"); got != "document x" {
		t.Errorf("%q", got)
	}
}
