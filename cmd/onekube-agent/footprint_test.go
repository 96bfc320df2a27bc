package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The bootstrap agent links no Kubernetes client (issue 14: about 14 MB
// stripped and 12 MB RSS, against 56 MB and 30 MB with client-go). What
// needs one belongs in onekubed. This fails when any import, direct or
// not, brings a forbidden package back.
func TestNoKubernetesClient(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command (neither in GOROOT/bin nor on PATH) to list the dependencies with")
		}
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{"k8s.io/client-go", "k8s.io/kubectl", "go.etcd.io/etcd"}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if pkg == f || strings.HasPrefix(pkg, f+"/") {
				t.Errorf("onekube-agent depends on %s: move what needs it to onekubed (go mod why -m %s)", pkg, f)
			}
		}
	}
}
