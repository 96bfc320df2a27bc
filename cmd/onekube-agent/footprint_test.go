package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The bootstrap agent's footprint goal (issue 14): at most 19 MB stripped
// and 16 MB start-up RSS. Linking client-go alone made it 56 MB and 30 MB;
// what needs a Kubernetes client belongs in onekubed.

// maxStripped is the goal for `make build`'s binary (-s -w -trimpath), in
// bytes (the README quotes MB = 10^6 bytes, as ls -l counts them).
const maxStripped = 19_000_000

// goCommand is the go command that built this test, else the one on PATH.
func goCommand(t *testing.T) string {
	t.Helper()
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command (neither in GOROOT/bin nor on PATH) to inspect the build with")
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// No package onekube-agent imports, directly or not, is a Kubernetes or
// etcd client.
func TestNoKubernetesClient(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(goCommand(t), "list", "-deps", ".").CombinedOutput()
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

// The stripped binary fits the goal. Besides a new dependency, what grows
// it is anything that makes the linker keep every exported method, such as
// executing a text/template (cobra's Set*Template does).
func TestStrippedSize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; -short skips it")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "onekube-agent")
	cmd := exec.Command(goCommand(t), "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("onekube-agent, stripped: %.1f MB", float64(st.Size())/1e6)
	if st.Size() > maxStripped {
		t.Errorf("onekube-agent is %.1f MB stripped, over the 19 MB goal", float64(st.Size())/1e6)
	}
}
