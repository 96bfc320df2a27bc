package kubeadm

import (
	"fmt"
	"strconv"
	"strings"
)

// V1Beta4 is the kubeadm config API version this package renders.
const V1Beta4 = "kubeadm.k8s.io/v1beta4"

// apiV1Beta3 is the API version onekube rendered for Kubernetes 1.22 to 1.30.
// kubeadm v1.37 removed it (cmd/kubeadm/app/util/config/common.go,
// oldKnownAPIVersions), and with it the Go types this package rendered from,
// so targets older than v1.31, which cannot read v1beta4, are refused.
const apiV1Beta3 = "kubeadm.k8s.io/v1beta3"

// minMinor is the first Kubernetes minor whose kubeadm reads v1beta4.
const minMinor = 31

// APIVersionFor picks the kubeadm config API version for a target Kubernetes
// version ("v1.31.2", "1.31", "v1.31.0-rc.1"). It is the only place the choice
// is made. A pre-release counts as its release: 1.31.0-rc.1 kubeadm already
// reads v1beta4.
func APIVersionFor(k8sVersion string) (string, error) {
	v, err := parseVersion(k8sVersion)
	if err != nil {
		return "", err
	}
	if v.minor < minMinor {
		return "", fmt.Errorf("%w: %q is older than v1.%d: onekube renders only %s, which kubeadm reads from v1.%d on (the %s it rendered before was removed in kubeadm v1.37)",
			ErrVersion, k8sVersion, minMinor, V1Beta4, minMinor, apiV1Beta3)
	}
	return V1Beta4, nil
}

// resolveAPIVersion returns override when it is set and the target version can
// read it, else APIVersionFor's choice. The override names the one format a
// site may pin; it is kept so the next API version (kubeadm.k8s.io/v1, still
// experimental in kubeadm 1.37) can be opted into the same way.
func resolveAPIVersion(override, k8sVersion string) (string, error) {
	auto, err := APIVersionFor(k8sVersion)
	if err != nil || override == "" || override == auto {
		return auto, err
	}
	if override == apiV1Beta3 {
		return "", fmt.Errorf("%w: onekube no longer renders %s (kubeadm v1.37 removed it); use %s, which kubeadm reads from v1.%d on", ErrParams, apiV1Beta3, V1Beta4, minMinor)
	}
	return "", fmt.Errorf("%w: unsupported API version %q (want %s)", ErrParams, override, V1Beta4)
}

// version is a parsed Kubernetes release number; only 1.x exists.
type version struct {
	minor, patch int
	hasPatch     bool
	pre          string
}

// maxVersionLen bounds input before any work; real versions are ~20 bytes.
const maxVersionLen = 64

// parseVersion reads [v]1.MINOR[.PATCH][-PRE][+BUILD], the shapes of
// `kubeadm version -o short`, release tags and user input.
func parseVersion(s string) (version, error) {
	bad := func(why string) (version, error) {
		if len(s) > maxVersionLen {
			return version{}, fmt.Errorf("%w: %d-byte input: %s", ErrVersion, len(s), why)
		}
		return version{}, fmt.Errorf("%w: %q: %s", ErrVersion, s, why)
	}
	if s == "" {
		return bad("empty")
	}
	if len(s) > maxVersionLen {
		return bad("too long")
	}
	rest := strings.TrimPrefix(s, "v")
	if i := strings.IndexByte(rest, '+'); i >= 0 {
		if !validIdents(rest[i+1:]) {
			return bad("malformed build metadata")
		}
		rest = rest[:i]
	}
	var v version
	if i := strings.IndexByte(rest, '-'); i >= 0 {
		v.pre = rest[i+1:]
		if !validIdents(v.pre) {
			return bad("malformed pre-release")
		}
		rest = rest[:i]
	}
	parts := strings.Split(rest, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return bad("want MAJOR.MINOR or MAJOR.MINOR.PATCH")
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, ok := number(p)
		if !ok {
			return bad("version parts must be decimal numbers without leading zeros")
		}
		nums[i] = n
	}
	if nums[0] != 1 {
		return bad("only Kubernetes 1.x exists")
	}
	v.minor = nums[1]
	if len(nums) == 3 {
		v.patch, v.hasPatch = nums[2], true
	}
	return v, nil
}

// number parses a semver numeric part: digits, no sign, no leading zero.
func number(s string) (int, bool) {
	if s == "" || len(s) > 6 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// validIdents checks dot-separated [0-9A-Za-z-]+ identifiers (semver §9-10).
func validIdents(s string) bool {
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		for i := 0; i < len(id); i++ {
			c := id[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
				return false
			}
		}
	}
	return true
}
