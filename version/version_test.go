package version

import (
	"runtime/debug"
	"testing"
)

// A binary built from a working tree with uncommitted changes is not
// recorded as the clean revision it started from.
func TestFromBuildInfo(t *testing.T) {
	const rev = "ba05ca42597bfd51165cc1ae7162eb1307b5e037"
	for _, c := range []struct {
		settings []debug.BuildSetting
		main     string
		want     string
	}{
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}, "(devel)", rev},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: rev}}, "(devel)", rev + "+modified"},
		{nil, "v1.2.0", "v1.2.0"}, // go install deidcorpus/cmd/deidcorpus@v1.2.0
		{nil, "(devel)", "devel"}, // built with -buildvcs=false
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, "", "devel"},
	} {
		bi := &debug.BuildInfo{Settings: c.settings}
		bi.Main.Version = c.main
		if got := fromBuildInfo(bi); got != c.want {
			t.Errorf("settings %v, main %q: %q, want %q", c.settings, c.main, got, c.want)
		}
	}
}
