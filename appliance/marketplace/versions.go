package marketplace

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// Versions are the pins of appliance/versions.env that the metadata names.
type Versions struct {
	Kubernetes string // ONEKUBE_K8S_VERSION, MAJOR.MINOR.PATCH
	Containerd string // ONEKUBE_CONTAINERD_VERSION
	Flannel    string // ONEKUBE_FLANNEL_VERSION
	Calico     string // ONEKUBE_CALICO_VERSION
	Debian     string // ONEKUBE_DEBIAN_RELEASE, e.g. 12
	Revision   string // ONEKUBE_APPLIANCE_REVISION, bumped per rebuild of the same pins
}

var (
	envLine = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=([^\s'"$` + "`" + `\\]*)$`)
	semver  = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	number  = regexp.MustCompile(`^[0-9]+$`)
)

// ParseVersions reads versions.env: KEY=value lines with plain values (no
// quoting, so the shell, Packer and this parser read the same thing),
// comments and blank lines. Unknown keys are allowed; the ones Versions
// holds are required and checked.
func ParseVersions(data []byte) (Versions, error) {
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := envLine.FindStringSubmatch(line)
		if m == nil {
			return Versions{}, fmt.Errorf("%w: line %d: want KEY=value with a plain value", ErrVersions, n)
		}
		if _, dup := vars[m[1]]; dup {
			return Versions{}, fmt.Errorf("%w: line %d: %s set twice", ErrVersions, n, m[1])
		}
		vars[m[1]] = m[2]
	}
	if err := sc.Err(); err != nil {
		return Versions{}, fmt.Errorf("%w: %v", ErrVersions, err)
	}
	var v Versions
	for _, f := range []struct {
		key  string
		dst  *string
		form *regexp.Regexp
	}{
		{"ONEKUBE_K8S_VERSION", &v.Kubernetes, semver},
		{"ONEKUBE_CONTAINERD_VERSION", &v.Containerd, semver},
		{"ONEKUBE_FLANNEL_VERSION", &v.Flannel, semver},
		{"ONEKUBE_CALICO_VERSION", &v.Calico, semver},
		{"ONEKUBE_DEBIAN_RELEASE", &v.Debian, number},
		{"ONEKUBE_APPLIANCE_REVISION", &v.Revision, number},
	} {
		val, ok := vars[f.key]
		if !ok {
			return Versions{}, fmt.Errorf("%w: %s missing", ErrVersions, f.key)
		}
		if !f.form.MatchString(val) {
			return Versions{}, fmt.Errorf("%w: %s=%q: want %s", ErrVersions, f.key, val, f.form)
		}
		*f.dst = val
	}
	return v, nil
}

// Minor is the Kubernetes MAJOR.MINOR, e.g. 1.36.
func (v Versions) Minor() string {
	return v.Kubernetes[:strings.LastIndexByte(v.Kubernetes, '.')]
}
