package release

import (
	"errors"
	"fmt"
	"strings"
)

// A release is referred to as name@version everywhere: on the command line,
// in the API, in URLs, manifests and datasheets. Ref writes that form and
// ParseRef reads it; nothing else builds or splits one.

// ErrRef is wrapped by ParseRef's errors.
var ErrRef = errors.New("not a release reference")

// Ref is the reference of a release: "name@version".
func Ref(name, version string) string { return name + "@" + version }

// ParseRef splits "name@version". The name may hold no '@'; the version is
// not checked here (an unknown one is simply not found).
func ParseRef(ref string) (name, version string, err error) {
	name, version, ok := strings.Cut(ref, "@")
	if !ok || name == "" || version == "" || strings.Contains(version, "@") {
		return "", "", fmt.Errorf("%w: %q is not name@version (e.g. notes@1.0.0)", ErrRef, ref)
	}
	return name, version, nil
}
