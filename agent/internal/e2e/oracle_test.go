package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/onekube/onekube/agent"
	"github.com/onekube/onekube/agent/internal/simcluster"
	"github.com/onekube/onekube/agent/internal/standin/env"
)

// TestRealKubeadmAcceptsAgentConfigs hands the exact files the agents wrote
// in a whole simulated boot (init on the master, join on each worker) to the
// real kubeadm's `config validate`: what the unit tests check for the
// renderer, this checks for what reaches kubeadm in a VM. It needs the
// oracle (`make kubeadm-oracle`, then KUBEADM=path; `make test` sets it) and
// skips without it.
func TestRealKubeadmAcceptsAgentConfigs(t *testing.T) {
	bin := os.Getenv("KUBEADM")
	if bin == "" {
		if p, err := exec.LookPath("kubeadm"); err == nil {
			bin = p
		}
	}
	if bin == "" {
		t.Skip("no real kubeadm: set KUBEADM (make kubeadm-oracle) or put kubeadm on PATH")
	}
	c := startCluster(t, simcluster.Options{Workers: 2, Deployment: "straight"})
	runs := wait(t, c, 3)
	checked := 0
	for _, r := range runs {
		if r.Code != 0 {
			dump(t, runs)
			t.Fatalf("VM %d exited %d", r.VM.ID, r.Code)
		}
		// The worker removes its join config after success (it holds the
		// token); the stand-in kept the one kubeadm join read.
		for _, f := range []string{agent.InitConfigFile, env.KeptConfig("join")} {
			p := filepath.Join(c.RootOf(r.VM.ID), f)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			out, err := exec.Command(bin, "config", "validate", "--config", p).CombinedOutput()
			if err != nil {
				// kubeadm's message may quote the config; it holds only
				// this test's throwaway token.
				t.Errorf("VM %d %s: kubeadm config validate: %v\n%s", r.VM.ID, filepath.Base(p), err, out)
				continue
			}
			checked++
		}
	}
	if checked != 3 {
		t.Errorf("validated %d agent-written configs, want 3 (1 init + 2 join)", checked)
	}
}
