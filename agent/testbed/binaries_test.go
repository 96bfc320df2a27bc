package testbed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeK8sDir lays out K8sBinaries whose kubeadm reports version.
func fakeK8sDir(t *testing.T, dir, version string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range K8sBinaries {
		script := "#!/bin/sh\nexit 0\n"
		if b == "kubeadm" {
			script = "#!/bin/sh\ncase $1 in\nversion) echo " + version + " ;;\n" +
				"config) echo registry.k8s.io/kube-apiserver:" + version + "; echo registry.k8s.io/coredns/coredns:v1.14.6; echo registry.k8s.io/etcd:3.7.0-0 ;;\nesac\n"
		}
		if err := os.WriteFile(filepath.Join(dir, b), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// A bed at the release an upgrade starts from must get that release's
// binaries even when ONEKUBE_TESTBED_BIN names the default's, as `make
// e2e-real` sets it.
func TestLocateK8s(t *testing.T) {
	root := t.TempDir()
	fakeK8sDir(t, filepath.Join(root, "testbed-v1.37.2"), "v1.37.2")
	fakeK8sDir(t, filepath.Join(root, "testbed-v1.36.3"), "v1.36.3")
	fakeK8sDir(t, filepath.Join(root, "mislabelled", "testbed-v1.35.0"), "v1.36.3")
	elsewhere := filepath.Join(root, "elsewhere")
	fakeK8sDir(t, elsewhere, "v1.37.2")
	tests := []struct {
		name, env, cache, version, want, err string
	}{
		{name: "env of the version", env: elsewhere, cache: root, version: "v1.37.2", want: elsewhere},
		{name: "env of another version", env: elsewhere, cache: root, version: "v1.36.3", want: filepath.Join(root, "testbed-v1.36.3")},
		{name: "no env", cache: root, version: "v1.36.3", want: filepath.Join(root, "testbed-v1.36.3")},
		{name: "not built", env: elsewhere, cache: root, version: "v1.38.0", err: "make testbed KUBEADM_TAG=v1.38.0"},
		{name: "cache holds another release", cache: filepath.Join(root, "mislabelled"), version: "v1.35.0", err: "holds kubeadm v1.36.3, not v1.35.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ONEKUBE_TESTBED_BIN", tc.env)
			t.Setenv("ONEKUBE_CACHE", tc.cache)
			got, err := LocateK8s(tc.version)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("LocateK8s(%s) = %q, %v; want an error with %q", tc.version, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("LocateK8s(%s) = %q, %v; want %q", tc.version, got, err, tc.want)
			}
		})
	}
}
