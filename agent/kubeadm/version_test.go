package kubeadm

import (
	"errors"
	"strings"
	"testing"
)

func TestAPIVersionFor(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"v1.36.3":          V1Beta4,
		"1.36.3":           V1Beta4,
		"v1.31":            V1Beta4,
		"1.31":             V1Beta4,
		"v1.31.0-rc.1":     V1Beta4,
		"v1.31.0-alpha.0":  V1Beta4,
		"v1.37.1":          V1Beta4,
		"v1.40.0+vendor.1": V1Beta4,
	}
	for in, want := range cases {
		got, err := APIVersionFor(in)
		if err != nil || got != want {
			t.Errorf("APIVersionFor(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestAPIVersionForRejects(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"":                       "empty",
		"v1.30.14":               "older than v1.31",
		"v1.30.0-rc.1":           "older than v1.31",
		"1.22":                   "older than v1.31",
		"v1.21.14":               "older than v1.31",
		"v1.0.0":                 "older than v1.31",
		"v2.0.0":                 "only Kubernetes 1.x",
		"v0.36.3":                "only Kubernetes 1.x",
		"1":                      "MAJOR.MINOR",
		"v1.36.3.4":              "MAJOR.MINOR",
		"vv1.36.3":               "decimal",
		"V1.36.3":                "decimal",
		"v1.036.3":               "leading zeros",
		"v1.36.x":                "decimal",
		"v1..3":                  "decimal",
		"v1.36.3-":               "pre-release",
		"v1.36.3-rc..1":          "pre-release",
		"v1.36.3+":               "build metadata",
		"latest":                 "MAJOR.MINOR",
		"stable-1.36":            "MAJOR.MINOR",
		" v1.36.3":               "decimal",
		"v1.36.3 ":               "decimal",
		"v1.-36.3":               "decimal",
		"v1.9999999.0":           "decimal",
		strings.Repeat("1", 100): "100-byte input",
	}
	for in, want := range cases {
		_, err := APIVersionFor(in)
		if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), want) {
			t.Errorf("APIVersionFor(%q) err = %v, want ErrVersion with %q", in, err, want)
		}
	}
}

func TestResolveAPIVersion(t *testing.T) {
	t.Parallel()
	cases := []struct {
		override, k8s, want, err string
	}{
		{"", "v1.36.3", V1Beta4, ""},
		{V1Beta4, "v1.36.3", V1Beta4, ""},
		// kubeadm 1.36 still reads v1beta3, but onekube no longer renders it.
		{"kubeadm.k8s.io/v1beta3", "v1.36.3", "", "no longer renders kubeadm.k8s.io/v1beta3"},
		{"kubeadm.k8s.io/v1beta3", "v1.37.0", "", "no longer renders kubeadm.k8s.io/v1beta3"},
		{V1Beta4, "v1.30.2", "", "older than v1.31"},
		{"kubeadm.k8s.io/v1beta2", "v1.36.3", "", "unsupported API version"},
		{"kubeadm.k8s.io/v1", "v1.37.0", "", "unsupported API version"},
		{V1Beta4, "v1.20.0", "", "older than v1.31"},
	}
	for _, tc := range cases {
		got, err := resolveAPIVersion(tc.override, tc.k8s)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("resolve(%q, %q) err = %v, want %q", tc.override, tc.k8s, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("resolve(%q, %q) = %q, %v; want %q", tc.override, tc.k8s, got, err, tc.want)
		}
	}
}

func FuzzAPIVersionFor(f *testing.F) {
	for _, s := range []string{"v1.36.3", "1.31", "v1.30.0-rc.1", "v1.22.0+build.5", "v2.0", "", "v1.036"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := APIVersionFor(s)
		if err != nil {
			if !errors.Is(err, ErrVersion) {
				t.Fatalf("error without ErrVersion: %v", err)
			}
			if len(s) > maxVersionLen && strings.Contains(err.Error(), s) {
				t.Fatalf("long input echoed in the error")
			}
			return
		}
		if got != V1Beta4 {
			t.Fatalf("APIVersionFor(%q) = %q", s, got)
		}
		// The "v" is cosmetic.
		alt := "v" + s
		if strings.HasPrefix(s, "v") {
			alt = s[1:]
		}
		if len(alt) <= maxVersionLen {
			if g, err := APIVersionFor(alt); err != nil || g != got {
				t.Fatalf("APIVersionFor(%q) = %q, %v; but %q gives %q", alt, g, err, s, got)
			}
		}
	})
}
