package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// onekubed shares the protocol (context/protocol), OneGate (agent/gate)
// and kubeadm's paths (agent/kubeadm) with the bootstrap, never the
// bootstrap package itself: its phases and state machine are not the
// daemon's business, and a change there must not ripple into serve.
func TestNoBootstrapPackage(t *testing.T) {
	t.Parallel()
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goCmd, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/onekube/onekube/agent" {
			t.Error("onekubed depends on the bootstrap package github.com/onekube/onekube/agent (go list -deps ./cmd/onekubed)")
		}
	}
}
