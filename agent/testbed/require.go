package testbed

import (
	"os"
	"os/exec"
	"testing"
)

// Require skips t unless the machine can host a bed (root, namespaces, the
// tools it runs). Under CI=true a missing capability fails the test
// instead: a bed test must never be skipped silently there.
func Require(t testing.TB) {
	t.Helper()
	if reason := unsupported(); reason != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the test bed cannot run here, and CI=true forbids skipping: %s", reason)
		}
		t.Skipf("the test bed cannot run here: %s", reason)
	}
}

func unsupported() string {
	if os.Geteuid() != 0 {
		return "not root (network, mount and PID namespaces need CAP_SYS_ADMIN)"
	}
	for _, tool := range []string{"ip", "nsenter", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not found (iproute2, util-linux)"
		}
	}
	out, err := exec.Command("unshare", "--net", "--mount", "--pid", "--uts", "--fork", "true").CombinedOutput()
	if err != nil {
		return "creating namespaces failed: " + err.Error() + ": " + string(out)
	}
	return ""
}
