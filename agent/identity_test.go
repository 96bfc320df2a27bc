package agent

import (
	"strings"
	"testing"

	"github.com/onekube/onekube/agent/gate"
)

// The VM renames itself to its node name through OneGate during its
// bootstrap, and on every later boot when the names differ again (an
// operator's rename), never when they agree.
func TestVMRenamedToNodeNameOnEveryBoot(t *testing.T) {
	og := newService(5, []int{5}, nil)
	h := newHarness(t, og)
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, h.logs)
	}
	if got := og.vms[5].Name; got != "node-5" {
		t.Fatalf("VM name %q after bootstrap, want node-5 (actions %v)", got, og.actions)
	}
	if len(og.actions) != 1 || og.actions[0] != "5 rename map[name:node-5]" {
		t.Errorf("actions %v, want one rename of VM 5", og.actions)
	}
	// A later boot: bootstrap is done; names agree, so nothing is sent.
	if err := h.run(); err != nil {
		t.Fatalf("second boot: %v\n%s", err, h.logs)
	}
	if len(og.actions) != 1 {
		t.Errorf("actions %v after a boot with the names agreeing", og.actions)
	}
	og.vms[5].Name = "master_0_(service_7)" // an operator renamed it back
	if err := h.run(); err != nil {
		t.Fatalf("third boot: %v\n%s", err, h.logs)
	}
	if got := og.vms[5].Name; got != "node-5" || len(og.actions) != 2 {
		t.Errorf("VM name %q, actions %v after a boot with the names differing", got, og.actions)
	}
}

// A refused rename (a hardened onegate-server.conf) is a warning, never a
// failed bootstrap.
func TestRenameRefusedIsReportedNotFatal(t *testing.T) {
	og := newService(8, []int{3}, []int{8})
	og.publishMasterData(3, "abcdef.0123456789abcdef", "sha256:"+strings.Repeat("ab", 32))
	og.fail = func(op string, _ int) error {
		if op == "Action" {
			return gate.ErrForbidden
		}
		return nil
	}
	h := newHarness(t, og)
	if err := h.run(); err != nil {
		t.Fatalf("bootstrap failed on a refused rename: %v\n%s", err, h.logs)
	}
	if !strings.Contains(h.logs.String(), "the VM keeps its OpenNebula name") || !strings.Contains(h.logs.String(), "forbids") {
		t.Errorf("no warning about the refused rename:\n%s", h.logs)
	}
	if og.vms[8].Name != "worker_8" {
		t.Errorf("VM renamed to %q", og.vms[8].Name)
	}
}

// The kubelet's flags must carry this VM's provider ID; every way they can
// be wrong is named.
func TestCheckKubeletProviderID(t *testing.T) {
	cases := []struct {
		name, env string // env "" : no file
		want      string // error substring, "" for none
	}{
		{"no file yet", "", ""},
		{"this VM", `KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --node-ip=10.0.0.15 --provider-id=one://5"` + "\n", ""},
		{"missing", `KUBELET_KUBEADM_ARGS="--node-ip=10.0.0.15"` + "\n", "has no --provider-id"},
		{"another VM", `KUBELET_KUBEADM_ARGS="--provider-id=one://55"` + "\n", "another VM"},
		{"another scheme", `KUBELET_KUBEADM_ARGS="--provider-id=aws:///i-1"` + "\n", "another VM"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, newService(5, []int{5}, nil))
			if c.env != "" {
				if err := h.root.WriteFile(KubeletFlagsFile, []byte(c.env), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := checkKubeletProviderID(h.root, 5)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// nameVM needs a client that can act; one that cannot is an error, not a
// panic.
func TestNameVMWithoutActor(t *testing.T) {
	type readOnly struct{ OneGate }
	if _, err := nameVM(t.Context(), readOnly{}, 5, "a", "b"); err == nil {
		t.Error("no error from a client without actions")
	}
	var og OneGate = newService(5, []int{5}, nil)
	if _, ok := og.(gate.Actor); !ok {
		t.Fatal("the fake is no gate.Actor")
	}
	if renamed, err := nameVM(t.Context(), og, 5, "node-5", "node-5"); renamed || err != nil {
		t.Errorf("same name: renamed %t, %v", renamed, err)
	}
}
