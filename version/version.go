// Package version tells which code made something, for provenance records.
package version

import "runtime/debug"

// Version is set at build time with -ldflags "-X deidcorpus/version.Version=v1.2.3";
// otherwise String falls back to the module's build information.
var Version = ""

// String returns the version, the VCS revision the binary was built from, or
// "devel".
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return "devel"
}
