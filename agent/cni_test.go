package agent

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/system/systemtest"
)

func cniData(t *testing.T, cni, pods string, exec *systemtest.FakeExec) *bootData {
	t.Helper()
	d := &bootData{
		root:  system.Root(t.TempDir()),
		exec:  exec,
		clock: systemtest.NewClock(testEpoch),
		tun:   Tunables{CNIDir: "/usr/share/onekube/cni"}.withDefaults(),
		log:   discardLogger(),
	}
	d.cfg.CNI = cni
	d.cfg.PodsNetwork = netip.MustParsePrefix(pods)
	return d
}

func TestInstallCNI(t *testing.T) {
	t.Parallel()
	exec := (&systemtest.FakeExec{}).On("kubectl", systemtest.Reply{})
	d := cniData(t, "flannel", "10.50.0.0/16", exec)
	manifest := "net-conf.json: |\n  {\"Network\": \"10.244.0.0/16\"}\n"
	if err := d.root.WriteFile("/usr/share/onekube/cni/flannel.yaml", []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := installCNI(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if len(exec.Calls) != 1 {
		t.Fatalf("calls %v", exec.Calls)
	}
	got := strings.Join(exec.Calls[0].Args, " ")
	want := "--kubeconfig " + d.root.Path(AdminConfFile) + " apply -f " + d.root.Path("/var/lib/onekube/cni-flannel.yaml")
	if got != want {
		t.Errorf("kubectl %s\nwant    %s", got, want)
	}
	applied, err := d.root.ReadFile("/var/lib/onekube/cni-flannel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(applied), "10.50.0.0/16") || strings.Contains(string(applied), "10.244.0.0/16") {
		t.Errorf("pod CIDR not substituted:\n%s", applied)
	}
	assertFileMode(t, d.root, "/var/lib/onekube/cni-flannel.yaml", 0o644)
}

func TestInstallCNIRetriesApply(t *testing.T) {
	t.Parallel()
	exec := (&systemtest.FakeExec{}).On("kubectl", systemtest.Reply{Code: 1, Stderr: "connection refused"}, systemtest.Reply{})
	d := cniData(t, "calico", "10.244.0.0/16", exec)
	if err := d.root.WriteFile("/usr/share/onekube/cni/calico.yaml", []byte("kind: List\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := installCNI(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if exec.Count("kubectl") != 2 {
		t.Errorf("kubectl ran %d times, want 2", exec.Count("kubectl"))
	}
}

func TestInstallCNIErrors(t *testing.T) {
	t.Parallel()
	d := cniData(t, "cilium", "10.244.0.0/16", &systemtest.FakeExec{})
	if err := installCNI(t.Context(), d); !errors.Is(err, ErrNoCNIManifest) || !strings.Contains(err.Error(), "/usr/share/onekube/cni/cilium.yaml") {
		t.Errorf("missing manifest: %v", err)
	}
	d = cniData(t, "../../etc/passwd", "10.244.0.0/16", &systemtest.FakeExec{})
	if err := installCNI(t.Context(), d); err == nil || !strings.Contains(err.Error(), "not a plain name") {
		t.Errorf("path in CNI name: %v", err)
	}
	for _, c := range []struct {
		name string
		want bool
	}{{"flannel", true}, {"none", false}, {"", false}} {
		d := cniData(t, c.name, "10.244.0.0/16", nil)
		if got, _ := wantsCNI(d); got != c.want {
			t.Errorf("wantsCNI(%q) = %v", c.name, got)
		}
	}
}

func TestMasterInstallsCNI(t *testing.T) {
	og := newService(3, []int{3}, nil)
	h := newHarness(t, og)
	h.cfg.CNI = "flannel"
	h.exec.On("kubectl", systemtest.Reply{})
	if err := h.root.WriteFile("/usr/share/onekube/cni/flannel.yaml", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.run(); err != nil {
		t.Fatal(err)
	}
	if h.exec.Count("kubectl") != 1 {
		t.Errorf("kubectl calls %d", h.exec.Count("kubectl"))
	}
}
