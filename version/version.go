// Package version tells which code made something, for provenance records.
package version

import "runtime/debug"

// Version is set at build time with -ldflags "-X deidcorpus/version.Version=v1.2.3";
// otherwise String falls back to the module's build information.
var Version = ""

// String returns the version, the VCS revision the binary was built from
// (with "+modified" when the working tree had uncommitted changes: two such
// builds of one revision say the same), the module's version, or "devel".
func String() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return fromBuildInfo(bi)
}

// fromBuildInfo is String's answer from a binary's build information.
func fromBuildInfo(bi *debug.BuildInfo) string {
	revision, modified := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	switch {
	case revision != "" && modified:
		return revision + "+modified"
	case revision != "":
		return revision
	case bi.Main.Version != "" && bi.Main.Version != "(devel)":
		return bi.Main.Version
	}
	return "devel"
}
