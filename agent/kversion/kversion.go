// Package kversion parses released Kubernetes versions (vMAJOR.MINOR.PATCH)
// and compares them, for the upgrade rules and the bundle manifest.
package kversion

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a released Kubernetes version, vMAJOR.MINOR.PATCH. Pre-releases
// are refused: a bundle carries a release, and kubeadm's own skew checks
// (cmd/kubeadm/app/phases/upgrade/policy.go) compare released versions.
type Version struct{ Major, Minor, Patch int }

// maxVersionPart bounds each number so that arithmetic on minors never
// overflows and a typo like v1.3700.0 is caught.
const maxVersionPart = 9999

// ParseVersion reads "v1.37.2" (the leading v is required, as kubeadm
// prints and accepts it; no leading zeros, no suffix).
func ParseVersion(s string) (Version, error) {
	rest, ok := strings.CutPrefix(s, "v")
	if !ok {
		return Version{}, fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH, e.g. v1.37.2", s)
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH, e.g. v1.37.2", s)
	}
	var n [3]int
	for i, p := range parts {
		if p == "" || len(p) > 4 || (len(p) > 1 && p[0] == '0') {
			return Version{}, fmt.Errorf("version %q: bad number %q", s, p)
		}
		for _, r := range p {
			if r < '0' || r > '9' {
				return Version{}, fmt.Errorf("version %q: bad number %q", s, p)
			}
		}
		v, err := strconv.Atoi(p)
		if err != nil || v > maxVersionPart {
			return Version{}, fmt.Errorf("version %q: bad number %q", s, p)
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}

// ParseKubeletVersion reads a version as a Node reports it
// (status.nodeInfo.kubeletVersion, e.g. "v1.36.3"); a build suffix
// ("+k3s1", "-rc.0") is cut, since only the release numbers matter for skew.
func ParseKubeletVersion(s string) (Version, error) {
	if i := strings.IndexAny(s, "+-"); i > 0 {
		s = s[:i]
	}
	return ParseVersion(s)
}

func (v Version) String() string { return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Compare returns -1, 0 or 1 as v is older than, equal to or newer than w.
func (v Version) Compare(w Version) int {
	for _, d := range [3]int{v.Major - w.Major, v.Minor - w.Minor, v.Patch - w.Patch} {
		switch {
		case d < 0:
			return -1
		case d > 0:
			return 1
		}
	}
	return 0
}

// IsZero reports an unset version.
func (v Version) IsZero() bool { return v == Version{} }
