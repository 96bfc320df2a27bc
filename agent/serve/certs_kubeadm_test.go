package serve

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
)

// The real kubeadm (the test bed's, when built) issues leaves valid for 10
// minutes; the loop finds them within a 1 h threshold and renews them with
// `kubeadm certs renew all`.
func TestCertsRenewWithRealKubeadm(t *testing.T) {
	// make test names the bed's kubeadm in KUBEADM, as for the oracle tests.
	bin := os.Getenv("KUBEADM")
	if bin == "" {
		t.Skip("KUBEADM names no real kubeadm (make kubeadm-oracle builds one)")
	}
	ver, err := exec.Command(bin, "version", "-o", "short").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	root := system.Root(t.TempDir())
	cfg := root.Path("/kubeadm.yaml")
	// Leaves of 10m are due under a 15m threshold; the renewal then runs
	// with 30m, so the new leaves are not due at once (certs.go refuses
	// leaves that are).
	writeConfig := func(validity string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: "+strings.TrimSpace(string(ver))+"\n"+
			"certificatesDir: "+root.Path(PKIDir)+"\ncertificateValidityPeriod: "+validity+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig("10m")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, "init", "phase", "certs", "all", "--config", cfg).CombinedOutput(); err != nil {
		t.Fatalf("kubeadm init phase certs: %v\n%s", err, out)
	}
	before, err := ReadLeafCerts(root)
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(before[0].NotAfter); left > 11*time.Minute {
		t.Fatalf("kubeadm issued a leaf for %s, want 10m", left)
	}
	time.Sleep(1100 * time.Millisecond) // NotAfter has a resolution of 1 s
	writeConfig("30m")
	og := &certsOneGate{ut: map[string]string{}}
	c := &Certs{Root: root, Client: fake.NewClientset(), OneGate: og, Identity: "m1", Before: 15 * time.Minute,
		Renewer: KubeadmRenewer{Kubeadm: kubeadm.Runner{Exec: system.OSExec{}, Binary: bin}, Args: []string{"--config", cfg}}}
	if _, err := c.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := ReadLeafCerts(root)
	if err != nil {
		t.Fatal(err)
	}
	if !after[0].NotAfter.After(before[0].NotAfter) {
		t.Errorf("earliest leaf %s still expires at %s", after[0].Path, after[0].NotAfter)
	}
	if got := og.get(vmcontext.KeyPubCerts); got != CertsValue(after[0].NotAfter, c.report.Renewed) || c.report.Renewed.IsZero() {
		t.Errorf("published %q", got)
	}
}
