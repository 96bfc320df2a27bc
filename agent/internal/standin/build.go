// Package standin builds the kubeadm and kubectl stand-ins (see the kubeadm
// and kubectl subfolders) for tests that run the agent end to end.
package standin

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

const module = "github.com/onekube/onekube/agent/internal/standin/"

var (
	once     sync.Once
	binDir   string
	buildErr string
)

// Build compiles both stand-ins, once per test process, into a temp dir and
// returns it; put it first on PATH (t.Setenv("PATH", dir+":"+os.Getenv("PATH")))
// so the agent finds them as "kubeadm" and "kubectl". It uses the go command
// on PATH and fails the test when the build does. The directory lives until
// Cleanup (call it from TestMain) or the OS clears its temp dir.
func Build(t testing.TB) string {
	t.Helper()
	once.Do(build)
	if buildErr != "" {
		t.Fatalf("building the kubeadm/kubectl stand-ins: %s", buildErr)
	}
	return binDir
}

func build() {
	gobin, err := exec.LookPath("go")
	if err != nil {
		buildErr = "no go command on PATH: " + err.Error()
		return
	}
	dir, err := os.MkdirTemp("", "onekube-standin-")
	if err != nil {
		buildErr = err.Error()
		return
	}
	cmd := exec.Command(gobin, "build", "-o", dir+string(filepath.Separator), module+"kubeadm", module+"kubectl")
	// No cgo: the stand-ins need none, and the build then needs no C
	// toolchain.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		buildErr = err.Error() + "\n" + string(out)
		return
	}
	binDir = dir
}

// Cleanup removes the built binaries; for TestMain, after m.Run.
func Cleanup() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}
