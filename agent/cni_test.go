package agent

import (
	"errors"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/system/systemtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testManifest is a trimmed upstream manifest (testdata/cni).
func testManifest(t *testing.T, cni string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cni", cni+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

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
	if cni == "flannel" || cni == "calico" {
		if err := d.root.WriteFile("/usr/share/onekube/cni/"+cni+".yaml", testManifest(t, cni), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// TestPatchManifestGolden: the pod network set and the CNI pinned to the
// node's own address, on the upstream objects.
func TestPatchManifestGolden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, cni, pods string }{
		{"flannel", "flannel", "10.50.0.0/16"},
		{"flannel-ipv6", "flannel", "fd10::/56"},
		{"calico", "calico", "10.60.0.0/16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := patchManifest(c.cni, testManifest(t, c.cni), netip.MustParsePrefix(c.pods))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "cni", c.name+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from the patched manifest:\n%s", golden, got)
			}
			// Patching twice changes nothing more: a rerun applies the same.
			again, err := patchManifest(c.cni, got, netip.MustParsePrefix(c.pods))
			if err != nil || string(again) != string(got) {
				t.Errorf("second patch differs: %v\n%s", err, again)
			}
		})
	}
}

func TestPatchManifestRefusesWhatItCannotPin(t *testing.T) {
	t.Parallel()
	pods := netip.MustParsePrefix("10.244.0.0/16")
	for name, c := range map[string]struct{ cni, manifest, want string }{
		"no DaemonSet": {"flannel", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: kube-flannel-cfg}\ndata: {net-conf.json: '{}'}\n", "no DaemonSet/kube-flannel-ds"},
		"no ConfigMap": {"flannel", strings.SplitN(string(testManifest(t, "flannel")), "kind: ConfigMap", 2)[0], "no ConfigMap/kube-flannel-cfg"},
		"no container": {"calico", "kind: DaemonSet\napiVersion: apps/v1\nmetadata: {name: calico-node}\nspec: {template: {spec: {containers: []}}}\n", `no container "calico-node"`},
		"not YAML":     {"calico", "kind: [", "document 1"},
		"bad net-conf": {"flannel", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: kube-flannel-cfg}\ndata: {net-conf.json: '{'}\n", "net-conf.json"},
		"empty":        {"calico", "# nothing\n", "no DaemonSet/calico-node"},
	} {
		if _, err := patchManifest(c.cni, []byte(c.manifest), pods); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// FuzzPatchManifest: a manifest is a file of the image, but a hand-edited
// one must give an error, never a panic.
func FuzzPatchManifest(f *testing.F) {
	f.Add("flannel", "kind: ConfigMap\nmetadata: {name: kube-flannel-cfg}\ndata: {net-conf.json: '{}'}\n---\nkind: DaemonSet\nmetadata: {name: kube-flannel-ds}\n")
	f.Add("calico", "kind: DaemonSet\nmetadata: {name: calico-node}\nspec: {template: {spec: {containers: [{name: calico-node, env: 3}]}}}\n")
	f.Fuzz(func(t *testing.T, cni, manifest string) {
		_, _ = patchManifest(cni, []byte(manifest), netip.MustParsePrefix("10.244.0.0/16"))
	})
}

func TestInstallCNI(t *testing.T) {
	t.Parallel()
	exec := (&systemtest.FakeExec{}).On("kubectl", systemtest.Reply{})
	d := cniData(t, "flannel", "10.50.0.0/16", exec)
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
	if !strings.Contains(string(applied), "10.50.0.0/16") || strings.Contains(string(applied), "10.244.0.0/16") ||
		!strings.Contains(string(applied), "--iface=$(ONEKUBE_NODE_IP)") {
		t.Errorf("manifest not set up:\n%s", applied)
	}
	assertFileMode(t, d.root, "/var/lib/onekube/cni-flannel.yaml", 0o644)
}

func TestInstallCNIRetriesApply(t *testing.T) {
	t.Parallel()
	exec := (&systemtest.FakeExec{}).On("kubectl", systemtest.Reply{Code: 1, Stderr: "connection refused"}, systemtest.Reply{})
	d := cniData(t, "calico", "10.244.0.0/16", exec)
	if err := installCNI(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if exec.Count("kubectl") != 2 {
		t.Errorf("kubectl ran %d times, want 2", exec.Count("kubectl"))
	}
}

// TestInstallCNIHungKubectl: a kubectl that never returns is killed at its
// own deadline, and the retries stop at the command timeout.
func TestInstallCNIHungKubectl(t *testing.T) {
	t.Parallel()
	exec := (&systemtest.FakeExec{}).On("kubectl", systemtest.Reply{Do: func(c system.Cmd) error {
		return errors.New("kubectl: killed after its deadline, context deadline exceeded")
	}})
	d := cniData(t, "flannel", "10.244.0.0/16", exec)
	if err := installCNI(t.Context(), d); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("err = %v", err)
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
	if err := h.root.WriteFile("/usr/share/onekube/cni/flannel.yaml", testManifest(t, "flannel"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.run(); err != nil {
		t.Fatal(err)
	}
	if h.exec.Count("kubectl") != 2 { // the worker join RBAC, then the CNI
		t.Errorf("kubectl calls %d", h.exec.Count("kubectl"))
	}
}
